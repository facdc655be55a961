// When a change's confirmation reads go (src/daemon/lifecycle/confirmation.ts): a scale-up's
// confirming read at the expected actuation, any other change's after a probe at 0.85 of it, then
// reads 15 % of the time since the send apart up to the limit; one read at firstRead when the
// expectation is within it. And what a confirmation's actuation sample is: the instant its read
// stood for (its wait in the queue not counted), with the last read before it that did not show the
// target as its lower end; none for a change in force at its own answer.
import { describe, expect, it } from 'vitest';
import { confirmationRead } from '../../../src/daemon/lifecycle/confirm-read.js';
import {
  actuationSample,
  afterSend,
  BACKOFF_GROWTH,
  confirmationReads,
  confirmTiming,
  firstDueAt,
  FIRST_READ_MS,
  isScaleUp,
  nextDueAt,
  PROBE_SHARE,
  sampledAt,
} from '../../../src/daemon/lifecycle/confirmation.js';

const SEC = 1_000;
const MIN = 60 * SEC;
const T0 = Date.parse('2026-11-23T10:00:00Z');
const timing = (expectedMs: number, firstReadMs = 15 * SEC, limitMs = 10 * MIN) =>
  confirmTiming({ expectedMs, maxMs: limitMs, minSamples: 20, firstReadMs });
const reads = (expectedMs: number, firstReadMs?: number, scaleUp = false) =>
  [...confirmationReads(T0, timing(expectedMs, firstReadMs), scaleUp)].map((at) => (at - T0) / SEC);

describe('the confirmation schedule', () => {
  it('a scale-up: one read at the expected actuation (as the lead plan counts), then reads 15 % of the time since the send apart, the last at the limit', () => {
    expect(BACKOFF_GROWTH).toBe(0.15);
    expect(reads(3 * MIN, undefined, true).slice(0, 4)).toEqual([180, 207, 238.05, 273.758]);
    expect(reads(3 * MIN, undefined, true).at(-1)).toBe(600);
    expect(firstDueAt(T0, timing(3 * MIN), true)).toBe(T0 + 180 * SEC);
  });

  it('any other change: a probe at 0.85 of the expected actuation first, so an estimate above the propagation comes down', () => {
    expect(PROBE_SHARE).toBe(0.85);
    expect(reads(3 * MIN).slice(0, 3)).toEqual([153, 180, 207]);
    expect(firstDueAt(T0, timing(3 * MIN))).toBe(T0 + 153 * SEC);
  });

  it('an expectation within firstRead (none configured, none measured): one read at firstRead, then steps of a quarter of it and 15 % of the time since the send', () => {
    expect(reads(0).slice(0, 6)).toEqual([15, 18.75, 22.5, 26.25, 30.188, 34.717]);
    expect(reads(10 * SEC)).toEqual(reads(0));
    // a probe that would come sooner than firstRead goes at firstRead, the confirming read at E
    expect(reads(18 * SEC).slice(0, 3)).toEqual([15.3, 18, 21.75]);
  });

  it('firstRead: default 15 s, the soonest read after a send; compressed tenfold in the bench', () => {
    expect(FIRST_READ_MS).toBe(15 * SEC);
    expect(confirmTiming({ expectedMs: 0, maxMs: 10 * MIN, minSamples: 20 }).firstReadMs).toBe(FIRST_READ_MS);
    expect(reads(0, 1_500).slice(0, 3)).toEqual([1.5, 1.875, 2.25]);
    expect(reads(18 * SEC, 1_500, true).slice(0, 3)).toEqual([18, 20.7, 23.805]);
  });

  it('a change slower than the estimate is read within 15 % of the time since the send (a quarter of firstRead at least) after it came into force', () => {
    for (const e of [0, 5 * SEC, 20 * SEC, 3 * MIN]) {
      const rs = reads(e, undefined, true);
      for (let i = 1; i < rs.length; i++)
        expect(rs[i]! - rs[i - 1]!).toBeLessThanOrEqual(Math.max(0.15 * rs[i - 1]!, 3.75) + 0.001);
    }
  });

  it('at most one read of a scale-up by the expected actuation, two of any other change', () => {
    for (const e of [0, 5 * SEC, 15 * SEC, 20 * SEC, MIN, 3 * MIN, 7 * MIN]) {
      expect(reads(e, undefined, true).filter((s) => s * SEC <= Math.max(e, 15 * SEC)).length).toBe(1);
      expect(reads(e).filter((s) => s * SEC <= Math.max(e, 15 * SEC)).length).toBeLessThanOrEqual(2);
    }
  });

  it('the read after one that found it not in force: the next of the schedule after it (a late read stands for those it passed); none past the limit', () => {
    const t = timing(3 * MIN);
    const c = { lastSentAt: T0 };
    expect(nextDueAt(c, T0 + 153 * SEC, t)).toBe(T0 + 180 * SEC);
    expect(nextDueAt(c, T0 + 160 * SEC, t)).toBe(T0 + 180 * SEC);
    expect(nextDueAt(c, T0 + 180 * SEC, t)).toBe(T0 + 207 * SEC);
    expect(nextDueAt(c, T0 + 400 * SEC, t)).toBe(T0 + 416_353);
    expect(nextDueAt(c, T0 + 599 * SEC, t)).toBe(T0 + 600 * SEC);
    expect(nextDueAt(c, T0 + 600 * SEC, t)).toBeNull();
    // a scale-up's (its target above what the pipe held) has no probe
    const up = { lastSentAt: T0, target: { replicas: 4 }, notYet: [{ replicas: 2 }] };
    expect(nextDueAt(up, T0, t)).toBe(T0 + 180 * SEC);
    expect(isScaleUp(up)).toBe(true);
    expect(isScaleUp({ target: { replicas: 1 }, notYet: [{ replicas: 2 }] })).toBe(false);
  });
});

describe('actuation samples', () => {
  // a scale-up's confirming read due 180 s after its send, that went 2 s late and showed the target
  const c = { sentAt: T0, at: T0 + 182 * SEC, dueAt: T0 + 180 * SEC };
  it('a read that showed the target: the instant it was queued for, its own wait in the queue not counted', () => {
    expect(actuationSample(c)).toEqual({ ms: 180 * SEC });
    // a reconcile read that came before the confirming read's instant: its own instant
    expect(actuationSample({ ...c, dueAt: T0 + 5 * MIN })).toEqual({ ms: 182 * SEC });
  });

  it('a read that waited long in the queue: still the instant it stood for, never its answer', () => {
    // due 190 s after the send, it waited 30 s behind changes: 190 s (220 s would count the wait)
    expect(actuationSample({ sentAt: T0, at: T0 + 220 * SEC, dueAt: T0 + 190 * SEC })).toEqual({ ms: 190 * SEC });
  });

  it('a probe that went after the confirming read was due stands for the confirming read: it cannot measure the estimate down', () => {
    const t = timing(3 * MIN);
    // a scale-down's probe due at 153 s (0.85 of 3 min): on time, its own instant
    expect(sampledAt({ lastSentAt: T0, dueAt: T0 + 153 * SEC }, T0 + 154 * SEC, t)).toBe(T0 + 153 * SEC);
    // it waited behind a boundary's changes until 200 s: the confirming read's instant, 180 s
    expect(sampledAt({ lastSentAt: T0, dueAt: T0 + 153 * SEC }, T0 + 200 * SEC, t)).toBe(T0 + 180 * SEC);
    // a read of the schedule after the confirming one keeps its own instant, however late it went
    expect(sampledAt({ lastSentAt: T0, dueAt: T0 + 207 * SEC }, T0 + 300 * SEC, t)).toBe(T0 + 207 * SEC);
    // nothing expected: the first read at firstRead is the confirming read
    expect(sampledAt({ lastSentAt: T0, dueAt: T0 + 15 * SEC }, T0 + 90 * SEC, timing(0))).toBe(T0 + 15 * SEC);
  });

  // The propagation lies between the last read that did not show the target and the first that
  // did: the pair is the sample, and the estimate counts its upper end less the read's wait.
  it('the last read that did not show the target is the lower end: on time, the pair is one step of the schedule', () => {
    // a scale-down probed at 153 s (not in force), confirmed by the read due at 180 s, 1 s late
    const pair = actuationSample({
      sentAt: T0,
      at: T0 + 181 * SEC,
      dueAt: T0 + 180 * SEC,
      notShownAt: T0 + 153.4 * SEC,
    });
    expect(pair).toEqual({ ms: 180 * SEC, lowMs: 153.4 * SEC });
  });

  it('a read that waited: its due instant is counted, its wait is not, and the lower end says where the propagation may start', () => {
    // not in force at 40 s (a read due at 15 s that waited), the next due at 43.2 s went at 90 s
    const waited = actuationSample({
      sentAt: T0,
      at: T0 + 90 * SEC,
      dueAt: T0 + 43.2 * SEC,
      notShownAt: T0 + 40 * SEC,
    });
    expect(waited).toEqual({ ms: 43.2 * SEC, lowMs: 40 * SEC });
    // no read before it (the change's own answer the only lower end): the upper end alone
    expect(actuationSample({ sentAt: T0, at: T0 + 90 * SEC, dueAt: T0 + 15 * SEC })).toEqual({ ms: 15 * SEC });
    // a read before the send (of an earlier change) is no lower end of this one
    expect(actuationSample({ ...c, notShownAt: T0 - SEC })).toEqual({ ms: 180 * SEC });
  });

  it('a read not showing the target records its instant; the read that shows it carries it into the confirmation', () => {
    const t = timing(3 * MIN);
    const answer = (replicas: number) => ({
      kind: 'stream' as const,
      state: 'Running' as const,
      scaling: { replicas, replicaCpuMillicores: 500, replicaMemoryGb: 2, concurrency: null },
      endpointIds: [],
    });
    const sent = afterSend(null, { replicas: 4 }, { replicas: 1 }, T0, t);
    expect(sent.notShownAt).toBeUndefined();
    // the probe at 153 s went at 154 s: not yet
    const probe = confirmationRead(sent, answer(4), { replicas: 4 }, T0 + 154 * SEC, t);
    expect(probe.inForce).toBe(false);
    expect(probe.next).toMatchObject({ notShownAt: T0 + 154 * SEC, dueAt: T0 + 180 * SEC });
    // the read at 180 s went at 181 s and showed it: the pair (154 s, 180 s]
    const shown = confirmationRead(probe.next!, answer(1), { replicas: 4 }, T0 + 181 * SEC, t);
    expect(shown.change).toMatchObject({ is: 'confirmed', dueAt: T0 + 180 * SEC, notShownAt: T0 + 154 * SEC });
    if (shown.change?.is !== 'confirmed') throw new Error('not confirmed');
    expect(actuationSample(shown.change)).toEqual({ ms: 180 * SEC, lowMs: 154 * SEC });
    // a new send starts over: no lower end from the reads of the change before
    expect(afterSend(probe.next, { replicas: 1 }, { replicas: 6 }, T0 + 200 * SEC, t).notShownAt).toBeUndefined();
  });

  it('a change in force at its own answer measured the request, not a propagation: no sample', () => {
    expect(actuationSample({ sentAt: T0, at: T0 + 84, dueAt: null })).toEqual({ skipped: 'in_force_at_answer' });
  });

  it('one sent again after its limit, or whose outcome was unknown, is no sample either', () => {
    // a change cut by a network error, never taken: sent again at its limit, confirmed 615 s after its first send
    const resent = { sentAt: T0, at: T0 + 615 * SEC, dueAt: T0 + 612 * SEC, pastLimit: true };
    expect(actuationSample(resent)).toEqual({ skipped: 'unconfirmed' });
    expect(actuationSample({ ...c, outcomeUnknown: true })).toEqual({ skipped: 'outcome_unknown' });
    expect(actuationSample({ ...c, pastLimit: false, outcomeUnknown: false })).toEqual({ ms: 180 * SEC });
  });
});
