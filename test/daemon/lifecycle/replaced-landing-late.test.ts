// A change of unknown outcome (A: its client timed out) that a newer change (B) replaced in the
// record before any read showed it, carried out by the platform after B: the next read shows A's
// values. They are the daemon's own, landing late: never drift (so never kept as a change made by
// hand under onDrift hold or adoptAsFloor), reported landed late once, and the pipe decided again
// so B's target goes out again. The record keeps A's values (`replaced`) until UNSETTLED_MS after
// its send, a few at most. Pure: answers.ts afterRead, unsettled.ts intentWrite.
import { describe, expect, it } from 'vitest';
import type { PipeScaling } from '../../../src/api/index.js';
import { afterRead, afterSentChange } from '../../../src/daemon/lifecycle/answers.js';
import {
  afterNotCarriedOut,
  intentWrite,
  newIntent,
  REPLACED_KEPT,
  UNSETTLED_MS,
} from '../../../src/daemon/lifecycle/unsettled.js';
import { parseRecord, refOf, type PipeRecord, type Unsettled } from '../../../src/daemon/model/record.js';
import { demoPipe } from '../helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const pipe = demoPipe('orders-events', 'streams');
const REF = refOf(pipe);
const TIMING = { expectedMs: 3_000, limitMs: 2 * MIN, firstReadMs: 1_000 };
const ctx = { ref: REF, continuousReads: false, dryRun: false, timing: TIMING };
const BASE = { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 };

const running = (values: Partial<PipeScaling>) => ({
  kind: 'stream' as const,
  state: 'Running' as const,
  scaling: { concurrency: null, ...BASE, ...values } as PipeScaling,
  endpointIds: [],
});

/** A: replicas 8, sent at T0 + 1 min, its client timed out: outcome unknown. */
const A: Unsettled = {
  sent: { replicas: 8 },
  at: T0 + MIN,
  code: 'API_TIMEOUT',
  id: 'a0000000-0000-4000-8000-000000000001',
  key: 'a0000000-0000-4000-8000-000000000002',
  attempt: 1,
};
const landedA = { sent: A.sent, at: A.at, id: A.id, key: A.key };

/** At 3, read at T0; A's settle read at T0 + 1.5 min shows 3 (A on its way). */
const atBase: PipeRecord = {
  ...parseRecord({}).rec,
  kind: 'stream',
  state: 'Running',
  applied: BASE,
  lastApplied: BASE,
  lastReadAt: T0 + 1.5 * MIN,
  seenAt: T0,
  ref: REF,
  unsettled: A,
};

/** The record after `t`'s writes. */
const then = (rec: PipeRecord, t: { write: Partial<PipeRecord> }): PipeRecord => ({ ...rec, ...t.write });

/** B (replicas 6) sent at `at` after A's limit passed: its intent takes A's place, its 200 shows it in force. */
function sendB(rec: PipeRecord, at: number): PipeRecord {
  const intent = newIntent(rec, { sent: { replicas: 6 }, key: 'b-key', at, attempt: 1, timeoutMs: 10_000 });
  const stored = then(rec, { write: intentWrite(rec, intent).write });
  const answered = afterSentChange(stored, running({ replicas: 6 }), { replicas: 6 }, at + 500, {
    ref: REF,
    sentAt: at,
    timing: TIMING,
  });
  return then(stored, answered);
}

/** B confirmed in force at T0 + 5 min; A, replaced, kept. */
const afterB = sendB(atBase, T0 + 5 * MIN);

describe('a change of unknown outcome replaced by a newer one, landing after it', () => {
  it("B's intent keeps A's values in the record; B's 200 leaves them there", () => {
    expect(afterB.unsettled).toBeNull();
    expect(afterB.confirming).toBeNull();
    expect(afterB.lastApplied).toMatchObject({ replicas: 6 });
    expect(afterB.replaced).toEqual([A]);
  });

  it('the read that shows A: not drift, landed late by its key, decided again; A is no longer kept', () => {
    const t = afterRead(afterB, running({ replicas: 8 }), T0 + 8 * MIN, ctx);
    expect(t.drift).toBeNull();
    expect(t.landedReplaced).toEqual(landedA);
    expect(t.landed).toBeUndefined();
    expect(t.write.desired).toBeNull();
    expect(t.next).toEqual({ then: 'evaluate' });
    expect(t.write.replaced).toEqual([]);
    // A's values are the daemon's own: the reference until B's target is sent again
    expect(t.write.lastApplied).toMatchObject({ replicas: 8 });
    // a second read before B's target goes again: neither drift nor a second landing
    const again = afterRead(then(afterB, t), running({ replicas: 8 }), T0 + 9 * MIN, ctx);
    expect(again.drift).toBeNull();
    expect(again.landedReplaced).toBeUndefined();
  });

  it('while B is still being confirmed (A never shown on its way): not drift, and B stays on its way', () => {
    const intent = newIntent(atBase, {
      sent: { replicas: 6 },
      key: 'b-key',
      at: T0 + 5 * MIN,
      attempt: 1,
      timeoutMs: 10_000,
    });
    const stored = then(atBase, { write: intentWrite(atBase, intent).write });
    // B's 200 shows 3: B is being confirmed
    const sent = then(
      stored,
      afterSentChange(stored, running({}), { replicas: 6 }, T0 + 5 * MIN + 500, {
        ref: REF,
        sentAt: T0 + 5 * MIN,
        timing: TIMING,
      }),
    );
    expect(sent.confirming?.target).toEqual({ replicas: 6 });
    const t = afterRead(sent, running({ replicas: 8 }), T0 + 5 * MIN + 3_000, ctx);
    expect(t.drift).toBeNull();
    expect(t.landedReplaced).toEqual(landedA);
    expect(t.write.confirming).toMatchObject({ target: { replicas: 6 } });
  });

  it('past UNSETTLED_MS after its send A may no longer land: its values then are drift', () => {
    const t = afterRead(afterB, running({ replicas: 8 }), A.at + UNSETTLED_MS + 1, ctx);
    expect(t.landedReplaced).toBeUndefined();
    expect(t.drift).toMatchObject({ expected: { replicas: 6 }, actual: { replicas: 8 } });
    expect(t.write.replaced).toEqual([]);
  });

  it('a read that shows only some of what A sent is not A: drift', () => {
    const both = { ...afterB, replaced: [{ ...A, sent: { replicas: 8, replicaCpuMillicores: 1000 } }] };
    const t = afterRead(both, running({ replicas: 8 }), T0 + 8 * MIN, ctx);
    expect(t.landedReplaced).toBeUndefined();
    expect(t.drift).toMatchObject({ actual: { replicas: 8 } });
  });

  it('a field A did not send, changed by hand meanwhile, is drift all the same', () => {
    const t = afterRead(afterB, running({ replicas: 8, replicaMemoryGb: 4 }), T0 + 8 * MIN, ctx);
    expect(t.landedReplaced).toEqual(landedA);
    expect(t.drift).toMatchObject({ expected: { replicaMemoryGb: 2 }, actual: { replicaMemoryGb: 4 } });
  });

  it("shown first by a newer change's answer, in a field that change did not send: not drift, decided again", () => {
    const memory = { ...A, sent: { replicaMemoryGb: 4 } };
    const rec = { ...afterB, replaced: [memory] };
    const t = afterSentChange(rec, running({ replicas: 7, replicaMemoryGb: 4 }), { replicas: 7 }, T0 + 8 * MIN, {
      ref: REF,
      sentAt: T0 + 8 * MIN - 500,
      timing: TIMING,
    });
    expect(t.drift).toBeNull();
    expect(t.landedReplaced).toEqual({ ...landedA, sent: { replicaMemoryGb: 4 } });
    expect(t.next).toEqual({ then: 'evaluate' });
    expect(t.write.replaced).toEqual([]);
    expect(t.write.lastApplied).toMatchObject({ replicas: 7, replicaMemoryGb: 4 });
  });

  it('values the pipe already showed are nothing new: not reported, A still kept', () => {
    const at8 = { ...afterB, applied: { ...BASE, replicas: 8 }, lastApplied: { ...BASE, replicas: 8 } };
    const t = afterRead(at8, running({ replicas: 8 }), T0 + 8 * MIN, ctx);
    expect(t.landedReplaced).toBeUndefined();
    expect(t.drift).toBeNull();
    expect(t.write.replaced).toBeUndefined();
  });
});

describe('the replaced changes a record keeps', () => {
  const kept = (n: number, at: number): Unsettled[] =>
    Array.from({ length: n }, (_, i) => ({ ...A, at: at + i, key: `k${i}`, id: `i${i}` }));

  it(`at most ${REPLACED_KEPT}, the oldest dropped, and none past UNSETTLED_MS after its send`, () => {
    const now = T0 + 10 * MIN;
    const full = { ...atBase, replaced: kept(REPLACED_KEPT, T0) };
    const intent = newIntent(full, { sent: { replicas: 6 }, key: 'b-key', at: now, attempt: 1, timeoutMs: 10_000 });
    const { write, replaced } = intentWrite(full, intent);
    expect(replaced).toEqual(A);
    expect(write.replaced).toEqual([...kept(REPLACED_KEPT, T0).slice(1), A]);
    const old = { ...atBase, replaced: kept(1, now - UNSETTLED_MS - 1) };
    expect(intentWrite(old, { ...intent, at: now }).write.replaced).toEqual([A]);
  });

  it('a send of the same change again replaces nothing and keeps nothing more', () => {
    const intent = newIntent(atBase, { sent: A.sent, key: A.key!, at: T0 + 2 * MIN, attempt: 2, timeoutMs: 10_000 });
    const { write, replaced } = intentWrite(atBase, intent);
    expect(replaced).toBeNull();
    expect(write).toEqual({ unsettled: intent });
  });

  it('the newer change not carried out (a 429): A stays kept, though no longer the unsettled change', () => {
    const intent = newIntent(atBase, { sent: { replicas: 6 }, key: 'b', at: T0 + 5 * MIN, attempt: 1, timeoutMs: 1 });
    const { write, replaced } = intentWrite(atBase, intent);
    const stored = then(atBase, { write });
    expect({ ...stored, unsettled: afterNotCarriedOut(stored, replaced) }).toMatchObject({
      unsettled: null,
      replaced: [A],
    });
  });

  it('a record stored before the field was kept reads with none; a stored one reads back', () => {
    expect(parseRecord({ unsettled: JSON.stringify(A) }).rec.replaced).toEqual([]);
    const r = parseRecord({ replaced: JSON.stringify([A]) });
    expect(r.invalid).toEqual([]);
    expect(r.rec.replaced).toEqual([A]);
  });
});
