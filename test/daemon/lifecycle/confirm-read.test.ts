// What a read makes of a change of unknown outcome it does not show yet (confirm-read.ts onItsWay,
// through answers.ts afterRead), pinned without Redis or HTTP. The case the model found (seed 11,
// path 287): the pipe was changed by hand after pipescaler's last read, then its change went out
// and its job stalled past api.timeout; the second attempt's settle read showed the hand's value.
// No answer says whether the hand came before the change (which then replaces it, still on its
// way) or after: the change is on its way all the same and is not sent again while it may be.
import { describe, expect, it } from 'vitest';
import type { PipeScaling } from '../../../src/api/index.js';
import { afterRead } from '../../../src/daemon/lifecycle/answers.js';
import { onItsWay } from '../../../src/daemon/lifecycle/confirm-read.js';
import { nextStep } from '../../../src/daemon/lifecycle/next-step.js';
import { type Situation } from '../../../src/daemon/lifecycle/steps.js';
import { parseRecord, refOf, type PipeRecord } from '../../../src/daemon/model/record.js';
import { demoPipe, oneOff, policy } from '../helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const pipe = demoPipe('orders-events', 'streams');
const REF = refOf(pipe);
const BASE = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const BY_HAND = { ...BASE, replicas: 3 };
const PEAK = { ...BASE, replicas: 8 };
const TIMING = { expectedMs: 90_000, limitMs: 10 * MIN, firstReadMs: 15_000 };
const ctx = { ref: REF, continuousReads: false, dryRun: false, timing: TIMING };
/** The change to 8 goes out at SENT_AT, its request's time 5 s. */
const SENT_AT = T0 + 2 * MIN;
const INTENT = {
  sent: { replicas: 8 },
  at: SENT_AT,
  code: 'in_flight',
  id: 'c8ca5f83-0000-4000-8000-000000000001',
  key: 'c8ca5f83-0000-4000-8000-000000000002',
  attempt: 1,
  until: SENT_AT + 5_000,
};

const running = (values: Partial<PipeScaling>) => ({
  kind: 'stream' as const,
  state: 'Running' as const,
  scaling: { concurrency: null, ...values } as PipeScaling,
  endpointIds: [],
});

const sit = (): Situation => ({
  pipe,
  policy: policy('streams', BASE, [oneOff('peak', T0 + MIN, T0 + 30 * MIN, { replicas: 8 })]),
  dryRun: false,
  pause: null,
  service: { state: 'running', at: T0 },
  serviceTrustMs: 30 * MIN,
  reconcileMs: 30 * MIN,
  readDueAfterMs: 30 * MIN,
  stateLost: null,
  asker: 'tick',
});

/** Read at T0 at 2; the intent of the change to 8 stored, its answer never recorded (stalled). */
const stalled: PipeRecord = {
  ...parseRecord({}).rec,
  kind: 'stream',
  state: 'Running',
  applied: BASE,
  lastApplied: BASE,
  lastReadAt: T0,
  desired: PEAK,
  ref: REF,
  unsettled: INTENT,
};

describe('a change of unknown outcome that its settle read does not show', () => {
  it('keeps the values the read shows "not yet", whatever they are, beside what the pipe held before it', () => {
    const c = onItsWay(INTENT, null, BASE, BY_HAND, SENT_AT + 6_000, TIMING);
    expect(c).toMatchObject({ target: { replicas: 8 }, sentAt: SENT_AT, lastSentAt: SENT_AT, outcomeUnknown: true });
    expect(c.notYet).toEqual([BASE, BY_HAND]);
    // its first confirmation read at the expected propagation from its send
    expect(c.dueAt).toBe(SENT_AT + 90_000);
    // the old values only: nothing more to keep
    expect(onItsWay(INTENT, null, BASE, BASE, SENT_AT + 6_000, TIMING).notYet).toEqual([BASE]);
  });

  it('changed by hand before it went out: the settle read shows the hand, the hand is drift once, the change is not sent again', () => {
    // the job's second attempt, past the request's time: the stage is unsettled, its step a read
    expect(nextStep(stalled, sit(), SENT_AT + 6_000).step).toEqual({ do: 'read', why: 'settle' });
    const t = afterRead(stalled, running(BY_HAND), SENT_AT + 6_000, ctx);
    // someone changed the pipe by hand (before or after the change: no answer says which)
    expect(t.drift).toEqual({ expected: BASE, actual: BY_HAND });
    expect(t.landed).toBeUndefined();
    expect(t.write.confirming).toMatchObject({ target: { replicas: 8 }, sentAt: SENT_AT, notYet: [BASE, BY_HAND] });
    // decided again from what the platform has: the change on its way counts as made
    const after: PipeRecord = { ...stalled, ...t.write, desired: PEAK };
    expect(nextStep(after, sit(), SENT_AT + 7_000).step).toEqual({ do: 'wait', reason: 'confirming' });
    // its confirmation read while it propagates shows the hand again: no second drift, still waiting
    const again = afterRead(after, running(BY_HAND), SENT_AT + 90_000, ctx);
    expect(again.drift).toBeNull();
    expect(again.next).toEqual({ then: 'nothing' });
    const later: PipeRecord = { ...after, ...again.write };
    expect(nextStep(later, sit(), SENT_AT + 91_000).step).toMatchObject({ do: 'wait' });
    // then it lands: the daemon's own change, late, confirmed from its send, no drift
    const landed = afterRead(later, running(PEAK), SENT_AT + 2 * MIN, ctx);
    expect(landed.landed).toEqual({ sent: { replicas: 8 }, at: SENT_AT, id: INTENT.id, key: INTENT.key });
    expect(landed.confirmation).toMatchObject({ is: 'confirmed', sentAt: SENT_AT, outcomeUnknown: true });
    expect(landed.drift).toBeNull();
  });

  it("a value neither the old, the hand's nor the target at a later read: changed by hand again, drift, no longer pipescaler's to confirm", () => {
    const t = afterRead(stalled, running(BY_HAND), SENT_AT + 6_000, ctx);
    const after: PipeRecord = { ...stalled, ...t.write, desired: PEAK };
    const other = afterRead(after, running({ ...BASE, replicas: 5 }), SENT_AT + 90_000, ctx);
    expect(other.drift).not.toBeNull();
    expect(other.write.confirming).toBeNull();
  });
});
