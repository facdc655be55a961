// The last confirmation (a pipe record's `confirmed`): the values answers showed the pipe at or
// above, and since when. The daemon's answers (daemon/lifecycle/answers.ts) make it, one answer at
// a time (confirmationAfterAnswer); a window verdict (verdict.ts) reads it: "confirmed" is a read
// that showed the values in force, never a PATCH's 200.
// Pure: the confirmation and an answer in, the confirmation after it out.
import { SCALING_LIMITS, type ScalingField, type ScalingValues } from '../api/index.js';

/** The last confirmation: the values of a change (or what the pipe held) and since when answers
 *  have shown the pipe at them or above, at `at`. */
export interface Confirmed {
  readonly values: ScalingValues;
  readonly at: number;
  /** The lowest value of each field an answer reported since `at`, where below `values` (a change
   *  back down, or a hand's, that a later answer may have undone): the pipe held only these all
   *  along. Absent: every report since showed at least `values`. */
  readonly lowest?: ScalingValues;
  /** The last answer that showed the pipe at least at what it held since `at` (absent: `at`). */
  readonly seen?: number;
  /** Confirmations it replaced, newest first (at most EARLIER_KEPT): a start judged after the
   *  confirmation moved on (its evaluation held up past later changes) is judged by what held at
   *  its boundary. */
  readonly earlier?: readonly HeldSpan[];
  /** Found in force by the read that settled a change of ours of unknown outcome (its answer lost:
   *  its sender killed or stalled), sent at this instant: the values may have been in force from
   *  any instant between the two. Absent: `at` is when a read first showed them. */
  readonly outcomeUnknownFrom?: number;
}

/** A confirmation since replaced: answers showed the pipe at least at `held` from `at` to `until`
 *  (`outcomeUnknownFrom`: the confirmation's, when it had one). */
export interface HeldSpan {
  readonly held: ScalingValues;
  readonly at: number;
  readonly until: number;
  readonly outcomeUnknownFrom?: number;
}

/** How many replaced confirmations a record keeps: enough for a start judged a few windows late. */
export const EARLIER_KEPT = 4;

/** One answer of the platform (a read, or a change's 200) as the last confirmation takes it. */
export interface ConfirmationAnswer {
  /** When it came. */
  readonly at: number;
  /** What it reported of each field (null: not reported). */
  readonly reported: Partial<Record<ScalingField, number | null>>;
  /** The values it shows in force and confirms (the target of a change, or what the pipe holds,
   *  in a state that takes scaling), or null: it confirms nothing, and is only a report. */
  readonly confirms: ScalingValues | null;
  /** Our change on its way when it came: its target and the values it replaces (empty: none). */
  readonly onItsWay: readonly ScalingValues[];
  /** The answer is the read that found in force a change of ours whose outcome was unknown, sent
   *  at this instant: what it confirms from its own instant may have been in force since then. */
  readonly outcomeUnknownFrom?: number;
  /** The answer is the 200 of this change of ours: the platform puts it in force from now on (at
   *  once or after a delay), whatever the answer still shows. */
  readonly carriedOut?: ScalingValues;
}

/**
 * The last confirmation after an answer (`was` itself when the answer changes nothing).
 * - A field the answer reports below what the pipe held since `was`, or that our change it is the
 *   200 of (`carriedOut`) sets below it, is kept as its lowest, so a
 *   later confirmation of higher values counts from its own read. A null is no report, nor is a
 *   0 the field cannot hold (below the platform's range: the live API's transient answer right
 *   after a change). A 0 it can hold (concurrency) is the value in force, unless a change of ours
 *   is on its way and none of its values is 0: then it may be the transient answer to that change.
 * - Values it confirms keep the instant of `was` when the pipe held each of them already or more
 *   (the same values shown again, a scale-down, a change to values it held), else it is the
 *   answer's instant. So a start whose target a read showed before its boundary is met at the
 *   boundary, though its change (to the floor, or to values held) is shown in force only after it.
 * - When what is held changes (another instant, other values, a lower report), `was` is kept as a
 *   span up to the last answer that showed it (this one, or its `seen`), never later: the pipe may
 *   have gone down any time after. Otherwise an answer that showed every field at least at what
 *   is held moves `seen` to its instant.
 */
export function confirmationAfterAnswer(was: Confirmed | null, answer: ConfirmationAnswer): Confirmed | null {
  const { at: now, reported, confirms } = answer;
  const byReport = lowerByReport(was, reported, answer.onItsWay);
  // our change it is the 200 of holds from now on: what it sets lower is as good as reported
  const ours = answer.carriedOut;
  const lowered = ours === undefined ? byReport : lowerByReport(byReport, ours, [ours]);
  const made = confirms !== null ? confirmedFrom(lowered, confirms, now, answer.outcomeUnknownFrom) : lowered;
  if (was === null) return made === null ? null : { ...made, seen: now };
  const held = heldSince(was);
  // the answer showed the pipe at least at what was held (a 0 or null shows nothing)
  const showed = (Object.keys(held) as ScalingField[]).every((f) => {
    const v = reported[f];
    return typeof v === 'number' && v > 0 && v >= (held[f] ?? 0);
  });
  if (made === null || made === was) return showed && (was.seen ?? was.at) < now ? { ...was, seen: now } : was;
  const { earlier: _e, seen: _s, ...rest } = made;
  if (made.at === was.at && sameValues(held, heldSince(made)))
    return { ...rest, seen: now, ...(was.earlier ? { earlier: was.earlier } : {}) };
  // the span ends at this answer when it still showed what was held (a scale-up shown), else at
  // the last answer that did
  const span: HeldSpan = {
    held,
    at: was.at,
    until: showed ? now : (was.seen ?? was.at),
    ...(was.outcomeUnknownFrom !== undefined ? { outcomeUnknownFrom: was.outcomeUnknownFrom } : {}),
  };
  return { ...rest, seen: now, earlier: [span, ...(was.earlier ?? [])].slice(0, EARLIER_KEPT) };
}

/** The values the pipe held at least from the confirmation's instant on: its values, each lowered
 *  to the lowest an answer reported since. */
export function heldSince(c: Confirmed): ScalingValues {
  if (c.lowest === undefined) return c.values;
  const out: ScalingValues = { ...c.values };
  for (const [f, v] of Object.entries(c.lowest) as [ScalingField, number][]) {
    const had = out[f];
    if (had !== undefined && v < had) out[f] = v;
  }
  return out;
}

/** `was` with each field the answer reported below what it held kept as its lowest (itself when
 *  none: a null, a transient 0, a report at or above, a field it does not name). */
function lowerByReport(
  was: Confirmed | null,
  reported: ConfirmationAnswer['reported'],
  onItsWay: readonly ScalingValues[],
): Confirmed | null {
  if (was === null) return null;
  const held = heldSince(was);
  const lowest: ScalingValues = { ...(was.lowest ?? {}) };
  let lower = false;
  for (const f of Object.keys(was.values) as ScalingField[]) {
    const v = reported[f];
    const h = held[f];
    if (typeof v !== 'number' || h === undefined || v >= h) continue;
    if (v === 0 && transientZero(f, onItsWay)) continue;
    lowest[f] = v;
    lower = true;
  }
  return lower ? { ...was, lowest } : was;
}

/** Whether a 0 reported for `f` may be the platform's transient answer rather than the value in
 *  force: the field cannot be 0, or a change of ours on its way sets it to none of its values. */
function transientZero(f: ScalingField, onItsWay: readonly ScalingValues[]): boolean {
  if (SCALING_LIMITS[f].min > 0) return true;
  return onItsWay.length > 0 && onItsWay.every((v) => v[f] !== 0);
}

/** A confirmation of `values` shown at `now`: since `since`'s instant when the pipe held each of
 *  them already or more, else since `now` (`unknownFrom`: or from then, not known when). */
function confirmedFrom(
  since: Confirmed | null,
  values: ScalingValues,
  now: number,
  unknownFrom: number | undefined,
): Confirmed {
  const before = since === null ? null : heldSince(since);
  const held =
    before !== null &&
    (Object.keys(values) as ScalingField[]).every((f) => {
      const want = values[f];
      const had = before[f];
      return want === undefined || (had !== undefined && had >= want);
    });
  if (!held || since === null)
    return { values, at: now, ...(unknownFrom !== undefined ? { outcomeUnknownFrom: unknownFrom } : {}) };
  const { lowest, outcomeUnknownFrom } = since;
  return {
    values,
    at: since.at,
    ...(lowest !== undefined ? { lowest } : {}),
    ...(outcomeUnknownFrom !== undefined ? { outcomeUnknownFrom } : {}),
  };
}

function sameValues(a: ScalingValues, b: ScalingValues): boolean {
  const ka = Object.keys(a) as ScalingField[];
  return ka.length === Object.keys(b).length && ka.every((f) => a[f] === b[f]);
}
