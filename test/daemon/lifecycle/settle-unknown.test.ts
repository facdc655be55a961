// A change whose answer its sender never recorded (its replica SIGKILLed, or stalled past its
// request's time), settled by a read that shows its values in force while something else explains
// them: an earlier send of the same target still being confirmed, whose 200 was its outcome. Its
// own 200 may have come (to a process that died) or not; no answer says. The read says so, naming
// its Idempotency-Key (an outcome-unknown record), rather than staying silent: the chaos run found
// changes answered 200 just after a SIGKILL with no audit line at all. So does the send of a later
// change whose intent takes the place of one no read showed. Pure: answers.ts afterRead, unsettled.ts
// replacedUnknown.
import { describe, expect, it } from 'vitest';
import type { PipeScaling } from '../../../src/api/index.js';
import { afterRead, UNSETTLED_MS } from '../../../src/daemon/lifecycle/answers.js';
import { parseRecord, refOf, type PipeRecord } from '../../../src/daemon/model/record.js';
import { afterNotCarriedOut, replacedUnknown } from '../../../src/daemon/lifecycle/unsettled.js';
import { demoPipe } from '../helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const pipe = demoPipe('orders-events', 'streams');
const REF = refOf(pipe);
const BASE = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const PEAK = { ...BASE, replicas: 8 };
const TIMING = { expectedMs: 3_000, limitMs: 30_000, firstReadMs: 3_000 };
const ctx = { ref: REF, continuousReads: false, dryRun: false, timing: TIMING };
/** The first send of 8, answered 200 at T0 (its outcome reported then), still being confirmed. */
const FIRST_AT = T0;
/** The re-send of 8 after the limit, its intent stored, its sender killed. */
const RESENT_AT = T0 + 31_000;
const INTENT = {
  sent: { replicas: 8 },
  at: RESENT_AT,
  code: 'in_flight',
  id: 'c8ca5f83-0000-4000-8000-000000000011',
  key: 'c8ca5f83-0000-4000-8000-000000000012',
  attempt: 1,
  until: RESENT_AT + 10_000,
};

const running = (values: Partial<PipeScaling>) => ({
  kind: 'stream' as const,
  state: 'Running' as const,
  scaling: { concurrency: null, ...values } as PipeScaling,
  endpointIds: [],
});

const resent: PipeRecord = {
  ...parseRecord({}).rec,
  kind: 'stream',
  state: 'Running',
  applied: BASE,
  lastApplied: PEAK,
  lastReadAt: RESENT_AT - 1_000,
  desired: PEAK,
  ref: REF,
  confirming: {
    target: { replicas: 8 },
    sentAt: FIRST_AT,
    lastSentAt: FIRST_AT,
    dueAt: null,
    reads: 3,
    resends: 0,
    unconfirmedAt: FIRST_AT + 30_000,
    notYet: [BASE],
  },
  unsettled: INTENT,
};

describe('the settle read of a change whose sender died before recording its answer', () => {
  it('shows its values in force, explained by an earlier send of them: outcome unknown, by its key, not landed', () => {
    const t = afterRead(resent, running(PEAK), INTENT.until + 1_000, ctx);
    expect(t.landed).toBeUndefined();
    expect(t.unknown).toEqual({ sent: { replicas: 8 }, at: RESENT_AT, id: INTENT.id, key: INTENT.key });
    expect(t.write.unsettled).toBeNull();
    expect(t.drift).toBeNull();
  });

  it('shows nothing else explains them: landed late, once, and no outcome-unknown record', () => {
    const t = afterRead({ ...resent, confirming: null }, running(PEAK), INTENT.until + 1_000, ctx);
    expect(t.landed).toEqual({ sent: { replicas: 8 }, at: RESENT_AT, id: INTENT.id, key: INTENT.key });
    expect(t.unknown).toBeUndefined();
  });

  it('never shown until it may no longer land: forgotten with an outcome-unknown record', () => {
    const t = afterRead(resent, running(BASE), RESENT_AT + UNSETTLED_MS + 1, ctx);
    expect(t.landed).toBeUndefined();
    expect(t.unknown).toMatchObject({ key: INTENT.key });
    expect(t.write.unsettled).toBeNull();
  });

  it('no change of unknown outcome: nothing to report', () => {
    const t = afterRead({ ...resent, unsettled: null }, running(PEAK), INTENT.until + 1_000, ctx);
    expect(t.landed).toBeUndefined();
    expect(t.unknown).toBeUndefined();
  });

  it('replaced by the intent of a later change before any read showed it: that change names it, by its key', () => {
    // read since (on its way, not shown), its limit passed: the next target's change goes out
    const shownNot = { ...resent, lastReadAt: INTENT.until + 1_000 };
    expect(replacedUnknown(shownNot, 'a-later-change')).toEqual(INTENT);
    // the same change sent again (its key) replaces nothing; nor does a record with none
    expect(replacedUnknown(shownNot, INTENT.key)).toBeNull();
    expect(replacedUnknown({ ...shownNot, unsettled: null }, 'a-later-change')).toBeNull();
  });

  it('replaced, and the later change not carried out (a 429, or never written): given up once, not back for the retry', () => {
    const shownNot = { ...resent, lastReadAt: INTENT.until + 1_000 };
    const replaced = replacedUnknown(shownNot, 'a-later-change');
    // its line was written when the intent replaced it: the record does not get it back, so the
    // retry's intent replaces nothing and writes no second line
    const after = { ...shownNot, unsettled: afterNotCarriedOut(shownNot, replaced) };
    expect(after.unsettled).toBeNull();
    expect(replacedUnknown(after, 'a-later-change')).toBeNull();
    // none replaced: what the record held before the intent comes back
    const held = { ...shownNot, unsettled: { ...INTENT, key: 'a-later-change' } };
    expect(afterNotCarriedOut(held, replacedUnknown(held, 'a-later-change'))).toEqual(held.unsettled);
  });
});
