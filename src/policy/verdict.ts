// Window verdicts: every start of a window gets, per pipe, the answer the product stands on: was
// the pipe confirmed at the window's target by the boundary (met), after it (late, by how much),
// or not within the limit (missed)? "At target" is each field of the target at or above the
// lowest value the winning windows accept (within the pipe's bounds and the platform's ranges:
// lead-plan.ts floors), and "confirmed" is a read that showed it in force, never a PATCH's 200.
// A pipe the operator took out of the policy's hands at the start (paused, an override, a freeze
// holding its change, a dry run) is `excluded`: its verdict says so and counts in no share. So is
// a start Redis lost the daemon's state around (`state_lost`) unless reads show it met: its sends
// and reads before the loss are gone, and scaling is held until every pipe is read again. And so is
// a start the pipe had not been read by (`unseen`): its first read came after the boundary, and it
// showed the target, or none came before the verdict was due; a read in the window that never
// showed the target keeps it missed.
// Pure: the policy, instants and what the record holds in; the daemon keeps the due verdict.
import { SCALING_LIMITS, type ScalingField, type ScalingValues } from '../api/index.js';
import { needAround } from './lead-plan.js';
import type { Bounds, Decision, Policy } from './types.js';
import { activeWindows, nextBoundary, occurrenceAt } from './windows.js';

export const VERDICTS = ['met', 'late', 'missed', 'excluded'] as const;
export type VerdictName = (typeof VERDICTS)[number];

/** Why a pipe had no say in a window start: what took it out of the policy's hands, the daemon's
 *  state lost around it (stateLostAround), or the pipe not read by then (judgeVerdict `seenAt`). */
export const EXCLUSIONS = ['paused', 'override', 'freeze', 'dry_run', 'state_lost', 'unseen'] as const;
export type Exclusion = (typeof EXCLUSIONS)[number];

/** Missed: not confirmed by the deadline (the limit, or the window's end), or by the next window start. */
export const MISSES = ['not_confirmed', 'superseded'] as const;
export type Miss = (typeof MISSES)[number];

/** Without `evaluate.actuation`, a window start not confirmed within 10 minutes is missed
 *  (ACTUATION_DEFAULTS.maxMs: the most a lead plan ever counts on for a change). */
export const VERDICT_LIMIT_DEFAULT_MS = 600_000;

/** A window starting at `boundary`, the windows that win from then on and the target they ask for. */
export interface WindowStart {
  readonly boundary: number;
  readonly windows: readonly string[];
  /** The lowest value of each field of the pipe's kind the winners accept. */
  readonly target: ScalingValues;
  /** The same just before the boundary: what the schedule needed then (early-capacity.ts). */
  readonly before: ScalingValues;
  /** When the first of the starting windows ends. */
  readonly end: number;
}

/** A verdict to give: the window start and the instant after which an unconfirmed pipe has missed it. */
export interface VerdictDue {
  readonly boundary: number;
  readonly windows: readonly string[];
  readonly target: ScalingValues;
  readonly deadline: number;
  /** What the schedule needed just before the boundary (absent in a verdict an older version
   *  opened): the step whose capacity early and short the verdict reports. */
  readonly before?: ScalingValues;
}

/** The last confirmation (the record's `confirmed`): the target values of a change and since when
 *  reads have shown the pipe at them or above (confirmedSince), at `at`. The daemon's confirmation
 *  (daemon/lifecycle/answers.ts) writes it; a verdict reads it. */
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
}

/** A confirmation since replaced: answers showed the pipe at least at `held` from `at` to `until`. */
export interface HeldSpan {
  readonly held: ScalingValues;
  readonly at: number;
  readonly until: number;
}

/** How many replaced confirmations a record keeps: enough for a start judged a few windows late. */
export const EARLIER_KEPT = 4;

function sameValues(a: ScalingValues, b: ScalingValues): boolean {
  const ka = Object.keys(a) as ScalingField[];
  return ka.length === Object.keys(b).length && ka.every((f) => a[f] === b[f]);
}

/**
 * The last confirmation once an answer at `now` that reported `reported` made `next` of `was`
 * (confirmedSince, confirmedAfterReport; undefined or null: left it as it was). When what it held changes
 * (another instant, other values, a lower report), `was` is kept as a span up to the last answer
 * that showed it (this one, or `seen`), never later: the pipe may have gone down any time after.
 * Otherwise an answer that showed every field at least at what is held moves `seen` to `now`.
 */
export function confirmedWithEarlier(
  was: Confirmed | null,
  next: Confirmed | null | undefined,
  reported: Partial<Record<ScalingField, number | null>>,
  now: number,
): Confirmed | undefined {
  const made = next ?? undefined;
  if (was === null) return made === undefined ? undefined : { ...made, seen: now };
  const held = heldSince(was);
  // the answer showed the pipe at least at what was held (a transient 0 or null shows nothing)
  const showed = (Object.keys(held) as ScalingField[]).every((f) => {
    const v = reported[f];
    return typeof v === 'number' && v > 0 && v >= (held[f] ?? 0);
  });
  if (made === undefined || made === was) return showed && (was.seen ?? was.at) < now ? { ...was, seen: now } : made;
  const { earlier: _e, seen: _s, ...rest } = made;
  if (made.at === was.at && sameValues(held, heldSince(made)))
    return { ...rest, seen: now, ...(was.earlier ? { earlier: was.earlier } : {}) };
  // the span ends at this answer when it still showed what was held (a scale-up shown), else at
  // the last answer that did
  const span: HeldSpan = { held, at: was.at, until: showed ? now : (was.seen ?? was.at) };
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

/**
 * The last confirmation once an answer reported the pipe at `reported`: a field below what the
 * pipe held since the confirmation is kept as its lowest, so that a later confirmation of higher
 * values counts from its own read, not from one before the pipe went down. A null is no report,
 * nor is a 0 the field cannot hold (below the platform's range: the live API's transient answer
 * right after a change). A 0 it can hold (concurrency) is the value in force, unless a change of
 * ours is on its way (`onItsWay`: its target and the values it replaces) and none of its values is
 * 0: then it may be the platform's transient answer to that change, and what was known stands.
 */
export function confirmedAfterReport(
  since: Confirmed | null,
  reported: Partial<Record<ScalingField, number | null>>,
  onItsWay: readonly ScalingValues[] = [],
): Confirmed | null {
  if (since === null) return null;
  const held = heldSince(since);
  const lowest: ScalingValues = { ...(since.lowest ?? {}) };
  let lower = false;
  for (const f of Object.keys(since.values) as ScalingField[]) {
    const v = reported[f];
    const h = held[f];
    if (typeof v !== 'number' || h === undefined || v >= h) continue;
    if (v === 0 && transientZero(f, onItsWay)) continue;
    lowest[f] = v;
    lower = true;
  }
  return lower ? { ...since, lowest } : since;
}

/** Whether a 0 reported for `f` may be the platform's transient answer rather than the value in
 *  force: the field cannot be 0, or a change of ours on its way sets it to none of its values. */
function transientZero(f: ScalingField, onItsWay: readonly ScalingValues[]): boolean {
  if (SCALING_LIMITS[f].min > 0) return true;
  return onItsWay.length > 0 && onItsWay.every((v) => v[f] !== 0);
}

/**
 * The last confirmation once an answer shows `values` in force at `now`: the instant of the one
 * before, `since`, when it held each of them already or more (the same values shown again, a
 * scale-down from it, a change the pipe was at already: the pipe was at least at them since then),
 * else `now`. So a start whose target a read showed in force before its boundary is met at the
 * boundary, though its change (a scale-down to the platform's floor, or a change to the values the
 * pipe held) is decided and shown in force only after it.
 */
export function confirmedSince(since: Confirmed | null, values: ScalingValues, now: number): Confirmed {
  const before = since === null ? null : heldSince(since);
  const held =
    before !== null &&
    (Object.keys(values) as ScalingField[]).every((f) => {
      const want = values[f];
      const had = before[f];
      return want === undefined || (had !== undefined && had >= want);
    });
  return held && since !== null
    ? { values, at: since.at, ...(since.lowest !== undefined ? { lowest: since.lowest } : {}) }
    : { values, at: now };
}

export type Judged =
  | { readonly verdict: 'met' | 'late'; readonly lateMs: number; readonly confirmedAt: number }
  | { readonly verdict: 'missed'; readonly reason: Miss }
  | { readonly verdict: 'excluded'; readonly reason: 'state_lost' | 'unseen' };

/** When Redis lost the daemon's state: from the loss to the instant every pipe had been read again
 *  (null: still being read; scaling is held all that time). */
export interface StateLoss {
  readonly from: number;
  readonly to: number | null;
}

/**
 * Whether a loss of the daemon's state touched a window start: it came before the start's
 * deadline, and its hold lasted into the span in which a change for the start goes out (from
 * `limitMs` before the boundary: the most a lead plan counts on for a change). What was sent and
 * read for the start before the loss is gone, and nothing was sent while it was held.
 */
export function stateLostAround(
  due: Pick<VerdictDue, 'boundary' | 'deadline'>,
  loss: StateLoss | null,
  limitMs: number,
): boolean {
  if (loss === null) return false;
  return loss.from <= due.deadline && (loss.to ?? Infinity) > due.boundary - limitMs;
}

/**
 * The window starts of a policy in (from, to] for a pipe with these bounds and fields: a boundary
 * at which a window that was not active before wins (a window starting under a higher-priority one
 * drives nothing, and an end is no start). Starts whose target sets no field of the kind are left out.
 */
export function windowStartsIn(
  policy: Policy,
  bounds: Bounds,
  fields: readonly ScalingField[],
  from: number,
  to: number,
): WindowStart[] {
  const out: WindowStart[] = [];
  for (let t = nextBoundary(policy.windows, from, to); t !== null; t = nextBoundary(policy.windows, t, to)) {
    const was = activeWindows(policy.windows, t - 1);
    const active = new Set(was.active);
    const { winners } = activeWindows(policy.windows, t);
    const starting = winners.filter((w) => !active.has(w));
    if (starting.length === 0) continue;
    // the step the lead plan and early-capacity.ts count for this boundary (needAround)
    const { before, after: target } = needAround(policy, bounds, fields, t);
    if (Object.keys(target).length === 0) continue;
    const end = Math.min(...starting.map((w) => occurrenceAt(w, t)?.end ?? t));
    out.push({ boundary: t, windows: winners.map((w) => w.name), target, before, end });
  }
  return out;
}

/** The verdict due for a start: missed after `limitMs`, or at the window's end when that is sooner. */
export function verdictDue(start: WindowStart, limitMs: number): VerdictDue {
  const { boundary, windows, target, before, end } = start;
  return { boundary, windows, target, deadline: Math.min(boundary + limitMs, end), before };
}

/** Whether every field of the target is there and at or above it. */
export function atTarget(values: ScalingValues, target: ScalingValues): boolean {
  return (Object.keys(target) as ScalingField[]).every((f) => {
    const want = target[f];
    const have = values[f];
    return want === undefined || (have !== undefined && have >= want);
  });
}

/**
 * The verdict on a due window start at `now`, or null while it is open: met when the pipe was
 * confirmed at target at or before the boundary, late by (confirmed - boundary) when after it but
 * by the deadline, missed once the deadline has passed without. `final`: the next window start
 * ends it now (missed: superseded, unless it is met or late already). `reported`: what the
 * platform last reported, which a confirmation must not contradict. `stateLost`: the daemon's
 * state was lost around the start (stateLostAround): a read that showed the target by the boundary
 * (one that rebuilt the state counts) still makes it met; anything else is no verdict (excluded,
 * state_lost) rather than late or missed on evidence that is gone. `seenAt`: the record's first
 * read of the pipe; after the boundary, nothing showed what the pipe held then: a confirmation
 * since cannot tell late from met, and with no read by the deadline (or the next start) nothing
 * tells missed either (excluded, unseen); a read in the window that never showed the target
 * leaves it missed.
 */
export function judgeVerdict(
  due: VerdictDue,
  confirmed: Confirmed | null,
  now: number,
  opts: { final?: boolean; reported?: ScalingValues; stateLost?: boolean; seenAt?: number } = {},
): Judged | null {
  if (now < due.boundary && !opts.final) return null;
  // A confirmation the platform's latest report contradicts (a read since showed less: a change
  // made by hand) does not count until a read shows the target again.
  const stands = opts.reported === undefined || atTarget(opts.reported, due.target);
  // the record's first read came after the boundary: nothing read showed what the pipe held then
  const seenAt = opts.seenAt ?? -Infinity;
  const unseen = seenAt > due.boundary;
  // the instants since which the pipe held the target by the deadline: the confirmation in force,
  // or one it replaced that still held at the boundary (or from after it)
  const since: number[] = [];
  if (confirmed !== null && stands && confirmed.at <= due.deadline && atTarget(heldSince(confirmed), due.target))
    since.push(confirmed.at);
  for (const s of confirmed?.earlier ?? [])
    if (s.at <= due.deadline && s.until >= due.boundary && atTarget(s.held, due.target)) since.push(s.at);
  if (since.length > 0) {
    const at = since.reduce((best, t) => (Math.max(t, due.boundary) < Math.max(best, due.boundary) ? t : best));
    const lateMs = Math.max(0, at - due.boundary);
    if (lateMs === 0 || (!opts.stateLost && !unseen))
      return { verdict: lateMs === 0 ? 'met' : 'late', lateMs, confirmedAt: at };
  }
  if (opts.stateLost) return { verdict: 'excluded', reason: 'state_lost' };
  const readBy = opts.final ? Math.min(now, due.deadline) : due.deadline;
  if (unseen && (since.length > 0 || seenAt > readBy)) return { verdict: 'excluded', reason: 'unseen' };
  if (opts.final) return { verdict: 'missed', reason: 'superseded' };
  return now >= due.deadline ? { verdict: 'missed', reason: 'not_confirmed' } : null;
}

/** What took the pipe out of the policy's hands at a window start (its decision then, and whether
 *  a pause was in force: a pipe never read is skipped as unknown before its pause is looked at). */
export function exclusionOf(decision: Decision, dryRun: boolean, paused = false): Exclusion | null {
  if (paused || (decision.action === 'skip' && decision.reasons.some((r) => r.code === 'paused'))) return 'paused';
  if (decision.override) return 'override';
  if (decision.freeze) return 'freeze';
  if (dryRun) return 'dry_run';
  return null;
}
