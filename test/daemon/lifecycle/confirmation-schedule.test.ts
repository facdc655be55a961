// When a change's confirmation reads go (src/daemon/lifecycle/confirmation.ts): a probe at 3/4 of the expected
// actuation, the confirming read at it, then a back-off up to the limit; one read at firstRead when
// the expectation is within it. And which confirmations are actuation samples: not one whose read
// came later than its tolerance after it was due.
import { describe, expect, it } from 'vitest';
import {
  actuationSample,
  confirmationReads,
  confirmTiming,
  firstDueAt,
  FIRST_READ_MS,
  nextDueAt,
  PROBE_SHARE,
} from '../../../src/daemon/lifecycle/confirmation.js';

const SEC = 1_000;
const MIN = 60 * SEC;
const T0 = Date.parse('2026-11-23T10:00:00Z');
const timing = (expectedMs: number, firstReadMs = 15 * SEC, limitMs = 10 * MIN) =>
  confirmTiming({ expectedMs, maxMs: limitMs, minSamples: 20, firstReadMs });
const reads = (expectedMs: number, firstReadMs?: number) =>
  [...confirmationReads(T0, timing(expectedMs, firstReadMs))].map((at) => (at - T0) / SEC);

describe('the confirmation schedule', () => {
  it('a probe at 3/4 of the expected actuation, the confirming read at it, then a back-off from a quarter of it, the last at the limit', () => {
    expect(PROBE_SHARE).toBe(0.75);
    expect(reads(3 * MIN)).toEqual([135, 180, 225, 315, 495, 600]);
    expect(firstDueAt(T0, timing(3 * MIN))).toBe(T0 + 135 * SEC);
  });

  it('an expectation within firstRead (none configured, none measured): one read at firstRead, then the back-off from it', () => {
    expect(reads(0)).toEqual([15, 30, 60, 120, 240, 480, 600]);
    expect(reads(10 * SEC)).toEqual(reads(0));
    // a probe that would come sooner than firstRead goes at firstRead, the confirming read at E
    expect(reads(18 * SEC).slice(0, 3)).toEqual([15, 18, 33]);
  });

  it('firstRead: default 15 s, the soonest read after a send; compressed tenfold in the bench', () => {
    expect(FIRST_READ_MS).toBe(15 * SEC);
    expect(confirmTiming({ expectedMs: 0, maxMs: 10 * MIN, minSamples: 20 }).firstReadMs).toBe(FIRST_READ_MS);
    expect(reads(0, 1_500).slice(0, 3)).toEqual([1.5, 3, 6]);
    expect(reads(18 * SEC, 1_500).slice(0, 3)).toEqual([13.5, 18, 22.5]);
  });

  it('at most two reads by the expected actuation, whatever it is', () => {
    for (const e of [0, 5 * SEC, 15 * SEC, 20 * SEC, MIN, 3 * MIN, 7 * MIN])
      expect(reads(e).filter((s) => s * SEC <= Math.max(e, 15 * SEC)).length).toBeLessThanOrEqual(2);
  });

  it('the read after one that found it not in force: the next of the schedule after it (a late read stands for those it passed); none past the limit', () => {
    const t = timing(3 * MIN);
    const c = { lastSentAt: T0 };
    expect(nextDueAt(c, T0 + 135 * SEC, t)).toBe(T0 + 180 * SEC);
    expect(nextDueAt(c, T0 + 150 * SEC, t)).toBe(T0 + 180 * SEC);
    expect(nextDueAt(c, T0 + 180 * SEC, t)).toBe(T0 + 225 * SEC);
    expect(nextDueAt(c, T0 + 400 * SEC, t)).toBe(T0 + 495 * SEC);
    expect(nextDueAt(c, T0 + 599 * SEC, t)).toBe(T0 + 600 * SEC);
    expect(nextDueAt(c, T0 + 600 * SEC, t)).toBeNull();
  });
});

describe('actuation samples', () => {
  const c = { sentAt: T0, at: T0 + 200 * SEC, dueAt: T0 + 180 * SEC };
  it('a confirmation whose read came within its tolerance of its due instant is a sample of sent to confirmed', () => {
    expect(actuationSample(c, 38 * SEC)).toEqual({ ms: 200 * SEC });
    // a change in force at its own answer (no read due), and a reconcile read before its due
    expect(actuationSample({ ...c, dueAt: null }, 0)).toEqual({ ms: 200 * SEC });
    expect(actuationSample({ ...c, dueAt: T0 + 5 * MIN }, 0)).toEqual({ ms: 200 * SEC });
  });

  it('one whose read came later measured the queue: no sample, and by how much it was late', () => {
    expect(actuationSample(c, 19 * SEC)).toEqual({ skipped: 'late_read', lateMs: 20 * SEC });
  });

  it('one sent again after its limit, or whose outcome was unknown, is no sample either', () => {
    // a change cut by a network error, never taken: sent again at its limit, confirmed 615 s after its first send
    const resent = { sentAt: T0, at: T0 + 615 * SEC, dueAt: T0 + 612 * SEC, pastLimit: true };
    expect(actuationSample(resent, 38 * SEC)).toEqual({ skipped: 'unconfirmed' });
    expect(actuationSample({ ...c, outcomeUnknown: true }, 38 * SEC)).toEqual({ skipped: 'outcome_unknown' });
    expect(actuationSample({ ...c, pastLimit: false, outcomeUnknown: false }, 38 * SEC)).toEqual({
      ms: 200 * SEC,
    });
  });
});
