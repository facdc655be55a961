// What an answer makes of a pipe's record, and what its next turn is: the second half of the
// lifecycle (next-step.ts has the first). Pure: the apply processor writes what these return,
// emits their events and enqueues their next step.
import { KIND_FIELDS, type PipeKind, type ReversePrivateEndpointStatus, type ScalingValues } from '../../api/index.js';
import { afterChange, changeDirections, confirmationAfterAnswer, type Confirmed } from '../../policy/index.js';
import {
  afterSend,
  expectedValues,
  pastLimit,
  showsInForce,
  targetOfKind,
  type ConfirmTiming,
} from './confirmation.js';
import { confirmationRead, notYetExpected, onItsWay } from './confirm-read.js';
import { REFUSALS } from './next-step.js';
import { changesFor, driftOf, isEmpty, mergeReported, sameValues } from '../model/scaling-values.js';
import { type Confirming } from '../model/record.js';
import type { PipeRecord, StoredError, Unsettled } from '../model/record.js';
import type { ConfirmationChange, PipeAnswer, Then, Transition } from './transition.js';
import { mayLand, noReadSince, replacedShown, UNSETTLED_MS } from './unsettled.js';

export { UNSETTLED_MS };

const NOTHING: Then = { then: 'nothing' };

/**
 * Whether what an answer at `now` shows cannot be told from a change the daemon sent before Redis
 * lost its state (at `lostAt`, redis-guard.ts): the record was rebuilt since the loss (its first
 * read after it, `seenAt`), and a change sent before it, whose record went with the state, may land
 * until UNSETTLED_MS after. A difference from the reference is then adopted as the platform's
 * values, never drift: the daemon's own change is never drift, nor kept as a change made by hand.
 */
export function driftUnknowable(rec: PipeRecord, now: number, lostAt: number | null | undefined): boolean {
  return lostAt != null && rec.seenAt !== null && rec.seenAt >= lostAt && now - lostAt <= UNSETTLED_MS;
}

export interface ReadContext {
  readonly ref: string;
  /** The key's reads go round continuously (its period stretched to its read share). */
  readonly continuousReads: boolean;
  readonly dryRun: boolean;
  /** When confirmation reads go and the limit (confirmation.ts confirmTiming). */
  readonly timing: ConfirmTiming;
  /** When Redis last lost the daemon's state, if it did (driftUnknowable). */
  readonly lostAt?: number | null;
}

/** A read's answer: the pipe as the platform has it now. */
export function afterRead(rec: PipeRecord, answer: PipeAnswer, now: number, ctx: ReadContext): Transition {
  const contact = rec.lastReadAt === null || rec.kind === null;
  // Statuses of endpoints the pipe no longer uses are dropped; the others are read again, each in
  // a turn of its own so the key's budget counts every request.
  const endpoints: Record<string, ReversePrivateEndpointStatus> = {};
  for (const id of answer.endpointIds) {
    const status = rec.endpoints[id];
    if (status !== undefined) endpoints[id] = status;
  }
  const applied = mergeReported(rec.applied, answer.scaling);
  // A change whose outcome was unknown: its values, found now, settle it (in force, never drift).
  // It is reported landed late only when nothing else explains them (landedLate).
  const u = rec.unsettled;
  const landed = u !== null && Object.entries(u.sent).every(([f, v]) => applied[f as keyof ScalingValues] === v);
  const late = landed && landedLate(rec, u);
  // An older change of unknown outcome that a newer one replaced, carried out after it: its values
  // are pipescaler's own landing late, never drift (nor a change made by hand), and the pipe is
  // decided again (moved) so the newer target goes out again.
  const r = contact ? null : replacedShown(rec, applied, now);
  let expected = landed ? { ...(rec.lastApplied ?? {}), ...u.sent } : rec.lastApplied;
  if (r !== null && expected !== null) expected = { ...expected, ...r.sent };
  // A change being confirmed: its target in force confirms it; its old values (or the transient
  // 0/null) are "not yet", never drift; any other value of a sent field was set by someone else.
  // A change of unknown outcome sent after it, that this read shows landed, replaced it as a 200
  // would have (afterSend): the older target's fields it sent are no longer on their way.
  // a change being confirmed whose sent field shows the replaced change's value: not yet, as for an
  // earlier target on its way (the newer change may still come after it), not someone else's
  const older = contact
    ? null
    : r !== null && rec.confirming !== null
      ? withNotYet(rec.confirming, r.sent)
      : rec.confirming;
  const c =
    older !== null && landed && older.lastSentAt < u.at
      ? { ...afterSend(older, rec.applied, u.sent, u.at, ctx.timing), outcomeUnknown: true as const }
      : older;
  const check = c ? confirmationRead(c, answer, applied, now, ctx.timing) : null;
  if (c && check && !check.inForce && expected) expected = notYetExpected(expected, c, applied, check.foreign);
  // A change of unknown outcome that its settle read does not show is on its way all the same: the
  // platform may have taken it (a 2xx whose answer could not be read) or carry it out after its
  // client gave up, then take its propagation time. It is confirmed like one answered 200, from
  // its send (onItsWay): not sent again before its limit; an earlier change still being confirmed
  // (sent before it) makes way for it as a 200 would have, its target "not yet" unless this read
  // shows it in force. The values the read shows are "not yet" too, even someone else's: changed
  // by hand before the change went out, they are what it replaces (its 200 would have shown them),
  // and no answer says whether the hand came before or after it. Unless its limit has passed.
  const adopted =
    !contact &&
    u !== null &&
    !landed &&
    noReadSince(rec, u.at) &&
    (c === null || c.lastSentAt < u.at) &&
    !pastLimit({ lastSentAt: u.at }, now, ctx.timing)
      ? onItsWay(
          u,
          c === null || check?.inForce ? null : (check?.next ?? c),
          c === null ? rec.applied : applied,
          applied,
          now,
          ctx.timing,
        )
      : null;
  const confirming = adopted ?? (check ? check.next : c);
  const found = !contact && answer.kind && expected ? driftOf(answer.kind, expected, applied) : null;
  const adoptedAfterLoss = found !== null && driftUnknowable(rec, now, ctx.lostAt);
  const drift = adoptedAfterLoss ? null : found;
  const atExpected = check?.inForce === true && sameValues(applied, expectedValues(rec.applied, c));
  const moved = !contact && (r !== null || (!sameValues(applied, rec.applied) && !atExpected));
  // what of `replaced` may still land after this read (the one it shows has)
  const replaced = mayLand(rec.replaced, now).filter((x) => x !== r);
  // ours on its way at this read: the change being confirmed, and one of unknown outcome
  const way = u !== null ? afterSend(c, rec.applied, u.sent, u.at, ctx.timing) : c;
  const shown = confirmedValues(rec, answer, applied, check?.inForce === true ? c : null);
  // values of a change of unknown outcome found now: in force since some instant after its send
  const confirmed = confirmationAfter(rec, answer, shown, now, way, landed ? { outcomeUnknownFrom: u.at } : {});
  const write: Partial<PipeRecord> = {
    kind: answer.kind,
    state: answer.state,
    applied,
    endpoints,
    endpointsDue: answer.endpointIds,
    // a read of a record holding an unsettled change was sent after it: it settles it, even within
    // the same millisecond
    lastReadAt: u !== null ? Math.max(now, u.at) : now,
    readDue: false,
    lastError: null,
    authFailures: 0,
    ...SUCCEEDED,
    ref: ctx.ref,
    // The platform has other values than the stored desire was decided against: decide again from
    // what it has, so the correction follows maxStep, cooldowns and each direction's rules.
    ...(moved ? { desired: null } : {}),
    // What a first contact finds is the reference for drift until pipescaler changes the pipe: a
    // pipe already at target would otherwise never see a change made by hand called drift.
    // Since then the daemon knows what the pipe holds (a window start before it: verdicts.ts).
    ...(contact ? { lastApplied: applied, ...(rec.seenAt === null ? { seenAt: now } : {}) } : {}),
    ...(landed
      ? {
          lastApplied: expected,
          lastChange: afterChange(rec.applied, rec.lastChange, u.sent, u.at, applied).lastChange,
          unsettled: null,
        }
      : u !== null && now - u.at > UNSETTLED_MS
        ? { unsettled: null }
        : {}),
    // the replaced change landed late: its values are what pipescaler last applied, but for the
    // fields of a change still being confirmed, whose target stays the reference
    ...(r !== null
      ? {
          lastApplied: {
            ...(rec.lastApplied ?? {}),
            ...(landed ? u.sent : {}),
            ...r.sent,
            ...(confirming?.target ?? {}),
          },
        }
      : {}),
    ...(replaced.length !== rec.replaced.length ? { replaced } : {}),
    // what it shows is the reference from now on, as a first contact's would be
    ...(adoptedAfterLoss ? { lastApplied: applied } : {}),
    ...(confirmed !== rec.confirmed ? { confirmed } : {}),
    ...(adopted !== null || check !== null ? { confirming } : {}),
  };
  let next: Then;
  if (answer.endpointIds.length > 0) next = { then: 'read' };
  else if (contact || moved) next = { then: 'evaluate' };
  else if (check?.resend && adopted === null) next = { then: 'change', up: changeDirections(applied, check.resend).up };
  else
    next =
      pending(answer.kind, rec.desired, expectedValues(applied, confirming), ctx.dryRun) ??
      (ctx.continuousReads ? { then: 'read' } : NOTHING);
  return {
    write,
    next,
    drift: drift ? { expected: expected ?? {}, actual: applied } : null,
    ...(late ? { landed: intentSettled(u) } : {}),
    ...(r !== null ? { landedReplaced: intentSettled(r) } : {}),
    // settled (or given up) without knowing whether it landed: said so, by its key
    ...(u !== null && !late && (landed || now - u.at > UNSETTLED_MS) ? { unknown: intentSettled(u) } : {}),
    ...(check?.change ? { confirmation: check.change } : {}),
  };
}

/** `c` with `values` among its "not yet" values (once). */
function withNotYet(c: Confirming, values: ScalingValues): Confirming {
  return c.notYet.some((v) => sameValues(v, values)) ? c : { ...c, notYet: [...c.notYet, values] };
}

/** A settled change of unknown outcome as a transition reports it. */
function intentSettled(u: Unsettled): NonNullable<Transition['landed']> {
  return {
    sent: u.sent,
    at: u.at,
    ...(u.id !== undefined ? { id: u.id } : {}),
    ...(u.key !== undefined ? { key: u.key } : {}),
  };
}

/**
 * Whether a read that shows every value of the change of unknown outcome `u` shows it landed late:
 * some value it sent is explained by nothing else. A value is explained when the pipe held it
 * already at the platform's last report before this read (the change only kept it: a change back
 * to the values in force while an earlier one was on its way), or when an earlier send of ours of
 * that value is still being confirmed (a re-send of the same target: the first send may be the one
 * in force, and its 200 was its outcome). Such a read settles the change all the same.
 */
function landedLate(rec: PipeRecord, u: NonNullable<PipeRecord['unsettled']>): boolean {
  const c = rec.confirming;
  return Object.entries(u.sent).some(([f, v]) => {
    const field = f as keyof ScalingValues;
    return rec.applied[field] !== v && !(c !== null && c.sentAt < u.at && c.target[field] === v);
  });
}

/** The record's last confirmation after an answer that confirms `confirms` (null: it is only a
 *  report), `onItsWay` our change on its way when it came: a 0 that is none of its values may be
 *  the platform's transient answer to it; `outcomeUnknownFrom`: the send of a change of unknown
 *  outcome whose values it found (policy/confirmation.ts confirmationAfterAnswer). */
function confirmationAfter(
  rec: PipeRecord,
  answer: PipeAnswer,
  confirms: ScalingValues | null,
  now: number,
  onItsWay: Confirming | null,
  also: { readonly outcomeUnknownFrom?: number; readonly carriedOut?: ScalingValues } = {},
): Confirmed | null {
  const way = onItsWay === null ? [] : [onItsWay.target, ...onItsWay.notYet];
  return confirmationAfterAnswer(rec.confirmed, {
    at: now,
    reported: answer.scaling,
    confirms,
    onItsWay: way,
    ...also,
  });
}

/**
 * The values an answer confirms in force, or null: the desired target (or the change just
 * confirmed, `confirming`) when it shows it in force in a state that takes scaling; else the values
 * it shows in force (a first contact, a record rebuilt after Redis lost it, a read before the next
 * target's change goes or of a change found landed late): what the pipe holds is what a verdict
 * asks about, whatever the daemon wants next.
 */
function confirmedValues(
  rec: PipeRecord,
  answer: PipeAnswer,
  applied: ScalingValues,
  confirming: Confirming | null,
): ScalingValues | null {
  if (!answer.kind) return null;
  const desired = rec.desired ? targetOfKind(answer.kind, rec.desired) : null;
  if (desired && !isEmpty(desired) && showsInForce(answer.state, answer.scaling, desired)) return desired;
  if (confirming) return targetOfKind(answer.kind, { ...applied, ...confirming.target });
  const shown = targetOfKind(answer.kind, applied);
  return !isEmpty(shown) && showsInForce(answer.state, answer.scaling, shown) ? shown : null;
}

/** When and against what a change was sent: its first instant and the confirmation's timing. */
export interface SendContext {
  readonly ref: string;
  /** When the request went out (actuation latency counts from the first send of a target). */
  readonly sentAt: number;
  readonly timing: ConfirmTiming;
  /** When Redis last lost the daemon's state, if it did (driftUnknowable). */
  readonly lostAt?: number | null;
}

/** A change's answer: the pipe as the platform holds it now, which may still be its old values
 *  (the change takes effect later): then the pipe is confirming until a read shows the target. */
export function afterSentChange(
  rec: PipeRecord,
  answer: PipeAnswer,
  sent: ScalingValues,
  now: number,
  send: SendContext,
): Transition {
  // The kind sent was known from a read; the answer's is the platform's word.
  const kind = answer.kind ?? rec.kind;
  // What the platform reports, not what was sent: a change in effect later shows its old values
  // (or a transient null, which keeps what was known) until then.
  const applied = mergeReported(rec.applied, answer.scaling);
  const before = expectedValues(rec.applied, rec.confirming);
  const sending = afterSend(rec.confirming, rec.applied, sent, send.sentAt, send.timing, applied);
  // ours on its way at this answer: what was on its way and this change, not what the answer shows
  const way = afterSend(rec.confirming, rec.applied, sent, send.sentAt, send.timing);
  const inForce = showsInForce(answer.state, answer.scaling, sending.target);
  // The answer is the pipe's read: a field not sent that differs from what we last applied
  // drifted behind our back, unless it shows a change of ours that a newer one replaced landing
  // late (afterRead): the pipe is then decided again.
  const r = replacedShown(rec, applied, now);
  const reference = rec.lastApplied && r ? { ...rec.lastApplied, ...r.sent } : rec.lastApplied;
  const notSent = reference
    ? Object.fromEntries(Object.entries(reference).filter(([f]) => !(f in sending.target)))
    : null;
  const found = kind && notSent ? driftOf(kind, notSent, applied) : null;
  // the fields not sent are taken as shown (lastApplied below) either way
  const drift = found !== null && driftUnknowable(rec, now, send.lostAt) ? null : found;
  const replaced = mayLand(rec.replaced, now).filter((x) => x !== r);
  const prev = rec.confirming;
  const change: ConfirmationChange | undefined = inForce
    ? {
        is: 'confirmed',
        values: sending.target,
        sentAt: sending.sentAt,
        at: now,
        dueAt: null,
        wasUnconfirmed: prev !== null && prev.unconfirmedAt !== null,
        // a new target replacing an unconfirmed one starts over: only the same target keeps it
        pastLimit: sending.unconfirmedAt !== null,
        outcomeUnknown: sending.outcomeUnknown === true,
      }
    : prev !== null && prev.unconfirmedAt !== null && sending.unconfirmedAt === null
      ? { is: 'dropped', target: prev.target, reason: 'new_target' }
      : undefined;
  // not in force: the answer is only a report, which may end the last confirmation's "since"
  const shown = inForce ? confirmedValues(rec, answer, applied, sending) : null;
  // the change is carried out: what it sets lower is what the pipe may hold from now on
  const confirmed = confirmationAfter(rec, answer, shown, now, way, { carriedOut: sent });
  const write: Partial<PipeRecord> = {
    applied,
    // What pipescaler itself applied: the reference for drift once the change is in force.
    lastApplied: { ...applied, ...sending.target },
    state: answer.state,
    kind,
    // Stamped by the evaluation step's rule (both directions when one PATCH moves fields both ways).
    lastChange: afterChange(before, rec.lastChange, sent, now).lastChange,
    lastError: null,
    authFailures: 0,
    ...SUCCEEDED,
    lastReadAt: now,
    readDue: false,
    wantedSince: null,
    unsettled: null,
    confirming: inForce ? null : sending,
    ...(confirmed !== rec.confirmed ? { confirmed } : {}),
    ...(replaced.length !== rec.replaced.length ? { replaced } : {}),
    ref: send.ref,
  };
  return {
    write,
    next: drift || r !== null ? { then: 'evaluate' } : NOTHING,
    drift: drift ? { expected: notSent ?? {}, actual: applied } : null,
    ...(r !== null ? { landedReplaced: intentSettled(r) } : {}),
    ...(change ? { confirmation: change } : {}),
  };
}

/** A reverse private endpoint's status: the next one is read, or the pipe decided again. */
export function afterEndpoint(rec: PipeRecord, id: string, status: ReversePrivateEndpointStatus): Transition {
  const rest = rec.endpointsDue.filter((e) => e !== id);
  return {
    write: { endpoints: { ...rec.endpoints, [id]: status }, endpointsDue: rest, ...SUCCEEDED },
    next: rest.length > 0 ? { then: 'read' } : { then: 'evaluate' },
    drift: null,
  };
}

/** A call answered: the pipe's backoff ends. */
const SUCCEEDED = { failures: 0, retryAt: null } as const satisfies Partial<PipeRecord>;

/** What a failed request leaves in the record; `authFailures` counts 401/403 in a row (this one
 *  included), after `parkAfter` of which the pipe is parked until a reload. */
export function afterFailure(
  error: StoredError,
  authFailures: number,
  parkAfter: number,
): { readonly write: Partial<PipeRecord>; readonly parked: boolean; readonly refused: boolean } {
  const parked = (error.code === 'API_UNAUTHORIZED' || error.code === 'API_FORBIDDEN') && authFailures >= parkAfter;
  return {
    write: { lastError: error, ...(parked ? { parked: error } : {}) },
    parked,
    refused: REFUSALS.has(error.code),
  };
}

/** A desire that waited behind a read gets its own turn. */
function pending(
  kind: PipeKind | null,
  desired: ScalingValues | null,
  applied: ScalingValues,
  dryRun: boolean,
): Then | null {
  if (!kind || !desired || dryRun || KIND_FIELDS[kind].length === 0) return null;
  const body = changesFor(kind, desired, applied);
  if (isEmpty(body)) return null;
  return { then: 'change', up: changeDirections(applied, body).up };
}
