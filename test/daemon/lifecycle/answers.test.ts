// What an answer makes of the record's last confirmation (answers.ts) for an object-storage pipe,
// whose concurrency 0 is a value the platform runs (sized from the service's memory), not only its
// transient answer right after a change. Pure: records, answers and instants in.
import { describe, expect, it } from 'vitest';
import type { PipeScaling, PipeState } from '../../../src/api/index.js';
import { afterRead, afterSentChange } from '../../../src/daemon/lifecycle/answers.js';
import { parseRecord, refOf, type Confirming, type PipeRecord } from '../../../src/daemon/model/record.js';
import { judgeVerdict } from '../../../src/policy/verdict.js';
import { demoPipe } from '../helpers.js';

const B = Date.parse('2026-11-23T09:00:00Z');
const MIN = 60_000;
const REF = refOf(demoPipe('nightly-s3', 'objects'));
const TIMING = { expectedMs: 3_000, limitMs: 10 * MIN, firstReadMs: 1_000 };
const ctx = { ref: REF, continuousReads: false, dryRun: false, timing: TIMING };
const send = (sentAt: number) => ({ ref: REF, sentAt, timing: TIMING });
/** A start at B that wants concurrency 34. */
const UP = { boundary: B, windows: ['w2'], target: { concurrency: 34 }, deadline: B + 10 * MIN };

const answer = (concurrency: number | null, state: PipeState = 'Running') => ({
  kind: 'objectStorage' as const,
  state,
  scaling: { concurrency } as PipeScaling,
  endpointIds: [],
});

/** Confirmed at 34 a minute before B by a read. */
const at34 = (over: Partial<PipeRecord> = {}): PipeRecord => ({
  ...parseRecord({}).rec,
  kind: 'objectStorage',
  state: 'Running',
  applied: { concurrency: 34 },
  lastApplied: { concurrency: 34 },
  lastReadAt: B - MIN,
  seenAt: B - 10 * MIN,
  desired: { concurrency: 34 },
  confirmed: { values: { concurrency: 34 }, at: B - MIN, seen: B - MIN },
  ref: REF,
  ...over,
});

/** The scale-down to the floor at the window before's end, answered 200 while 34 still ran. */
const downToFloor: Confirming = {
  target: { concurrency: 0 },
  sentAt: B - 20_000,
  lastSentAt: B - 20_000,
  dueAt: B - 17_000,
  reads: 0,
  resends: 0,
  notYet: [{ concurrency: 34 }],
  unconfirmedAt: null,
};

/** The record after `t`'s writes. */
const then = (rec: PipeRecord, t: { write: Partial<PipeRecord> }): PipeRecord => ({ ...rec, ...t.write });

describe("a 0 is the pipe's concurrency in force unless a change of ours may show it for a moment", () => {
  it('the change back up answered at 0, the scale-down to the floor in force: a start judged by the read that shows 34', () => {
    // the fleet chaos run's "met not shown": the change to 34 sent 5 s before B, its 200 shows the
    // floor in force; a read shows 34 2 s after B
    const down = at34({ confirming: downToFloor, desired: { concurrency: 34 } });
    const answered = afterSentChange(down, answer(0), { concurrency: 34 }, B - 5_000, send(B - 5_100));
    expect(answered.write.confirmed).toMatchObject({ lowest: { concurrency: 0 } });
    const shown = afterRead(then(down, answered), answer(34), B + 2_000, ctx);
    expect(judgeVerdict(UP, shown.write.confirmed ?? null, B + 30_000, { reported: { concurrency: 34 } })).toEqual({
      verdict: 'late',
      lateMs: 2_000,
      confirmedAt: B + 2_000,
    });
  });

  it('read at 0 with nothing of ours on its way, in a state that takes no scaling: the 0 lowers it all the same', () => {
    const stopped = afterRead(at34(), answer(0, 'Stopped'), B - 30_000, ctx);
    const rec = then(at34(), stopped);
    expect(rec.confirmed).toMatchObject({ lowest: { concurrency: 0 } });
    const shown = afterRead({ ...rec, desired: { concurrency: 34 } }, answer(34), B + 2_000, ctx);
    expect(judgeVerdict(UP, shown.write.confirmed ?? null, B + 30_000, { reported: { concurrency: 34 } })).toEqual({
      verdict: 'late',
      lateMs: 2_000,
      confirmedAt: B + 2_000,
    });
  });

  it("a 0 in the answer to a change of ours to other values keeps what was known: the live API's transient answer", () => {
    // confirmed at 20 a minute before B, the change to 30 answered at 0, a read shows 30 after B:
    // the pipe held 20 or more all along, and a start at B that wants 20 is met
    const at20 = at34({ applied: { concurrency: 20 }, desired: { concurrency: 30 } });
    const rec = { ...at20, confirmed: { values: { concurrency: 20 }, at: B - MIN, seen: B - MIN } };
    const answered = afterSentChange(rec, answer(0), { concurrency: 30 }, B - 5_000, send(B - 5_100));
    expect(answered.write.confirmed).toBeUndefined();
    const shown = afterRead(then(rec, answered), answer(30), B + 2_000, ctx);
    const wants20 = { ...UP, target: { concurrency: 20 } };
    expect(judgeVerdict(wants20, shown.write.confirmed ?? null, B + 30_000, { reported: { concurrency: 30 } })).toEqual(
      { verdict: 'met', lateMs: 0, confirmedAt: B - MIN },
    );
  });
});

describe('a change whose answer was lost with the replica that sent it', () => {
  it('found in force by its settle read: the confirmation says since when it may have been, and the start is no verdict', () => {
    // at the floor, the change to 34 for the start at B sent 5 s before it; its sender killed
    const atFloor = at34({
      applied: { concurrency: 0 },
      lastApplied: { concurrency: 0 },
      confirmed: { values: { concurrency: 0 }, at: B - MIN, seen: B - MIN },
      unsettled: { sent: { concurrency: 34 }, at: B - 5_000, code: 'in_flight', until: B },
    });
    const found = afterRead(atFloor, answer(34), B + 9_000, ctx);
    expect(found.write.confirmed).toMatchObject({
      values: { concurrency: 34 },
      at: B + 9_000,
      outcomeUnknownFrom: B - 5_000,
    });
    expect(
      judgeVerdict({ ...UP, deadline: B + 5_000 }, found.write.confirmed ?? null, B + 5_000, { final: true }),
    ).toEqual({
      verdict: 'excluded',
      reason: 'outcome_unknown',
    });
  });
});
