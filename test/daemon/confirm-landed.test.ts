// A change of unknown outcome that lands (a read shows it) after an older change that was still
// being confirmed: the older target is no longer on its way, the platform holds the newer one. The
// record must not go on confirming the older target (status would name a change the platform no
// longer has, and decide() would decide against it). A read showing the values in force before the
// change was sent settles it so, without reporting it landed late (nothing says it landed). Pure, no Redis.
import { describe, expect, it } from 'vitest';
import { afterRead } from '../../src/daemon/lifecycle/answers.js';
import { parseRecord, refOf, type PipeRecord } from '../../src/daemon/model/record.js';
import { accountOf } from '../../src/daemon/views/pipe-account.js';
import { demoPipe } from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
const REF = refOf(demoPipe('orders-events', 'streams'));
const BASE = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const TIMING = { expectedMs: MIN, limitMs: 10 * MIN, firstReadMs: 15_000 };
const CTX = { ref: REF, continuousReads: false, dryRun: false, timing: TIMING };

/** Read at the baseline; the window's scale-up to 6 answered 200 at T0 and not read in force; the
 *  scale-down after it timed out at T0 + 20 s. */
const rec: PipeRecord = {
  ...parseRecord({}).rec,
  kind: 'stream',
  state: 'Running',
  applied: BASE,
  lastApplied: { ...BASE, replicas: 6 },
  lastReadAt: T0,
  ref: REF,
  confirming: {
    target: { replicas: 6 },
    sentAt: T0,
    lastSentAt: T0,
    dueAt: T0 + MIN,
    reads: 0,
    resends: 0,
    notYet: [BASE],
    unconfirmedAt: null,
  },
  unsettled: { sent: { replicas: 2 }, at: T0 + 20 * SEC, code: 'API_TIMEOUT' },
};
const answer = (scaling: typeof BASE) => ({
  kind: 'stream' as const,
  state: 'Running' as const,
  scaling: { ...scaling, concurrency: null },
  endpointIds: [],
});

describe('a change of unknown outcome landing after an older one being confirmed', () => {
  it('the read that shows it ends the older confirmation: nothing on its way, status matches the platform', () => {
    const now = T0 + 40 * SEC;
    const t = afterRead(rec, answer(BASE), now, CTX);
    // settled, though not reported landed late: the values it sent are the ones in force before it
    expect(t.landed).toBeUndefined();
    expect(t.drift).toBeNull();
    expect(t.write.unsettled).toBeNull();
    expect(t.write.confirming).toBeNull();
    const after = { ...rec, ...t.write };
    expect(accountOf(after, now)).toEqual({
      platform: { values: BASE, state: 'Running', at: now },
      change: null,
    });
  });

  it('a field of the older change that the newer did not send is still on its way', () => {
    const both: PipeRecord = {
      ...rec,
      confirming: { ...rec.confirming!, target: { replicas: 6, replicaCpuMillicores: 1000 } },
    };
    const t = afterRead(both, answer(BASE), T0 + 40 * SEC, CTX);
    expect(t.write.confirming).toMatchObject({ target: { replicas: 2, replicaCpuMillicores: 1000 } });
  });
});
