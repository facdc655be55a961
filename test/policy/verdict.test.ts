// Window verdicts (verdict.ts): each window start a pipe's policy has, the target it asks for, and
// whether the pipe was confirmed at that target by the boundary (met), after it (late by how
// much), or not within the limit (missed).
import { describe, expect, it } from 'vitest';
import {
  atTarget,
  exclusionOf,
  judgeVerdict,
  stateLostAround,
  VERDICT_LIMIT_DEFAULT_MS,
  windowStartsIn,
  type VerdictDue,
} from '../../src/policy/verdict.js';
import type { Decision } from '../../src/policy/types.js';
import { at, oneOff, policy, recurring } from './build.js';

const STREAM = ['replicas', 'replicaCpuMillicores', 'replicaMemoryGb'] as const;
const B = at('2026-11-23T09:00:00Z');

const business = recurring({
  name: 'business',
  start: '09:00',
  end: '17:00',
  timezone: 'UTC',
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  target: { replicas: { value: 6 } },
});

const due = (o: Partial<VerdictDue> = {}): VerdictDue => ({
  boundary: B,
  windows: ['business'],
  target: { replicas: 6 },
  deadline: B + VERDICT_LIMIT_DEFAULT_MS,
  ...o,
});

describe('windowStartsIn', () => {
  it('finds each start of a window in (from, to] with the floor of its target', () => {
    const p = policy({ windows: [business] });
    const starts = windowStartsIn(p, {}, STREAM, at('2026-11-23T00:00:00Z'), at('2026-11-25T00:00:00Z'));
    expect(starts).toEqual([
      {
        boundary: B,
        windows: ['business'],
        target: { replicas: 6 },
        before: { replicas: 2 },
        end: at('2026-11-23T17:00:00Z'),
      },
      {
        boundary: at('2026-11-24T09:00:00Z'),
        windows: ['business'],
        target: { replicas: 6 },
        before: { replicas: 2 },
        end: at('2026-11-24T17:00:00Z'),
      },
    ]);
  });

  it('counts a boundary at `to` and not at `from`', () => {
    const p = policy({ windows: [business] });
    expect(windowStartsIn(p, {}, STREAM, B - 1, B).map((s) => s.boundary)).toEqual([B]);
    expect(windowStartsIn(p, {}, STREAM, B, B + 60_000)).toEqual([]);
  });

  it('ends are not starts; neither is a window starting under a higher-priority one', () => {
    const high = oneOff({
      name: 'sale',
      from: '2026-11-23T08:00:00Z',
      to: '2026-11-23T10:00:00Z',
      priority: 5,
      target: { replicas: { value: 10 } },
    });
    const p = policy({ windows: [business, high] });
    const starts = windowStartsIn(p, {}, STREAM, at('2026-11-23T00:00:00Z'), at('2026-11-23T23:00:00Z'));
    // 08:00 sale starts; 09:00 business starts under sale (no verdict); 10:00 sale ends (no verdict)
    expect(starts.map((s) => [new Date(s.boundary).toISOString(), s.windows])).toEqual([
      ['2026-11-23T08:00:00.000Z', ['sale']],
    ]);
  });

  it('takes the lowest value a bounded target accepts, within the pipe bounds and the fields of the kind', () => {
    const w = oneOff({
      name: 'peak',
      from: '2026-11-23T09:00:00Z',
      to: '2026-11-23T10:00:00Z',
      target: { replicas: { min: 3, max: 8 }, concurrency: { value: 4 } },
    });
    const [start] = windowStartsIn(policy({ windows: [w] }), { replicas: { min: 5 } }, STREAM, B - 1, B);
    expect(start?.target).toEqual({ replicas: 5 });
  });

  it('a window (and baseline) that sets no field of the kind gives no verdict', () => {
    const w = oneOff({
      name: 'c',
      from: '2026-11-23T09:00:00Z',
      to: '2026-11-23T10:00:00Z',
      target: { concurrency: { value: 4 } },
    });
    expect(windowStartsIn(policy({ baseline: {}, windows: [w] }), {}, STREAM, B - 1, B)).toEqual([]);
    // a field the window leaves unset is the baseline's
    expect(windowStartsIn(policy({ windows: [w] }), {}, STREAM, B - 1, B)[0]?.target).toEqual({ replicas: 2 });
  });

  it('spring forward (Europe/Berlin, 2026-03-29): a 02:30 start is the first instant after the gap', () => {
    const w = recurring({ name: 'night', start: '02:30', end: '05:00', timezone: 'Europe/Berlin' });
    const starts = windowStartsIn(
      policy({ windows: [w] }),
      {},
      STREAM,
      at('2026-03-28T12:00:00Z'),
      at('2026-03-29T12:00:00Z'),
    );
    // 02:00 CET jumps to 03:00 CEST = 01:00Z
    expect(starts.map((s) => new Date(s.boundary).toISOString())).toEqual(['2026-03-29T01:00:00.000Z']);
    expect(starts[0]?.end).toBe(at('2026-03-29T03:00:00Z'));
  });

  it('fall back (Europe/Berlin, 2026-10-25): a 02:30 start happens once, at its first occurrence', () => {
    const w = recurring({ name: 'night', start: '02:30', end: '05:00', timezone: 'Europe/Berlin' });
    const starts = windowStartsIn(
      policy({ windows: [w] }),
      {},
      STREAM,
      at('2026-10-24T12:00:00Z'),
      at('2026-10-25T12:00:00Z'),
    );
    // 02:30 CEST = 00:30Z (02:30 CET, 01:30Z, is inside the window already)
    expect(starts.map((s) => new Date(s.boundary).toISOString())).toEqual(['2026-10-25T00:30:00.000Z']);
  });

  it('a US zone on its DST day (America/New_York, 2026-03-08): the 09:00 start moves an hour in UTC', () => {
    const w = recurring({ name: 'open', start: '09:00', end: '16:00', timezone: 'America/New_York' });
    const starts = windowStartsIn(
      policy({ windows: [w] }),
      {},
      STREAM,
      at('2026-03-07T00:00:00Z'),
      at('2026-03-09T00:00:00Z'),
    );
    expect(starts.map((s) => new Date(s.boundary).toISOString())).toEqual([
      '2026-03-07T14:00:00.000Z',
      '2026-03-08T13:00:00.000Z',
    ]);
  });
});

describe('atTarget', () => {
  it.each([
    [{ replicas: 6 }, { replicas: 6 }, true],
    [{ replicas: 8 }, { replicas: 6 }, true],
    [{ replicas: 5 }, { replicas: 6 }, false],
    [{}, { replicas: 6 }, false],
    [{ replicas: 6, replicaCpuMillicores: 250 }, { replicas: 6, replicaCpuMillicores: 500 }, false],
    [{ replicas: 6 }, {}, true],
  ])('%j at target %j: %s', (values, target, expected) => {
    expect(atTarget(values, target)).toBe(expected);
  });
});

describe('judgeVerdict', () => {
  const cases: [string, Parameters<typeof judgeVerdict>[1], number, ReturnType<typeof judgeVerdict>][] = [
    [
      'confirmed before the boundary: met',
      { values: { replicas: 6 }, at: B - 120_000 },
      B + 30_000,
      { verdict: 'met', lateMs: 0, confirmedAt: B - 120_000 },
    ],
    [
      'confirmed at the boundary itself: met',
      { values: { replicas: 6 }, at: B },
      B,
      { verdict: 'met', lateMs: 0, confirmedAt: B },
    ],
    [
      'confirmed higher than the target: met',
      { values: { replicas: 9 }, at: B - 1 },
      B,
      { verdict: 'met', lateMs: 0, confirmedAt: B - 1 },
    ],
    [
      'confirmed 3 minutes after: late by 3 minutes',
      { values: { replicas: 6 }, at: B + 180_000 },
      B + 200_000,
      { verdict: 'late', lateMs: 180_000, confirmedAt: B + 180_000 },
    ],
    ['nothing confirmed yet, before the deadline: not yet', null, B + 60_000, null],
    ['confirmed below the target, before the deadline: not yet', { values: { replicas: 2 }, at: B }, B + 60_000, null],
    [
      'nothing confirmed by the deadline: missed',
      null,
      B + VERDICT_LIMIT_DEFAULT_MS,
      { verdict: 'missed', reason: 'not_confirmed' },
    ],
    [
      'confirmed below the target by the deadline: missed',
      { values: { replicas: 4 }, at: B + 60_000 },
      B + VERDICT_LIMIT_DEFAULT_MS + 1,
      { verdict: 'missed', reason: 'not_confirmed' },
    ],
    [
      'confirmed after the deadline (judged late): missed, not late',
      { values: { replicas: 6 }, at: B + VERDICT_LIMIT_DEFAULT_MS + 1 },
      B + VERDICT_LIMIT_DEFAULT_MS + 5_000,
      { verdict: 'missed', reason: 'not_confirmed' },
    ],
  ];
  it.each(cases)('%s', (_, confirmed, now, expected) => {
    expect(judgeVerdict(due(), confirmed, now)).toEqual(expected);
  });

  it('a confirmation the latest report contradicts (changed by hand since) does not count', () => {
    const confirmed = { values: { replicas: 6 }, at: B - 60_000 };
    expect(judgeVerdict(due(), confirmed, B + 30_000, { reported: { replicas: 2 } })).toBeNull();
    expect(judgeVerdict(due(), confirmed, B + 30_000, { reported: { replicas: 6 } })).toEqual({
      verdict: 'met',
      lateMs: 0,
      confirmedAt: B - 60_000,
    });
    expect(judgeVerdict(due(), confirmed, B + VERDICT_LIMIT_DEFAULT_MS, { reported: { replicas: 2 } })).toEqual({
      verdict: 'missed',
      reason: 'not_confirmed',
    });
  });

  it('a due judged before its boundary is not yet judged', () => {
    expect(judgeVerdict(due(), { values: { replicas: 6 }, at: B - 1 }, B - 1)).toBeNull();
  });

  it('a deadline before the default (the window ended): missed at the end', () => {
    const d = due({ deadline: B + 60_000 });
    expect(judgeVerdict(d, null, B + 60_000)).toEqual({ verdict: 'missed', reason: 'not_confirmed' });
  });

  it('superseded by the next window start before it was confirmed: missed, reason superseded', () => {
    expect(judgeVerdict(due(), null, B + 60_000, { final: true })).toEqual({ verdict: 'missed', reason: 'superseded' });
    expect(judgeVerdict(due(), { values: { replicas: 6 }, at: B + 5_000 }, B + 60_000, { final: true })).toEqual({
      verdict: 'late',
      lateMs: 5_000,
      confirmedAt: B + 5_000,
    });
  });
});

describe("after Redis lost the daemon's state", () => {
  const LIMIT = VERDICT_LIMIT_DEFAULT_MS;
  const MIN = 60_000;

  it('a loss touches a start from the limit before its boundary (the lead span) to its deadline, hold included', () => {
    const d = due({ deadline: B + 20_000 });
    // lost 17.4 s before the boundary, every pipe read again 5 s later
    expect(stateLostAround(d, { from: B - 17_400, to: B - 12_400 }, LIMIT)).toBe(true);
    // lost after the boundary, before the deadline: what it was judged on is gone
    expect(stateLostAround(d, { from: B + 10_000, to: B + 15_000 }, LIMIT)).toBe(true);
    // still held (not every pipe read again): every start until it is over
    expect(stateLostAround(d, { from: B - 60 * MIN, to: null }, LIMIT)).toBe(true);
    // a hold that ended within the limit before the boundary: a lead send may have been held
    expect(stateLostAround(d, { from: B - 30 * MIN, to: B - LIMIT + 1 }, LIMIT)).toBe(true);
    // over before the lead span began, or lost after the deadline, or never: untouched
    expect(stateLostAround(d, { from: B - 30 * MIN, to: B - LIMIT }, LIMIT)).toBe(false);
    expect(stateLostAround(d, { from: B + 20_001, to: B + 30_000 }, LIMIT)).toBe(false);
    expect(stateLostAround(d, null, LIMIT)).toBe(false);
  });

  it('a read that showed the target in force by the boundary (one that rebuilt the state too) makes it met', () => {
    // the audit's case: read at concurrency 34 at +222.6 s after the loss, the window at +240 s
    const d = due({ target: { concurrency: 34 }, deadline: B + 20_000 });
    const rebuilt = { values: { concurrency: 34, replicas: 2 }, at: B - 17_400 };
    expect(judgeVerdict(d, rebuilt, B, { stateLost: true, reported: { concurrency: 34 } })).toEqual({
      verdict: 'met',
      lateMs: 0,
      confirmedAt: B - 17_400,
    });
  });

  it('anything else is no verdict (excluded, state_lost), never missed, never late on evidence that is gone', () => {
    const d = due({ deadline: B + 20_000 });
    // nothing confirmed, the boundary passed: said at once, a later read cannot make it met
    expect(judgeVerdict(d, null, B, { stateLost: true })).toEqual({ verdict: 'excluded', reason: 'state_lost' });
    // below the target at the boundary
    expect(judgeVerdict(d, { values: { replicas: 2 }, at: B - 5_000 }, B, { stateLost: true })).toEqual({
      verdict: 'excluded',
      reason: 'state_lost',
    });
    // first read after the loss came after the boundary: met or late cannot be told
    expect(judgeVerdict(d, { values: { replicas: 6 }, at: B + 3_000 }, B + 5_000, { stateLost: true })).toEqual({
      verdict: 'excluded',
      reason: 'state_lost',
    });
    // past the deadline, or superseded
    expect(judgeVerdict(d, null, B + 20_000, { stateLost: true })).toEqual({
      verdict: 'excluded',
      reason: 'state_lost',
    });
    expect(judgeVerdict(d, null, B + 10_000, { stateLost: true, final: true })).toEqual({
      verdict: 'excluded',
      reason: 'state_lost',
    });
    // before the boundary: not yet judged
    expect(judgeVerdict(d, null, B - 1, { stateLost: true })).toBeNull();
  });
});

describe('a start the pipe was not read by (its first read after the boundary)', () => {
  // The chaos CI run's case: a pipe's first contact read was answered to the replica SIGKILLed 300 ms
  // after a boundary, read again ~10 s later when its job was recovered: three starts (5 s apart)
  // passed before the daemon ever read it, and the evaluation after that read gave each `missed`
  // (superseded), though the pipe had held the low windows' target all along.
  const d = due({ target: { replicas: 1 }, deadline: B + 5_000 });

  it('no read by the next start (or the deadline): no verdict (excluded, unseen), never missed', () => {
    expect(judgeVerdict(d, null, B + 5_000, { final: true, seenAt: B + 16_800 })).toEqual({
      verdict: 'excluded',
      reason: 'unseen',
    });
    expect(judgeVerdict(d, null, B + 5_000, { seenAt: B + 5_001 })).toEqual({ verdict: 'excluded', reason: 'unseen' });
    // judged by an evaluation of a tick before the read that came after its deadline: said at once
    expect(judgeVerdict(d, null, B + 1_000, { seenAt: B + 16_800 })).toEqual({ verdict: 'excluded', reason: 'unseen' });
  });

  it('first read after the boundary showing the target: late cannot be told from met (excluded, unseen)', () => {
    const contact = { values: { replicas: 1, replicaCpuMillicores: 250 }, at: B + 2_000 };
    expect(judgeVerdict(d, contact, B + 3_000, { seenAt: B + 2_000 })).toEqual({
      verdict: 'excluded',
      reason: 'unseen',
    });
    expect(judgeVerdict(d, contact, B + 5_000, { final: true, seenAt: B + 2_000 })).toEqual({
      verdict: 'excluded',
      reason: 'unseen',
    });
  });

  it('a read in the window that never showed the target: missed stands (the pipe was short then)', () => {
    const high = due({ target: { replicas: 10 }, deadline: B + 5_000 });
    const below = { values: { replicas: 1 }, at: B + 2_000 };
    expect(judgeVerdict(high, below, B + 3_000, { seenAt: B + 2_000 })).toBeNull();
    expect(judgeVerdict(high, below, B + 5_000, { seenAt: B + 2_000 })).toEqual({
      verdict: 'missed',
      reason: 'not_confirmed',
    });
    expect(judgeVerdict(high, below, B + 5_000, { final: true, seenAt: B + 2_000 })).toEqual({
      verdict: 'missed',
      reason: 'superseded',
    });
    // superseded before that read came: nothing read in the window
    expect(judgeVerdict(high, null, B + 1_500, { final: true, seenAt: B + 2_000 })).toEqual({
      verdict: 'excluded',
      reason: 'unseen',
    });
  });

  it('read by the boundary: judged as before', () => {
    expect(judgeVerdict(d, null, B + 5_000, { final: true, seenAt: B })).toEqual({
      verdict: 'missed',
      reason: 'superseded',
    });
    expect(judgeVerdict(d, { values: { replicas: 1 }, at: B - 2_000 }, B, { seenAt: B - 2_000 })).toEqual({
      verdict: 'met',
      lateMs: 0,
      confirmedAt: B - 2_000,
    });
    expect(judgeVerdict(d, { values: { replicas: 1 }, at: B + 2_000 }, B + 3_000, { seenAt: B - 9_000 })).toEqual({
      verdict: 'late',
      lateMs: 2_000,
      confirmedAt: B + 2_000,
    });
  });

  it("a loss of the daemon's state says so first", () => {
    expect(judgeVerdict(d, null, B + 5_000, { final: true, seenAt: B + 9_000, stateLost: true })).toEqual({
      verdict: 'excluded',
      reason: 'state_lost',
    });
  });
});

describe("a start whose change's outcome is not known (its answer lost with the replica that sent it)", () => {
  // The chaos run's shape: the change for a start at B (concurrency 34) sent 5 s before it by a
  // replica SIGKILLed before its answer was recorded; a settle read found 34 in force after the
  // next start. The platform may have carried it out any time from its send to that read.
  const up = due({ target: { concurrency: 34 }, deadline: B + 5_000 });
  const SENT = B - 5_000;

  it('found in force by the read that settled it after the boundary: neither late nor missed can be told', () => {
    const found = { values: { concurrency: 34 }, at: B + 9_000, outcomeUnknownFrom: SENT };
    const unknown = { verdict: 'excluded', reason: 'outcome_unknown' };
    expect(judgeVerdict(up, found, B + 5_000, { final: true })).toEqual(unknown);
    expect(judgeVerdict(up, found, B + 10_000)).toEqual(unknown);
    // found before the deadline: late cannot be told from met either
    expect(judgeVerdict(up, { ...found, at: B + 2_000 }, B + 3_000)).toEqual(unknown);
    // found by the boundary: met all the same
    expect(judgeVerdict(up, { ...found, at: B - 1_000 }, B + 1)).toMatchObject({ verdict: 'met' });
    // sent after the deadline: it could not have made the start, missed stands
    expect(judgeVerdict(up, { ...found, outcomeUnknownFrom: B + 6_000 }, B + 10_000)).toEqual({
      verdict: 'missed',
      reason: 'not_confirmed',
    });
  });

  it('still unsettled when the verdict is due: no verdict from it, and none yet while its settle read may come', () => {
    const pending = { values: { concurrency: 34 }, sentAt: SENT };
    expect(judgeVerdict(up, null, B + 5_000, { final: true, outcomeUnknown: pending })).toEqual({
      verdict: 'excluded',
      reason: 'outcome_unknown',
    });
    expect(judgeVerdict(up, null, B + 10_000, { outcomeUnknown: pending })).toBeNull();
    // a change that would not reach the target, or sent after the deadline: missed stands
    const short = { values: { concurrency: 20 }, sentAt: SENT };
    expect(judgeVerdict(up, null, B + 5_000, { final: true, outcomeUnknown: short })).toMatchObject({
      verdict: 'missed',
    });
    const after = { values: { concurrency: 34 }, sentAt: B + 6_000 };
    expect(judgeVerdict(up, null, B + 10_000, { outcomeUnknown: after })).toMatchObject({ verdict: 'missed' });
  });

  it('a confirmation whose outcome was known: late and missed as before', () => {
    expect(judgeVerdict(up, { values: { concurrency: 34 }, at: B + 2_000 }, B + 3_000)).toMatchObject({
      verdict: 'late',
    });
    expect(judgeVerdict(up, { values: { concurrency: 34 }, at: B + 9_000 }, B + 5_000, { final: true })).toEqual({
      verdict: 'missed',
      reason: 'superseded',
    });
  });
});

describe('exclusionOf', () => {
  const decision = (o: Partial<Decision>): Decision => ({
    action: 'none',
    direction: 'none',
    windows: ['business'],
    recommendation: {},
    desired: {},
    changes: {},
    reasons: [],
    ...o,
  });
  it('a paused pipe, an override in force, a freeze holding the change, a dry run are excluded', () => {
    expect(exclusionOf(decision({ action: 'skip', reasons: [{ code: 'paused', message: 'paused' }] }), false)).toBe(
      'paused',
    );
    expect(exclusionOf(decision({ override: { id: 'o', until: B + 1, fields: ['replicas'] } }), false)).toBe(
      'override',
    );
    expect(exclusionOf(decision({ freeze: { freezes: ['f'], held: { replicas: 6 }, until: B + 1 } }), false)).toBe(
      'freeze',
    );
    expect(exclusionOf(decision({ action: 'change' }), true)).toBe('dry_run');
    // a paused pipe never read is skipped as unknown first: the pause in force says it
    const unknown = decision({ action: 'skip', reasons: [{ code: 'unknown_pipe', message: 'not read yet' }] });
    expect(exclusionOf(unknown, false, true)).toBe('paused');
    expect(exclusionOf(unknown, false)).toBeNull();
  });
  it('other skips (a stopped service, an endpoint not ready) are not excluded: they are judged', () => {
    expect(
      exclusionOf(
        decision({ action: 'skip', reasons: [{ code: 'service_not_running', message: 'service is Stopped' }] }),
        false,
      ),
    ).toBeNull();
    expect(exclusionOf(decision({}), false)).toBeNull();
  });
});
