// Window verdicts: every start of a window gets, per pipe, the answer the product stands on: was
// the pipe confirmed at the window's target by the boundary (met), after it (late, by how much),
// or not within the limit (missed)? "At target" is each field of the target at or above the
// lowest value the winning windows accept (within the pipe's bounds and the platform's ranges:
// lead-plan.ts floors), and "confirmed" is the record's last confirmation (confirmation.ts).
// A pipe the operator took out of the policy's hands at the start (paused, an override, a freeze
// holding its change, a dry run) is `excluded`: its verdict says so and counts in no share. So is
// a start Redis lost the daemon's state around (`state_lost`) unless reads show it met: its sends
// and reads before the loss are gone, and scaling is held until every pipe is read again. And so is
// a start the pipe had not been read by (`unseen`): its first read came after the boundary, and it
// showed the target, or none came before the verdict was due; a read in the window that never
// showed the target keeps it missed. And so is a start whose change's answer was lost (its sender
// killed) and that only the read settling it showed at target after the boundary, or not yet
// (`outcome_unknown`): it may have been in force any time since its send.
// Pure: the policy, instants and what the record holds in; the daemon keeps the due verdict.
import type { ScalingField, ScalingValues } from '../api/index.js';
import { heldSince, type Confirmed } from './confirmation.js';
import { needAround } from './lead-plan.js';
import type { Bounds, Decision, Policy } from './types.js';
import { activeWindows, nextBoundary, occurrenceAt } from './windows.js';

export const VERDICTS = ['met', 'late', 'missed', 'excluded'] as const;
export type VerdictName = (typeof VERDICTS)[number];

/** Why a pipe had no say in a window start: what took it out of the policy's hands, the daemon's
 *  state lost around it (stateLostAround), the pipe not read by then (judgeVerdict `seenAt`), or
 *  its change's answer lost, so when it came into force is not known (judgeVerdict). */
export const EXCLUSIONS = [
  'paused',
  'override',
  'freeze',
  'dry_run',
  'state_lost',
  'unseen',
  'outcome_unknown',
] as const;
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

export type Judged =
  | { readonly verdict: 'met' | 'late'; readonly lateMs: number; readonly confirmedAt: number }
  | { readonly verdict: 'missed'; readonly reason: Miss }
  | { readonly verdict: 'excluded'; readonly reason: 'state_lost' | 'unseen' | 'outcome_unknown' };

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
 * leaves it missed. A change of ours toward the target sent by the deadline whose outcome was not
 * known (its answer lost: the confirmation's `outcomeUnknownFrom`, or `outcomeUnknown` when still
 * unsettled: its values and send) may have been in force any time from its send to the read that
 * found it: a start such a read confirms after its boundary, or one it is still pending for, is no
 * verdict (excluded, outcome_unknown); past the deadline a pending one waits for its settle read.
 * So does a start whose confirmation no answer showed at or after its boundary while such a change,
 * sent by the boundary, sets a field below its target: the pipe may have gone down at any instant since.
 */
export function judgeVerdict(
  due: VerdictDue,
  confirmed: Confirmed | null,
  now: number,
  opts: {
    final?: boolean;
    reported?: ScalingValues;
    stateLost?: boolean;
    seenAt?: number;
    outcomeUnknown?: { readonly values: ScalingValues; readonly sentAt: number };
  } = {},
): Judged | null {
  if (now < due.boundary && !opts.final) return null;
  // A confirmation the platform's latest report contradicts (a read since showed less: a change
  // made by hand) does not count until a read shows the target again.
  const stands = opts.reported === undefined || atTarget(opts.reported, due.target);
  // the record's first read came after the boundary: nothing read showed what the pipe held then
  const seenAt = opts.seenAt ?? -Infinity;
  const unseen = seenAt > due.boundary;
  // a change of unknown outcome sent by then could have put the target in force in time
  const couldHaveMade = (from: number | undefined): boolean => from !== undefined && from <= due.deadline;
  // the instants since which the pipe held the target by the deadline: the confirmation in force,
  // or one it replaced that still held at the boundary (or from after it)
  const since: { readonly at: number; readonly unknownFrom?: number | undefined }[] = [];
  // a change of ours sent by the boundary, not settled yet, that sets a field below the target may
  // have taken the pipe down at any instant since its send: the confirmation holds only as far as
  // an answer showed it, so one no answer showed at or after the boundary waits for the settle read
  const pending = opts.outcomeUnknown;
  const undoing = pending !== undefined && pending.sentAt <= due.boundary && !atTarget(pending.values, due.target);
  const vouched = (c: Confirmed): boolean => !undoing || (c.seen ?? c.at) >= due.boundary;
  if (
    confirmed !== null &&
    stands &&
    vouched(confirmed) &&
    confirmed.at <= due.deadline &&
    atTarget(heldSince(confirmed), due.target)
  )
    since.push({ at: confirmed.at, unknownFrom: confirmed.outcomeUnknownFrom });
  for (const s of confirmed?.earlier ?? [])
    if (s.at <= due.deadline && s.until >= due.boundary && atTarget(s.held, due.target))
      since.push({ at: s.at, unknownFrom: s.outcomeUnknownFrom });
  if (since.length > 0) {
    const first = since.reduce((best, t) =>
      Math.max(t.at, due.boundary) < Math.max(best.at, due.boundary) ? t : best,
    );
    const lateMs = Math.max(0, first.at - due.boundary);
    if (lateMs === 0 || (!opts.stateLost && !unseen && !couldHaveMade(first.unknownFrom)))
      return { verdict: lateMs === 0 ? 'met' : 'late', lateMs, confirmedAt: first.at };
  }
  if (opts.stateLost) return { verdict: 'excluded', reason: 'state_lost' };
  const readBy = opts.final ? Math.min(now, due.deadline) : due.deadline;
  if (unseen && (since.length > 0 || seenAt > readBy)) return { verdict: 'excluded', reason: 'unseen' };
  const found =
    confirmed !== null && couldHaveMade(confirmed.outcomeUnknownFrom) && atTarget(heldSince(confirmed), due.target);
  if (found || since.some((s) => couldHaveMade(s.unknownFrom)))
    return { verdict: 'excluded', reason: 'outcome_unknown' };
  if (
    (pending !== undefined && couldHaveMade(pending.sentAt) && atTarget(pending.values, due.target)) ||
    (undoing && confirmed !== null && stands && atTarget(heldSince(confirmed), due.target))
  )
    return opts.final ? { verdict: 'excluded', reason: 'outcome_unknown' } : null;
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
