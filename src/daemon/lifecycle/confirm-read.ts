// What a read makes of the change being confirmed, and of a change of unknown outcome the read does
// not show yet (on its way): the confirmation half of answers.ts afterRead. Pure.
import type { ScalingValues } from '../../api/index.js';
import {
  afterSend,
  foreignValues,
  MAX_RESENDS,
  nextDueAt,
  pastLimit,
  sampledAt,
  showsInForce,
  type ConfirmTiming,
} from './confirmation.js';
import type { ConfirmationChange, PipeAnswer } from './transition.js';
import { changesFor, isEmpty } from '../model/scaling-values.js';
import { type Confirming } from '../model/record.js';
import type { PipeRecord } from '../model/record.js';

/** The change of unknown outcome `u`, which a read does not show yet, as the change being confirmed
 *  (after `prev`, an earlier one on its way, whose target becomes "not yet"): its first
 *  confirmation read the next of its send's schedule (the probe, then the expected propagation...).
 *  The values the read shows (`shown`) are "not yet" too, whatever they are: its answer, never read,
 *  would have shown what the pipe held when the platform took it, and a value nobody read before
 *  (the pipe changed by hand after the last read) may be that, the change on its way to replace it,
 *  as afterSentChange keeps it from a 200. Which came first, the hand or the change, no answer says:
 *  so the change is not sent again before its limit (a hand change later than the read is foreign
 *  as usual; the drift against what pipescaler last applied is afterRead's, reported all the same).
 *  A re-send after the limit whose answer never came is not counted (MAX_RESENDS): nothing says
 *  the platform had it (unlike a 2xx whose answer could not be read: `taken`), and counted, a
 *  re-send cut on its way (a reset) was the target's last send: the pipe stayed off its target
 *  until a new one. */
export function onItsWay(
  u: NonNullable<PipeRecord['unsettled']>,
  prev: Confirming | null,
  before: ScalingValues,
  shown: ScalingValues,
  now: number,
  t: ConfirmTiming,
): Confirming {
  const after = afterSend(prev, before, u.sent, u.at, t, shown);
  const resends = prev !== null && u.taken !== true && after.resends > prev.resends ? prev.resends : after.resends;
  const sent: Confirming = { ...after, resends, outcomeUnknown: true };
  // the next of the send's confirmation reads (confirmation.ts): a settle read at once waits for them
  return { ...sent, dueAt: nextDueAt({ ...sent, lastSentAt: u.at }, now, t) ?? sent.dueAt };
}

export interface ConfirmationRead {
  readonly inForce: boolean;
  /** Sent fields at a value that is neither the target nor "not yet": someone else's. */
  readonly foreign: ScalingValues | null;
  /** The record's confirmation after this read (null: confirmed, or given up to a hand change). */
  readonly next: Confirming | null;
  readonly change?: ConfirmationChange;
  /** The fields to send again: the limit passed and the re-send is not spent. */
  readonly resend?: ScalingValues;
}

/** What a read makes of the change being confirmed. */
export function confirmationRead(
  c: Confirming,
  answer: PipeAnswer,
  applied: ScalingValues,
  now: number,
  t: ConfirmTiming,
): ConfirmationRead {
  if (showsInForce(answer.state, answer.scaling, c.target)) {
    return {
      inForce: true,
      foreign: null,
      next: null,
      change: {
        is: 'confirmed',
        values: c.target,
        sentAt: c.sentAt,
        at: now,
        dueAt: c.dueAt === null ? c.lastSentAt + t.limitMs : sampledAt({ ...c, dueAt: c.dueAt }, now, t),
        ...(c.notShownAt !== undefined ? { notShownAt: c.notShownAt } : {}),
        wasUnconfirmed: c.unconfirmedAt !== null,
        pastLimit: c.unconfirmedAt !== null,
        outcomeUnknown: c.outcomeUnknown === true,
      },
    };
  }
  const foreign = foreignValues(c, answer.scaling);
  if (foreign) {
    // changed by hand meanwhile: drift, and the change is no longer pipescaler's to confirm
    const dropped = c.unconfirmedAt !== null ? { change: { is: 'dropped', target: c.target, reason: 'drift' } } : {};
    return { inForce: false, foreign, next: null, ...(dropped as { change?: ConfirmationChange }) };
  }
  if (c.dueAt === null) return { inForce: false, foreign: null, next: c };
  // not in force at this read: the propagation is longer than `now` (the sample's lower end)
  if (!pastLimit(c, now, t))
    return {
      inForce: false,
      foreign: null,
      next: { ...c, reads: c.reads + 1, notShownAt: now, dueAt: nextDueAt(c, now, t) },
    };
  const first = c.unconfirmedAt === null;
  const next: Confirming = {
    ...c,
    reads: c.reads + 1,
    notShownAt: now,
    dueAt: null,
    unconfirmedAt: c.unconfirmedAt ?? now,
  };
  const resend = c.resends < MAX_RESENDS && answer.kind ? changesFor(answer.kind, c.target, applied) : {};
  return {
    inForce: false,
    foreign: null,
    next,
    ...(first ? { change: { is: 'unconfirmed', target: c.target, sentAt: c.sentAt, resends: c.resends } } : {}),
    ...(!isEmpty(resend) ? { resend } : {}),
  };
}

/** The drift reference while a change is on its way: a sent field showing a "not yet" value is
 *  compared with itself (no drift); one showing someone else's value with the target. */
export function notYetExpected(
  expected: ScalingValues,
  c: Confirming,
  applied: ScalingValues,
  foreign: ScalingValues | null,
): ScalingValues {
  const out: ScalingValues = { ...expected };
  for (const f of Object.keys(c.target) as (keyof ScalingValues)[]) {
    if (foreign && f in foreign) out[f] = c.target[f];
    else if (applied[f] !== undefined) out[f] = applied[f];
  }
  return out;
}
