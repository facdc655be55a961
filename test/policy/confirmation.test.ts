// The last confirmation (confirmation.ts): which values answers showed the pipe at or above and
// since when, one answer at a time, and what a window verdict (verdict.ts) makes of it.
import { describe, expect, it } from 'vitest';
import type { ScalingField, ScalingValues } from '../../src/api/index.js';
import { confirmationAfterAnswer, EARLIER_KEPT, type Confirmed } from '../../src/policy/confirmation.js';
import { judgeVerdict, VERDICT_LIMIT_DEFAULT_MS, verdictDue, windowStartsIn } from '../../src/policy/verdict.js';
import { at, policy, recurring } from './build.js';

const STREAM = ['replicas', 'replicaCpuMillicores', 'replicaMemoryGb'] as const;

/** An answer at `t` that shows `values` in force (and reports them): a confirmation of them. */
function shows(was: Confirmed | null, values: ScalingValues, t: number): Confirmed {
  const c = confirmationAfterAnswer(was, { at: t, reported: values, confirms: values, onItsWay: [] });
  if (c === null) throw new Error('an answer that confirms values leaves a confirmation');
  return c;
}

/** An answer at `t` that confirms nothing, a report only; `onItsWay`: our change on its way then. */
function reports<C extends Confirmed | null>(
  was: C,
  reported: Partial<Record<ScalingField, number | null>>,
  t: number,
  onItsWay: readonly ScalingValues[] = [],
): C {
  return confirmationAfterAnswer(was, { at: t, reported, confirms: null, onItsWay }) as C;
}

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
    const down = shows(held, { replicas: 1 }, NIGHT + 600);
    expect(down).toEqual({
      values: { replicas: 1 },
      at: NIGHT - 20 * 60_000,
      // the answer showed 1: the lowest since
      lowest: { replicas: 1 },
      seen: NIGHT + 600,
      // what it held before, up to the last answer that showed it
      earlier: [{ held: { replicas: 2 }, at: NIGHT - 20 * 60_000, until: NIGHT - 20 * 60_000 }],
    });
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
    const again = shows(atFloor, { replicas: 1 }, NIGHT + 1_000);
    expect(again).toEqual({ ...atFloor, seen: NIGHT + 1_000 });
    expect(judgeVerdict(d, again, NIGHT + 1_000)).toEqual({ verdict: 'met', lateMs: 0, confirmedAt: atFloor.at });
  });

  it('nothing held before: a confirmation from its own read (a scale-up, a field not named before, none at all)', () => {
    const down = { values: { replicas: 1 }, at: NIGHT - 60_000 };
    expect(shows(down, { replicas: 3 }, NIGHT + 60_000)).toMatchObject({
      values: { replicas: 3 },
      at: NIGHT + 60_000,
    });
    expect(shows(down, { replicas: 1, replicaCpuMillicores: 500 }, NIGHT)).toMatchObject({
      values: { replicas: 1, replicaCpuMillicores: 500 },
      at: NIGHT,
    });
    expect(shows(null, { replicas: 1 }, NIGHT + 5_000)).toEqual({
      values: { replicas: 1 },
      at: NIGHT + 5_000,
      seen: NIGHT + 5_000,
    });
    // a scale-down shown before a later scale-up start is no confirmation of it
    const up = { ...d, target: { replicas: 3 } };
    expect(
      judgeVerdict(up, shows({ values: { replicas: 3 }, at: NIGHT - 60_000 }, { replicas: 1 }, NIGHT), NIGHT + 1),
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
    const down = reports(earlier, { replicas: 1 }, B - 3_000);
    expect(down).toMatchObject({ ...earlier, lowest: { replicas: 1 } });
    // the scale-up's answer showed 1 at B - 3 s; a read shows 10 in force 2 s after B
    const again = shows(down, { replicas: 10 }, B + 2_000);
    expect(again).toMatchObject({ values: { replicas: 10 }, at: B + 2_000 });
    expect(again.lowest).toBeUndefined();
    expect(judgeVerdict(due, again, B + 30_000, { reported: { replicas: 10 } })).toMatchObject({
      verdict: 'late',
      lateMs: 2_000,
    });
    // judged before the read came, the earlier confirmation does not stand for the start
    expect(judgeVerdict(due, down, B + 1, { reported: { replicas: 10 } })).toBeNull();
  });

  it('values it held all along keep the instant: a scale-down to the lowest shown', () => {
    const down = reports(earlier, { replicas: 4 }, B - 3_000);
    expect(shows(down, { replicas: 4 }, B)).toMatchObject({
      values: { replicas: 4 },
      at: earlier.at,
      lowest: { replicas: 4 },
    });
    expect(shows(down, { replicas: 5 }, B)).toMatchObject({ values: { replicas: 5 }, at: B });
  });

  it('a 0 the field cannot hold, a null, a report at or above, or a field it does not name lowers nothing', () => {
    expect(reports(earlier, { replicas: 0 }, B)).toBe(earlier);
    expect(reports(earlier, { replicas: null }, B)).toBe(earlier);
    // at or above: only the last answer that showed it moves
    expect(reports(earlier, { replicas: 12, concurrency: 1 }, B)).toEqual({ ...earlier, seen: B });
    expect(reports(null, { replicas: 1 }, B)).toBeNull();
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
    const atZero = reports(at34, { concurrency: 0 }, B - 30_000);
    expect(atZero).toMatchObject({ ...at34, lowest: { concurrency: 0 } });
    const again = shows(atZero, { concurrency: 34 }, B + 2_000);
    expect(judgeVerdict(up, again, B + 30_000, { reported: { concurrency: 34 } })).toEqual({
      verdict: 'late',
      lateMs: 2_000,
      confirmedAt: B + 2_000,
    });
  });

  it('a 0 that is a value of our change on its way (the scale-down to the floor it replaced) is in force too', () => {
    // the change back up to 34 answered while the one down to 0 it replaced had taken effect
    const onItsWay = [{ concurrency: 34 }, { concurrency: 34 }, { concurrency: 0 }];
    expect(reports(at34, { concurrency: 0 }, B - 3_000, onItsWay)).toMatchObject({
      ...at34,
      lowest: { concurrency: 0 },
    });
  });

  it('a 0 or null while a change of ours to other values is on its way keeps what was known', () => {
    // a change to 20 on its way, the pipe at 34 before it: the live API's transient answer
    const onItsWay = [{ concurrency: 20 }, { concurrency: 34 }];
    expect(reports(at34, { concurrency: 0 }, B - 3_000, onItsWay)).toBe(at34);
    expect(reports(at34, { concurrency: null }, B - 3_000, onItsWay)).toBe(at34);
    expect(reports(at34, { concurrency: null }, B - 3_000)).toBe(at34);
    const shown = shows(reports(at34, { concurrency: 0 }, B - 3_000, onItsWay), { concurrency: 34 }, B + 2_000);
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
  const first = (values: { concurrency: number }, t: number) => shows(null, values, t);

  it('a scale-up confirmed before B and shown again after it, then a scale-down: still met at B', () => {
    const atHigh = first({ concurrency: 34 }, B - 2_000);
    // the scale-down's own answer, 1 s after B, still showed 34 (the change takes effect later)
    const shown = reports(atHigh, { concurrency: 34 }, B + 1_000);
    expect(shown).toEqual({ values: { concurrency: 34 }, at: B - 2_000, seen: B + 1_000 });
    const lowered = shows(shown, { concurrency: 3 }, B + 7_000);
    expect(lowered).toEqual({
      values: { concurrency: 3 },
      at: B - 2_000,
      lowest: { concurrency: 3 },
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
    const lowered = shows(atHigh, { concurrency: 3 }, B + 7_000);
    expect(judgeVerdict(up, lowered, B + 5_000, { final: true })).toEqual({ verdict: 'missed', reason: 'superseded' });
  });

  it('a start to the floor held before B, then a scale-up confirmed after its deadline: met, not superseded', () => {
    const atLow = reports(first({ concurrency: 1 }, B - 3_000), { concurrency: 1 }, B + 4_000);
    const raised = shows(atLow, { concurrency: 34 }, B + 9_000);
    expect(raised).toMatchObject({ values: { concurrency: 34 }, at: B + 9_000 });
    expect(judgeVerdict(down, raised, B + 5_000, { final: true })).toMatchObject({ verdict: 'met', lateMs: 0 });
  });

  it('a scale-up whose answer was lost, found in force by a read after the next start: the values before held until that read', () => {
    // the chaos run's objects pipe: 24 confirmed at B - 9 s; the change to 34 sent at B - 5 s was
    // answered to a replica killed just before (its answer lost), a read found 34 in force at
    // B + 9 s. The start at B wanted only the floor: the pipe held 24 or more all along.
    const at24 = first({ concurrency: 24 }, B - 9_000);
    const found = shows(at24, { concurrency: 34 }, B + 9_000);
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
    const atHigh = reports(first({ concurrency: 34 }, B - 60_000), { concurrency: 34 }, B - 30_000);
    const low = reports(atHigh, { concurrency: 1 }, B + 2_000);
    expect(low.earlier).toEqual([{ held: { concurrency: 34 }, at: B - 60_000, until: B - 30_000 }]);
    expect(judgeVerdict(up, low, B + 5_000, { final: true })).toEqual({ verdict: 'missed', reason: 'superseded' });
  });

  it('confirmed after B and before the deadline, moved on since: late by that much', () => {
    const atLow = first({ concurrency: 1 }, B - 60_000);
    const high = shows(atLow, { concurrency: 34 }, B + 2_000);
    const seen = reports(high, { concurrency: 34 }, B + 6_000);
    const after = reports(seen, { concurrency: 2 }, B + 8_000);
    expect(judgeVerdict(up, after, B + 9_000, { final: true })).toEqual({
      verdict: 'late',
      lateMs: 2_000,
      confirmedAt: B + 2_000,
    });
  });

  it('a transient 0, a null or the same values at the same instant again move nothing; at most a few spans are kept', () => {
    const c = first({ concurrency: 5 }, B);
    expect(reports(c, { concurrency: 0 }, B + 1, [{ concurrency: 6 }, { concurrency: 5 }])).toBe(c);
    expect(reports(c, { concurrency: null }, B + 1)).toBe(c);
    expect(shows(c, { concurrency: 5 }, B)).toEqual(c);
    let cur = c;
    for (let i = 1; i <= 10; i += 1) cur = shows(cur, { concurrency: 5 + i }, B + i * 1_000);
    expect(cur.earlier).toHaveLength(EARLIER_KEPT);
    expect(cur.earlier![0]).toEqual({ held: { concurrency: 14 }, at: B + 9_000, until: B + 10_000 });
  });
});

describe('values found in force by the read that settled a change of unknown outcome', () => {
  // its answer lost (its sender killed): the values may have been in force since its send
  const B = at('2026-11-23T09:00:00Z');
  const SENT = B - 5_000;
  const settle = (was: Confirmed | null, values: ScalingValues, t: number) =>
    confirmationAfterAnswer(was, { at: t, reported: values, confirms: values, onItsWay: [], outcomeUnknownFrom: SENT });

  it('a confirmation from that read says since when the values may have been in force', () => {
    const atLow = shows(null, { concurrency: 1 }, B - 60_000);
    const found = settle(atLow, { concurrency: 34 }, B + 9_000);
    expect(found).toMatchObject({ values: { concurrency: 34 }, at: B + 9_000, outcomeUnknownFrom: SENT });
    // kept while answers keep its instant, and with its span once replaced
    const again = reports(found, { concurrency: 34 }, B + 12_000);
    expect(again).toMatchObject({ at: B + 9_000, outcomeUnknownFrom: SENT, seen: B + 12_000 });
    const down = shows(again, { concurrency: 20 }, B + 20_000);
    expect(down.outcomeUnknownFrom).toBe(SENT);
    const up = shows(down, { concurrency: 30 }, B + 30_000);
    expect(up.outcomeUnknownFrom).toBeUndefined();
    expect(up.earlier?.[0]).toEqual({
      held: { concurrency: 20 },
      at: B + 9_000,
      until: B + 30_000,
      outcomeUnknownFrom: SENT,
    });
  });

  it('values the pipe held already keep their instant: nothing unknown about them', () => {
    const atHigh = shows(null, { concurrency: 34 }, B - 60_000);
    expect(settle(atHigh, { concurrency: 34 }, B + 9_000)).toEqual({
      values: { concurrency: 34 },
      at: B - 60_000,
      seen: B + 9_000,
    });
  });
});

describe('our own change down, carried out: the pipe holds its values from its answer on', () => {
  // The fleet chaos run's stream pipe: a read showed replicas 10 at B - 29 s; our scale-down to 1
  // (the window before ended) was answered 200 at B - 13 s still showing 10 (the platform puts a
  // change in force a few seconds after its answer). At B a window wanting 10 starts: the pipe ran
  // 1 then, whatever the last answer showed, and no read has shown 10 since.
  const B = at('2026-11-28T14:47:47Z');
  const up = { boundary: B, windows: ['w7'], target: { replicas: 10 }, deadline: B + 25_000 };
  const down = { boundary: B - 25_000, windows: ['w6'], target: { replicas: 1 }, deadline: B };
  const at10 = shows(null, { replicas: 10 }, B - 29_000);
  const carriedOut = (was: Confirmed, reported: ScalingValues, sent: ScalingValues, t: number) =>
    confirmationAfterAnswer(was, { at: t, reported, confirms: null, onItsWay: [sent], carriedOut: sent })!;

  it("its answer still shows the old values: they held until then, the change's values after", () => {
    const after = carriedOut(at10, { replicas: 10 }, { replicas: 1 }, B - 13_000);
    expect(after).toEqual({
      values: { replicas: 10 },
      at: B - 29_000,
      lowest: { replicas: 1 },
      seen: B - 13_000,
      earlier: [{ held: { replicas: 10 }, at: B - 29_000, until: B - 13_000 }],
    });
    // the start wanting 10 after it is not met by the read before it; the start it served is met
    expect(judgeVerdict(up, after, B + 1_000)).toBeNull();
    expect(judgeVerdict(up, after, B + 1_000, { final: true })).toEqual({ verdict: 'missed', reason: 'superseded' });
    expect(judgeVerdict(down, after, B - 10_000)).toMatchObject({ verdict: 'met', lateMs: 0 });
    // a read that shows 10 again confirms it from its own instant: late by that much
    const back = shows(after, { replicas: 10 }, B + 4_000);
    expect(judgeVerdict(up, back, B + 5_000)).toEqual({ verdict: 'late', lateMs: 4_000, confirmedAt: B + 4_000 });
  });

  it('a field it raises, or one it does not send, keeps what was held', () => {
    const c = shows(null, { replicas: 4, replicaCpuMillicores: 2000 }, B - 29_000);
    const after = carriedOut(
      c,
      { replicas: 4, replicaCpuMillicores: 2000 },
      { replicas: 8, replicaCpuMillicores: 500 },
      B - 13_000,
    );
    expect(after.lowest).toEqual({ replicaCpuMillicores: 500 });
    const memOnly = carriedOut(c, { replicas: 4 }, { replicaMemoryGb: 2 }, B - 13_000);
    expect(memOnly.lowest).toBeUndefined();
  });

  it('its answer shows it in force already: a confirmation of its values, nothing more to lower', () => {
    const c = confirmationAfterAnswer(at10, {
      at: B - 13_000,
      reported: { replicas: 1 },
      confirms: { replicas: 1 },
      onItsWay: [{ replicas: 1 }],
      carriedOut: { replicas: 1 },
    });
    expect(c).toMatchObject({ values: { replicas: 1 }, at: B - 29_000, lowest: { replicas: 1 } });
  });
});

describe('our own change down whose outcome is not known yet', () => {
  // sent before the boundary of a start wanting more, its answer lost (or still on its way): the
  // pipe may have gone down any time since its send
  const B = at('2026-11-28T14:47:47Z');
  const up = { boundary: B, windows: ['w7'], target: { replicas: 10 }, deadline: B + 25_000 };
  const at10 = shows(null, { replicas: 10 }, B - 29_000);
  const pending = { values: { replicas: 1 }, sentAt: B - 13_000 };

  it('a confirmation no answer showed since the boundary waits for the settle read, then is no verdict', () => {
    expect(judgeVerdict(up, at10, B + 30_000, { outcomeUnknown: pending })).toBeNull();
    expect(judgeVerdict(up, at10, B + 30_000, { outcomeUnknown: pending, final: true })).toEqual({
      verdict: 'excluded',
      reason: 'outcome_unknown',
    });
  });

  it('an answer that showed the target at or after the boundary vouches for it; a change sent after it changes nothing', () => {
    const seenAfter = reports(at10, { replicas: 10 }, B + 1_000);
    expect(judgeVerdict(up, seenAfter, B + 2_000, { outcomeUnknown: pending })).toMatchObject({ verdict: 'met' });
    const later = { values: { replicas: 1 }, sentAt: B + 500 };
    expect(judgeVerdict(up, at10, B + 2_000, { outcomeUnknown: later })).toMatchObject({ verdict: 'met' });
  });
});
