// Window verdicts (verdict.ts): each window start a pipe's policy has, the target it asks for, and
// whether the pipe was confirmed at that target by the boundary (met), after it (late by how
// much), or not within the limit (missed).
import { describe, expect, it } from 'vitest';
import {
  atTarget,
  confirmedAfterReport,
  confirmedSince,
  confirmedWithEarlier,
  exclusionOf,
  judgeVerdict,
  stateLostAround,
  EARLIER_KEPT,
  VERDICT_LIMIT_DEFAULT_MS,
  verdictDue,
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

describe("a start at the platform's floor", () => {
  // a night window down to the floor (replicas 1, the platform's minimum) on the day Berlin springs
  // forward: 02:30 local is the first instant after the gap, 03:00 CEST = 01:00Z
  const night = recurring({
    name: 'night',
    start: '02:30',
    end: '05:00',
    timezone: 'Europe/Berlin',
    target: { replicas: { value: 1 } },
  });
  const [start] = windowStartsIn(
    policy({ windows: [night] }),
    {},
    STREAM,
    at('2026-03-28T12:00:00Z'),
    at('2026-03-29T12:00:00Z'),
  );
  const NIGHT = at('2026-03-29T01:00:00Z');
  const d = verdictDue(start!, VERDICT_LIMIT_DEFAULT_MS);

  it('the start is the first instant after the gap, its target the floor', () => {
    expect(start).toMatchObject({ boundary: NIGHT, target: { replicas: 1 }, before: { replicas: 2 } });
  });

  it('held above it before the boundary: the scale-down shown after it keeps the instant, met at the boundary', () => {
    // a read showed the baseline (2) in force 20 min before; the scale-down to the floor is decided
    // and shown in force 600 ms after the boundary, before the evaluation that judges the start
    const held = { values: { replicas: 2 }, at: NIGHT - 20 * 60_000 };
    const down = confirmedSince(held, { replicas: 1 }, NIGHT + 600);
    expect(down).toEqual({ values: { replicas: 1 }, at: NIGHT - 20 * 60_000 });
    expect(judgeVerdict(d, down, NIGHT + 30_000, { reported: { replicas: 1 } })).toEqual({
      verdict: 'met',
      lateMs: 0,
      confirmedAt: NIGHT - 20 * 60_000,
    });
    // judged after the limit (the verdict's evaluation came late): met all the same, never missed
    expect(judgeVerdict(d, down, NIGHT + VERDICT_LIMIT_DEFAULT_MS + 1, { reported: { replicas: 1 } })).toMatchObject({
      verdict: 'met',
    });
  });

  it('at the floor already (the change a no-op): met at the boundary', () => {
    const atFloor = { values: { replicas: 1 }, at: NIGHT - 60 * 60_000 };
    const again = confirmedSince(atFloor, { replicas: 1 }, NIGHT + 1_000);
    expect(again).toEqual(atFloor);
    expect(judgeVerdict(d, again, NIGHT + 1_000)).toEqual({ verdict: 'met', lateMs: 0, confirmedAt: atFloor.at });
  });

  it('nothing held before: a confirmation from its own read (a scale-up, a field not named before, none at all)', () => {
    const down = { values: { replicas: 1 }, at: NIGHT - 60_000 };
    expect(confirmedSince(down, { replicas: 3 }, NIGHT + 60_000)).toEqual({
      values: { replicas: 3 },
      at: NIGHT + 60_000,
    });
    expect(confirmedSince(down, { replicas: 1, replicaCpuMillicores: 500 }, NIGHT)).toEqual({
      values: { replicas: 1, replicaCpuMillicores: 500 },
      at: NIGHT,
    });
    expect(confirmedSince(null, { replicas: 1 }, NIGHT + 5_000)).toEqual({
      values: { replicas: 1 },
      at: NIGHT + 5_000,
    });
    // a scale-down shown before a later scale-up start is no confirmation of it
    const up = { ...d, target: { replicas: 3 } };
    expect(
      judgeVerdict(
        up,
        confirmedSince({ values: { replicas: 3 }, at: NIGHT - 60_000 }, { replicas: 1 }, NIGHT),
        NIGHT + 1,
      ),
    ).toBeNull();
  });
});

describe('a confirmation holds only while every answer since showed at least its values', () => {
  // a sale's start at B to 10 replicas; 10 was confirmed a window earlier, then the pipe went down
  // to 1 (a scale-down between the windows, or a hand) and the change back to 10 took effect after B
  const B = at('2026-11-23T09:00:00Z');
  const due = { boundary: B, windows: ['sale'], target: { replicas: 10 }, deadline: B + 10 * 60_000 };
  const earlier = { values: { replicas: 10 }, at: B - 36_000 };

  it('a report below it is kept as its lowest, and a later confirmation of the same values counts from its own read', () => {
    const down = confirmedAfterReport(earlier, { replicas: 1 });
    expect(down).toEqual({ ...earlier, lowest: { replicas: 1 } });
    // the scale-up's answer showed 1 at B - 3 s; a read shows 10 in force 2 s after B
    const again = confirmedSince(down, { replicas: 10 }, B + 2_000);
    expect(again).toEqual({ values: { replicas: 10 }, at: B + 2_000 });
    expect(judgeVerdict(due, again, B + 30_000, { reported: { replicas: 10 } })).toMatchObject({
      verdict: 'late',
      lateMs: 2_000,
    });
    // judged before the read came, the earlier confirmation does not stand for the start
    expect(judgeVerdict(due, down, B + 1, { reported: { replicas: 10 } })).toBeNull();
  });

  it('values it held all along keep the instant: a scale-down to the lowest shown', () => {
    const down = confirmedAfterReport(earlier, { replicas: 4 });
    expect(confirmedSince(down, { replicas: 4 }, B)).toEqual({
      values: { replicas: 4 },
      at: earlier.at,
      lowest: { replicas: 4 },
    });
    expect(confirmedSince(down, { replicas: 5 }, B)).toEqual({ values: { replicas: 5 }, at: B });
  });

  it('a transient 0 or null, a report at or above, or a field it does not name changes nothing', () => {
    expect(confirmedAfterReport(earlier, { replicas: 0 })).toBe(earlier);
    expect(confirmedAfterReport(earlier, { replicas: null })).toBe(earlier);
    expect(confirmedAfterReport(earlier, { replicas: 12, concurrency: 1 })).toBe(earlier);
    expect(confirmedAfterReport(null, { replicas: 1 })).toBeNull();
  });
});

describe('a 0 is the value in force unless a change on its way may show it for a moment', () => {
  // The fleet chaos run's "met not shown": an objects pipe confirmed at concurrency 34, later at 0
  // (a scale-down to the floor, or someone else's), and a start at B that wants 34 again, shown in
  // force 2 s after B. The 0 was taken for the platform's transient answer and the old 34 stood.
  const B = at('2026-11-23T09:00:00Z');
  const up = { boundary: B, windows: ['w2'], target: { concurrency: 34 }, deadline: B + 10 * 60_000 };
  const at34 = { values: { concurrency: 34 }, at: B - 60_000 };

  it('read at 0 with nothing of ours on its way: the 0 is in force, the start late by the read that shows 34', () => {
    const atZero = confirmedAfterReport(at34, { concurrency: 0 });
    expect(atZero).toEqual({ ...at34, lowest: { concurrency: 0 } });
    const again = confirmedSince(atZero, { concurrency: 34 }, B + 2_000);
    expect(judgeVerdict(up, again, B + 30_000, { reported: { concurrency: 34 } })).toEqual({
      verdict: 'late',
      lateMs: 2_000,
      confirmedAt: B + 2_000,
    });
  });

  it('a 0 that is a value of our change on its way (the scale-down to the floor it replaced) is in force too', () => {
    // the change back up to 34 answered while the one down to 0 it replaced had taken effect
    const onItsWay = [{ concurrency: 34 }, { concurrency: 34 }, { concurrency: 0 }];
    expect(confirmedAfterReport(at34, { concurrency: 0 }, onItsWay)).toEqual({ ...at34, lowest: { concurrency: 0 } });
  });

  it('a 0 or null while a change of ours to other values is on its way keeps what was known', () => {
    // a change to 40 on its way, the pipe at 34 before it: the live API's transient answer
    const onItsWay = [{ concurrency: 40 }, { concurrency: 34 }];
    expect(confirmedAfterReport(at34, { concurrency: 0 }, onItsWay)).toBe(at34);
    expect(confirmedAfterReport(at34, { concurrency: null }, onItsWay)).toBe(at34);
    expect(confirmedAfterReport(at34, { concurrency: null })).toBe(at34);
    const shown = confirmedSince(
      confirmedAfterReport(at34, { concurrency: 0 }, onItsWay),
      { concurrency: 34 },
      B + 2_000,
    );
    expect(judgeVerdict(up, shown, B + 30_000, { reported: { concurrency: 34 } })).toMatchObject({ verdict: 'met' });
  });
});

describe('a start judged after its confirmation moved on (the evaluation came late)', () => {
  // Windows 5 s apart, the pipe's evaluation held up past the next start (its job on a replica
  // killed just after B, recovered only when its lock ran out): by the time the start at B is
  // judged, answers have confirmed the next start's target. What held at B decides, not what holds now.
  const B = at('2026-11-23T09:00:00Z');
  const up = { boundary: B, windows: ['w1'], target: { concurrency: 34 }, deadline: B + 5_000 };
  const down = { boundary: B, windows: ['w1'], target: { concurrency: 0 }, deadline: B + 5_000 };
  const first = (values: { concurrency: number }, t: number) =>
    confirmedWithEarlier(null, { values, at: t }, values, t)!;

  it('a scale-up confirmed before B and shown again after it, then a scale-down: still met at B', () => {
    const atHigh = first({ concurrency: 34 }, B - 2_000);
    // the scale-down's own answer, 1 s after B, still showed 34 (the change takes effect later)
    const shown = confirmedWithEarlier(atHigh, undefined, { concurrency: 34 }, B + 1_000)!;
    expect(shown).toEqual({ values: { concurrency: 34 }, at: B - 2_000, seen: B + 1_000 });
    const lowered = confirmedWithEarlier(
      shown,
      confirmedSince(shown, { concurrency: 3 }, B + 7_000),
      { concurrency: 3 },
      B + 7_000,
    )!;
    expect(lowered).toEqual({
      values: { concurrency: 3 },
      at: B - 2_000,
      seen: B + 7_000,
      earlier: [{ held: { concurrency: 34 }, at: B - 2_000, until: B + 1_000 }],
    });
    expect(judgeVerdict(up, lowered, B + 5_000, { final: true })).toEqual({
      verdict: 'met',
      lateMs: 0,
      confirmedAt: B - 2_000,
    });
  });

  it('nothing shown since the confirmation before B: the span ends there, no verdict from it', () => {
    const atHigh = first({ concurrency: 34 }, B - 2_000);
    const lowered = confirmedWithEarlier(
      atHigh,
      confirmedSince(atHigh, { concurrency: 3 }, B + 7_000),
      { concurrency: 3 },
      B + 7_000,
    )!;
    expect(judgeVerdict(up, lowered, B + 5_000, { final: true })).toEqual({ verdict: 'missed', reason: 'superseded' });
  });

  it('a start to the floor held before B, then a scale-up confirmed after its deadline: met, not superseded', () => {
    const atLow = confirmedWithEarlier(first({ concurrency: 1 }, B - 3_000), undefined, { concurrency: 1 }, B + 4_000)!;
    const raised = confirmedWithEarlier(
      atLow,
      confirmedSince(atLow, { concurrency: 34 }, B + 9_000),
      { concurrency: 34 },
      B + 9_000,
    )!;
    expect(raised).toMatchObject({ values: { concurrency: 34 }, at: B + 9_000 });
    expect(judgeVerdict(down, raised, B + 5_000, { final: true })).toMatchObject({ verdict: 'met', lateMs: 0 });
  });

  it('a scale-up whose answer was lost, found in force by a read after the next start: the values before held until that read', () => {
    // the chaos run's objects pipe: 24 confirmed at B - 9 s; the change to 34 sent at B - 5 s was
    // answered to a replica killed just before (its answer lost), a read found 34 in force at
    // B + 9 s. The start at B wanted only the floor: the pipe held 24 or more all along.
    const at24 = first({ concurrency: 24 }, B - 9_000);
    const found = confirmedWithEarlier(
      at24,
      confirmedSince(at24, { concurrency: 34 }, B + 9_000),
      { concurrency: 34 },
      B + 9_000,
    )!;
    expect(found.earlier).toEqual([{ held: { concurrency: 24 }, at: B - 9_000, until: B + 9_000 }]);
    expect(judgeVerdict(down, found, B + 5_000, { final: true })).toEqual({
      verdict: 'met',
      lateMs: 0,
      confirmedAt: B - 9_000,
    });
    // the start before it wanted 34: not shown by its deadline, missed
    expect(judgeVerdict(up, found, B + 5_000, { final: true })).toEqual({ verdict: 'missed', reason: 'superseded' });
  });

  it('a hand change seen only after B: the span ends at the last answer that showed the target', () => {
    const atHigh = confirmedWithEarlier(
      first({ concurrency: 34 }, B - 60_000),
      undefined,
      { concurrency: 34 },
      B - 30_000,
    )!;
    const low = confirmedWithEarlier(
      atHigh,
      confirmedAfterReport(atHigh, { concurrency: 1 }),
      { concurrency: 1 },
      B + 2_000,
    )!;
    expect(low.earlier).toEqual([{ held: { concurrency: 34 }, at: B - 60_000, until: B - 30_000 }]);
    expect(judgeVerdict(up, low, B + 5_000, { final: true })).toEqual({ verdict: 'missed', reason: 'superseded' });
  });

  it('confirmed after B and before the deadline, moved on since: late by that much', () => {
    const atLow = first({ concurrency: 1 }, B - 60_000);
    const high = confirmedWithEarlier(
      atLow,
      confirmedSince(atLow, { concurrency: 34 }, B + 2_000),
      { concurrency: 34 },
      B + 2_000,
    )!;
    const seen = confirmedWithEarlier(high, undefined, { concurrency: 34 }, B + 6_000)!;
    const after = confirmedWithEarlier(
      seen,
      confirmedAfterReport(seen, { concurrency: 2 }),
      { concurrency: 2 },
      B + 8_000,
    )!;
    expect(judgeVerdict(up, after, B + 9_000, { final: true })).toEqual({
      verdict: 'late',
      lateMs: 2_000,
      confirmedAt: B + 2_000,
    });
  });

  it('an answer below, a transient 0 or the same instant again moves nothing; at most a few spans are kept', () => {
    const c = first({ concurrency: 5 }, B);
    expect(confirmedWithEarlier(c, undefined, { concurrency: 0 }, B + 1)).toBeUndefined();
    expect(confirmedWithEarlier(c, c, { concurrency: 4 }, B + 1)).toBe(c);
    let cur = c;
    for (let i = 1; i <= 10; i += 1)
      cur = confirmedWithEarlier(
        cur,
        { values: { concurrency: 5 + i }, at: B + i * 1_000 },
        { concurrency: 5 + i },
        B + i * 1_000,
      )!;
    expect(cur.earlier).toHaveLength(EARLIER_KEPT);
    expect(cur.earlier![0]).toEqual({ held: { concurrency: 14 }, at: B + 9_000, until: B + 10_000 });
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
