// Every change is confirmed (docs/architecture.md#every-change-is-confirmed): after a change the
// platform answered 200, the pipe is `confirming` until a read shows its target in force in a state
// that takes scaling. Pure: when the confirmation reads are due (a scale-up's at the expected
// propagation, any other change's after a probe before it, then reads 15 % apart up to the limit), what a read shows (in force, not
// yet, or someone else's values), what a change's answer makes of the record's confirmation, and
// which confirmations are actuation samples.
import { KIND_FIELDS, SCALABLE_PIPE_STATES, type PipeKind, type PipeScaling, type PipeState } from '../../api/index.js';
import type { ScalingField, ScalingValues } from '../../api/index.js';
import { FIRST_READ_MS, type ActuationSettings } from '../../policy/index.js';
import { sameValues } from '../model/scaling-values.js';
import type { Confirming } from '../model/record.js';
import type { SampleSkip } from '../model/events.js';

/** When and how long confirmation reads go (situation.ts, from evaluate.actuation). */
export interface ConfirmTiming {
  /** The expected propagation: the pipe's measured p95, else evaluate.actuation.expected (capped). */
  readonly expectedMs: number;
  /** A change not in force this long after it was sent is unconfirmed (evaluate.actuation.max). */
  readonly limitMs: number;
  /** The soonest a confirmation read follows a send, or another read (evaluate.actuation.firstRead). */
  readonly firstReadMs: number;
}

/** evaluate.actuation.firstRead's default (lead-plan.ts, which counts it too). */
export { FIRST_READ_MS };
/**
 * A change that is not a scale-up is probed at this share of the expected actuation E before its
 * confirming read at E. A sample is the instant the read that shows the target was queued for, so
 * it is never below the platform's propagation D: reads at E alone only let the estimate grow, and
 * a platform that got faster is never seen. With the probe, an estimate above D/0.85 is measured
 * down by 15 % at each turn-over of the samples, and one in [D, D/0.85 = 1.18 x D] holds. A
 * scale-up is read once, at E (the lead plan counts one read for it, lead-schedule.ts), and a
 * second time only when that read came before its target was in force.
 */
export const PROBE_SHARE = 0.85;
/** After the confirming read, each read follows the one before by this share of the time since
 *  the send (a quarter of firstRead at least): a change slower than its estimate is seen within
 *  15 % of when it came into force, and its sample lifts the estimate by no more. */
export const BACKOFF_GROWTH = 0.15;
/** A change not in force within the limit is sent once more (the same target), then left
 *  unconfirmed until a read shows it or a new target is sent; a reload sends it once more. */
export const MAX_RESENDS = 1;
/** Earlier targets kept as "not yet" values: enough for a change or two in a row on their way. */
const NOT_YET_KEPT = 4;

export function confirmTiming(a: ActuationSettings, measuredMs?: number): ConfirmTiming {
  const ms = measuredMs !== undefined && Number.isFinite(measuredMs) ? measuredMs : a.expectedMs;
  return {
    expectedMs: Math.min(Math.max(0, ms), a.maxMs),
    limitMs: a.maxMs,
    firstReadMs: Math.max(1, a.firstReadMs ?? FIRST_READ_MS),
  };
}

/**
 * The confirmation reads' instants after a send at `sentAt`, in order, none past the limit: for a
 * change that is not a scale-up a probe at PROBE_SHARE of the expected actuation E, then (for every
 * change) the confirming read at E (firstRead at least), then reads each BACKOFF_GROWTH of the time
 * since the send after the one before, the last at the limit. One read by E for a scale-up, as the
 * lead plan counts; two for any other change.
 */
export function* confirmationReads(sentAt: number, t: ConfirmTiming, scaleUp = false): Generator<number> {
  const end = sentAt + t.limitMs;
  const first = firstDueAt(sentAt, t, scaleUp);
  yield first;
  let at = confirmingAt(sentAt, t);
  if (at > first) yield at;
  while (at < end) {
    at = Math.min(at + Math.ceil(Math.max(BACKOFF_GROWTH * (at - sentAt), t.firstReadMs / 4)), end);
    yield at;
  }
}

/** The first confirmation read after a send at `sentAt`: the confirming read of a scale-up, else
 *  the probe; never before firstRead, never past the limit. */
export function firstDueAt(sentAt: number, t: ConfirmTiming, scaleUp = false): number {
  const share = scaleUp ? 1 : PROBE_SHARE;
  return sentAt + Math.min(Math.max(t.firstReadMs, Math.ceil(share * t.expectedMs)), t.limitMs);
}

/** The confirming read's instant after a send at `sentAt`: the expected actuation E, firstRead at
 *  the soonest, never past the limit (the probe of a change that is not a scale-up comes before it). */
export function confirmingAt(sentAt: number, t: ConfirmTiming): number {
  return sentAt + Math.min(Math.max(t.firstReadMs, t.expectedMs), t.limitMs);
}

/**
 * The instant a read due at `dueAt` that went at `now` stands for, as its actuation sample counts
 * it: its due instant, its wait in the queue not counted; but a probe (due before the confirming
 * read) that went at or after the confirming read's instant stands for that instant. Such a probe
 * waited past the instant the estimate was counted on, so it cannot tell whether the change was in
 * force at the probe's instant: sampled there, a boundary's scale-downs, their probes waiting behind
 * its changes, measured the estimate down by 15 % without the platform getting any faster.
 */
export function sampledAt(
  c: Pick<Confirming, 'lastSentAt'> & { readonly dueAt: number },
  now: number,
  t: ConfirmTiming,
): number {
  const confirming = confirmingAt(c.lastSentAt, t);
  return c.dueAt < confirming && now >= confirming ? confirming : c.dueAt;
}

/** Whether the change being confirmed raises some field over what the pipe held before it. */
export function isScaleUp(c: Pick<Confirming, 'target' | 'notYet'>): boolean {
  const before = c.notYet[0] ?? {};
  return Object.entries(c.target).some(([f, v]) => {
    const b = before[f as ScalingField];
    return b === undefined || v > b;
  });
}

/**
 * The read after one at `now` that found the target not in force: the first of the send's reads
 * (confirmationReads) after `now`, so a read that came late (a tick, the read share's queue) stands
 * for those it passed; null once the limit has passed.
 */
export function nextDueAt(
  c: Pick<Confirming, 'lastSentAt'> & Partial<Pick<Confirming, 'target' | 'notYet'>>,
  now: number,
  t: ConfirmTiming,
): number | null {
  if (now >= c.lastSentAt + t.limitMs) return null;
  const up = c.target !== undefined && c.notYet !== undefined && isScaleUp({ target: c.target, notYet: c.notYet });
  for (const at of confirmationReads(c.lastSentAt, t, up)) if (at > now) return at;
  return c.lastSentAt + t.limitMs;
}

/** Whether the limit has passed for the last send. */
export function pastLimit(c: Pick<Confirming, 'lastSentAt'>, now: number, t: ConfirmTiming): boolean {
  return now >= c.lastSentAt + t.limitMs;
}

/** Whether a confirmation read is due at `now`. */
export function confirmDue(c: Confirming | null, now: number): boolean {
  return c !== null && c.dueAt !== null && now >= c.dueAt;
}

/** What the pipe will hold once the change being confirmed is in force: what decide() decides
 *  against, so a pipe still propagating is not sent the same change again. */
export function expectedValues(applied: ScalingValues, c: Confirming | null): ScalingValues {
  return c === null ? applied : { ...applied, ...c.target };
}

/** Whether the answer shows every field of `values` as a number equal to it (a null, the live
 *  API's transient 0/null right after a change, is not yet), in a state that takes scaling. */
export function showsInForce(state: PipeState, reported: PipeScaling, values: ScalingValues): boolean {
  if (!SCALABLE_PIPE_STATES.has(state)) return false;
  return Object.entries(values).every(([f, v]) => reported[f as ScalingField] === v);
}

/** The fields of the record's desired target that the pipe's kind has (what a confirmation names). */
export function targetOfKind(kind: PipeKind, desired: ScalingValues): ScalingValues {
  const out: ScalingValues = {};
  for (const f of KIND_FIELDS[kind]) if (desired[f] !== undefined) out[f] = desired[f];
  return out;
}

/**
 * The sent fields a read shows at a value that is neither the target nor one of its "not yet"
 * values: changed behind pipescaler's back while the change was on its way (drift). Null when none.
 */
export function foreignValues(c: Confirming, reported: PipeScaling): ScalingValues | null {
  const out: ScalingValues = {};
  for (const [f, want] of Object.entries(c.target) as [ScalingField, number][]) {
    const v = reported[f];
    if (typeof v !== 'number' || v === want) continue;
    if (!c.notYet.some((n) => n[f] === v)) out[f] = v;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * The record's confirmation after a change was sent at `sentAt` and answered 200 at `now` (the
 * answer not showing it in force yet): the same target keeps its first send (a re-send counts one
 * more), another target starts over, with what the pipe held and the earlier target as "not yet".
 */
export function afterSend(
  prev: Confirming | null,
  before: ScalingValues,
  sent: ScalingValues,
  sentAt: number,
  t: ConfirmTiming,
  /** What the change's own answer showed, when not its target: what the pipe held when the
   *  platform took it (someone may have changed it since our last read). Until the target is in
   *  force a read may show these too, and they are not drift. */
  shown: ScalingValues | null = null,
): Confirming {
  const target = { ...(prev?.target ?? {}), ...sent };
  const same = prev !== null && sameValues(prev.target, target);
  const shownToo = shown !== null && !sameValues(shown, before) ? [shown] : [];
  const notYet = [before, ...shownToo, ...(prev ? [prev.target, ...prev.notYet] : [])].slice(0, NOT_YET_KEPT);
  return {
    target,
    sentAt: same ? prev.sentAt : sentAt,
    lastSentAt: sentAt,
    dueAt: firstDueAt(sentAt, t, isScaleUp({ target, notYet })),
    reads: 0,
    resends: same ? prev.resends + (prev.unconfirmedAt !== null ? 1 : 0) : 0,
    notYet,
    unconfirmedAt: same ? prev.unconfirmedAt : null,
    ...(same && prev.outcomeUnknown ? { outcomeUnknown: true as const } : {}),
  };
}

/** The change is due a re-send: the limit passed unconfirmed and the re-sends are not spent, or
 *  a reload came since the last send (the operator may have fixed what held it): one more. */
export function resendDue(c: Confirming | null, reloadedAt = -Infinity): boolean {
  if (c?.unconfirmedAt == null || c.dueAt !== null) return false;
  return c.resends < MAX_RESENDS || reloadedAt > c.lastSentAt;
}

/** A confirmation that is no actuation sample, and why. */
export interface SkippedSample {
  readonly skipped: SampleSkip;
}

/** A confirmation's actuation sample: the propagation lies in (lowMs, the read's own instant], and
 *  `ms`, what the estimate counts, is the instant the read that showed it was queued for. */
export interface ActuationSample {
  /** From the change's first send to the instant the read that showed it stood for (sampledAt):
   *  its due instant, its own wait in the queue not counted. What the p95 is taken of. */
  readonly ms: number;
  /** From the first send to the last read before it that did not show the target (answered not in
   *  force: the propagation is longer); absent when no read came before it (the change's own answer
   *  is then the only lower end, ~0). */
  readonly lowMs?: number;
}

/**
 * A confirmation's actuation sample, or why it is none: how long the change took to be in force,
 * what the lead plan counts on for a scale-up (the A of its lead). The propagation lies between two
 * reads: the last that did not show the target (`notShownAt`, answered not in force) and the first
 * that did. The sample is that pair: `lowMs` from the first send to the first read, `ms` to the
 * instant the second stood for, its due instant (`dueAt`, the instant it was queued for), its own
 * wait in the queue (behind changes, for a unit of the budget, or for a tick) not counted; a read
 * that came before its due instant (a reconcile read), its own.
 *
 * The estimate counts `ms`, the pair's upper end less the read's wait, neither the midpoint nor the
 * read's own instant:
 * - A read that went at its instant: the propagation is within one step of the schedule below it
 *   (the reads after the confirming one are 15 % of the time since the send apart, a probe 0.85 of
 *   the estimate before it). The lead plan reserves a scale-up one confirming read, at the estimate:
 *   an estimate below the propagation makes that read come before the target is in force (a second
 *   read, a step after the plan's slot). The upper end errs above the propagation by at most the
 *   step (< 1.18, inside the bench's 1.2); the midpoint errs below it as often as above, and a
 *   scale-up's sample, read once with no read before it (0 to the estimate), would halve the
 *   estimate at every boundary.
 * - A read that waited: the propagation may have come anywhere in its wait, so the pair is (the
 *   read before, the read's own instant], as wide as the wait. Counting any of the wait (its own
 *   instant, or the midpoint of that pair) makes a boundary's scale-downs, read behind all its
 *   changes, several times the propagation (9.8, then 5 at every boundary, at 30 s, counting the
 *   midpoint, in test/daemon/actuation-boundary.test.ts), and an estimate too high stays: a scale-up read once
 *   at the estimate can only hold it, and only the scale-downs' probes measure it down, 15 % a
 *   turn-over of the samples. Not counting it errs low, and a low estimate is measured up within a
 *   boundary: its reads start before the propagation, find a read that does not show the target,
 *   and step up 15 % at a time. The pair's lower end says how many samples were so bracketed
 *   (the `confirmed` event's actuationLowMs; the actuation bench reports them).
 *
 * The confirmation itself stands (verdicts, events, status); only the sample goes:
 * - in_force_at_answer: the change's own answer showed it in force (`dueAt` null): it measured the
 *   request, not a propagation (a platform that carried it out at once, or a target that was
 *   already in force); such a change needs no time in a lead, and a cold start's 600 of them (84 ms
 *   at their p95) held a kind's estimate there for a 30 s propagation in bench/actuation.ts;
 * - unconfirmed: it went past the limit and was sent again: from its first send it measures a lost
 *   or stuck change (two such samples of 615 s, from a change cut by a network error, made a
 *   kind's estimate its 10-minute cap in bench/actuation.ts);
 * - outcome_unknown: its outcome was unknown (onItsWay): it was sent when the request went, which
 *   need not be when the platform took it, if it ever did.
 */
export function actuationSample(c: {
  readonly sentAt: number;
  readonly at: number;
  readonly dueAt: number | null;
  readonly notShownAt?: number;
  readonly pastLimit?: boolean;
  readonly outcomeUnknown?: boolean;
}): ActuationSample | SkippedSample {
  if (c.pastLimit === true) return { skipped: 'unconfirmed' };
  if (c.outcomeUnknown === true) return { skipped: 'outcome_unknown' };
  if (c.dueAt === null) return { skipped: 'in_force_at_answer' };
  const ms = Math.max(0, Math.min(c.at, c.dueAt) - c.sentAt);
  // a read before the send (an earlier change's) says nothing of this one
  if (c.notShownAt === undefined || c.notShownAt < c.sentAt) return { ms };
  return { ms, lowMs: Math.min(ms, c.notShownAt - c.sentAt) };
}
