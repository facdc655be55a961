// After Redis lost the daemon's state, a read of a record rebuilt since cannot tell a change the
// daemon sent before the loss (its record gone with the state, landing until UNSETTLED_MS after)
// from one made by hand: answers.ts adopts what it shows as the reference, never drift. Outside
// that span, or for a record read before the loss, a difference is drift as always. Without Redis.
import { describe, expect, it } from 'vitest';
import type { PipeScaling } from '../../../src/api/index.js';
import { afterRead, afterSentChange, UNSETTLED_MS } from '../../../src/daemon/lifecycle/answers.js';
import { parseRecord, refOf, type PipeRecord } from '../../../src/daemon/model/record.js';
import { demoPipe } from '../helpers.js';

const LOST = Date.parse('2026-11-28T10:00:00Z');
const pipe = demoPipe('orders-events', 'streams');
const timing = { expectedMs: 0, limitMs: 30_000, firstReadMs: 1_000 };
const ctx = { ref: refOf(pipe), continuousReads: false, dryRun: false, timing, lostAt: LOST };
const running = (replicas: number) => ({
  kind: 'stream' as const,
  state: 'Running' as const,
  scaling: { concurrency: null, replicas, replicaCpuMillicores: 250, replicaMemoryGb: 1 } as PipeScaling,
  endpointIds: [],
});
const AT2 = { replicas: 2, replicaCpuMillicores: 250, replicaMemoryGb: 1 };

/** A record whose first read (at `seenAt`) showed replicas 2. */
const seen = (seenAt: number): PipeRecord => ({
  ...parseRecord({}).rec,
  kind: 'stream',
  state: 'Running',
  ref: refOf(pipe),
  applied: AT2,
  lastApplied: AT2,
  lastReadAt: seenAt,
  seenAt,
});

describe('a difference from the reference right after a state loss', () => {
  it('a read of a record rebuilt after the loss, within UNSETTLED_MS of it: adopted, not drift', () => {
    const t = afterRead(seen(LOST + 30_000), running(4), LOST + 3 * 60_000, ctx);
    expect(t.drift).toBeNull();
    expect(t.write.lastApplied).toMatchObject({ replicas: 4 });
    expect(t.next).toEqual({ then: 'evaluate' });
  });

  it('past UNSETTLED_MS after the loss: drift', () => {
    const t = afterRead(seen(LOST + 30_000), running(4), LOST + UNSETTLED_MS + 1, ctx);
    expect(t.drift).toMatchObject({ expected: { replicas: 2 }, actual: { replicas: 4 } });
  });

  it('a record read before the loss (a Redis that kept it): drift', () => {
    const t = afterRead(seen(LOST - 60_000), running(4), LOST + 60_000, ctx);
    expect(t.drift).toMatchObject({ actual: { replicas: 4 } });
  });

  it("a change's answer showing a field it did not send changed: adopted within the span", () => {
    const rec = seen(LOST + 30_000);
    const answer = { ...running(4), scaling: { ...running(4).scaling, replicaMemoryGb: 2 } };
    const send = { ref: refOf(pipe), sentAt: LOST + 60_000, timing, lostAt: LOST };
    expect(afterSentChange(rec, answer, { replicas: 4 }, LOST + 60_000, send).drift).toBeNull();
    const later = { ...send, sentAt: LOST + UNSETTLED_MS + 1 };
    expect(afterSentChange(rec, answer, { replicas: 4 }, LOST + UNSETTLED_MS + 1, later).drift).not.toBeNull();
  });
});
