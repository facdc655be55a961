// Every change is confirmed (docs/architecture.md#every-change-is-confirmed): after a change the
// platform answered 200, the pipe is `confirming` until a read shows its target in force in a state
// that takes scaling. Pure: when the confirmation reads are due (the expected propagation, then a
// back-off up to the limit), what a read shows (in force, not yet, or someone else's values), and
// what a change's answer makes of the record's confirmation.
import { KIND_FIELDS, SCALABLE_PIPE_STATES, type PipeKind, type PipeScaling, type PipeState } from '../api/index.js';
import type { ScalingField, ScalingValues } from '../api/index.js';
import type { ActuationSettings } from '../policy/index.js';
import { sameValues } from './scaling-values.js';

/** A change answered 200 whose target no read has shown in force yet. */
export interface Confirming {
  /** The values sent for this target (every field of its changes). */
  readonly target: ScalingValues;
  /** The first send of this target: actuation latency counts from here. */
  readonly sentAt: number;
  /** The last send (the first, or the re-send after the limit): the limit counts from here. */
  readonly lastSentAt: number;
  /** When the next confirmation read is due; null: none (the limit passed, reconcile reads only). */
  readonly dueAt: number | null;
  /** Confirmation reads since the last send (the back-off's step). */
  readonly reads: number;
  /** Re-sends after the limit: at most MAX_RESENDS. */
  readonly resends: number;
  /** Values a read may show for a sent field meanwhile without being drift: the values before the
   *  first send, and earlier targets of the same fields still on their way. */
  readonly notYet: readonly ScalingValues[];
  /** When the limit passed with the target not in force (the `unconfirmed` outcome), or null. */
  readonly unconfirmedAt: number | null;
}

/** When and how long confirmation reads go (situation.ts, from evaluate.actuation). */
export interface ConfirmTiming {
  /** The expected propagation: the pipe's measured p95, else evaluate.actuation.expected (capped). */
  readonly expectedMs: number;
  /** A change not in force this long after it was sent is unconfirmed (evaluate.actuation.max). */
  readonly limitMs: number;
}

/** The first confirmation read never comes sooner than this after a send (unless the limit is
 *  sooner): the answer itself was a read of the pipe, and the platform's transient values last a
 *  few seconds. */
export const MIN_CONFIRM_MS = 15_000;
/** A change not in force within the limit is sent once more (the same target), then left
 *  unconfirmed until a read shows it or a new target is sent; a reload sends it once more. */
export const MAX_RESENDS = 1;
/** Earlier targets kept as "not yet" values: enough for a change or two in a row on their way. */
const NOT_YET_KEPT = 4;

export function confirmTiming(a: ActuationSettings, measuredMs?: number): ConfirmTiming {
  const ms = measuredMs !== undefined && Number.isFinite(measuredMs) ? measuredMs : a.expectedMs;
  return { expectedMs: Math.min(Math.max(0, ms), a.maxMs), limitMs: a.maxMs };
}

/** The first confirmation read after a send at `sentAt`: at the expected propagation, never at once,
 *  never past the limit. */
export function firstDueAt(sentAt: number, t: ConfirmTiming): number {
  return sentAt + Math.min(Math.max(t.expectedMs, MIN_CONFIRM_MS), t.limitMs);
}

/**
 * The read after the `reads`-th that found the target not in force at `now`: a back-off doubling
 * from a quarter of the expected propagation (MIN_CONFIRM_MS at least), the last one at the limit;
 * null once the limit has passed.
 */
export function nextDueAt(c: Pick<Confirming, 'lastSentAt' | 'reads'>, now: number, t: ConfirmTiming): number | null {
  const end = c.lastSentAt + t.limitMs;
  if (now >= end) return null;
  const base = Math.max(t.expectedMs / 4, MIN_CONFIRM_MS);
  return Math.min(now + base * 2 ** Math.min(c.reads, 20), end);
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
): Confirming {
  const target = { ...(prev?.target ?? {}), ...sent };
  const same = prev !== null && sameValues(prev.target, target);
  const notYet = [before, ...(prev ? [prev.target, ...prev.notYet] : [])].slice(0, NOT_YET_KEPT);
  return {
    target,
    sentAt: same ? prev.sentAt : sentAt,
    lastSentAt: sentAt,
    dueAt: firstDueAt(sentAt, t),
    reads: 0,
    resends: same ? prev.resends + (prev.unconfirmedAt !== null ? 1 : 0) : 0,
    notYet,
    unconfirmedAt: same ? prev.unconfirmedAt : null,
  };
}

/** The change is due a re-send: the limit passed unconfirmed and the re-sends are not spent, or
 *  a reload came since the last send (the operator may have fixed what held it): one more. */
export function resendDue(c: Confirming | null, reloadedAt = -Infinity): boolean {
  if (c?.unconfirmedAt == null || c.dueAt !== null) return false;
  return c.resends < MAX_RESENDS || reloadedAt > c.lastSentAt;
}
