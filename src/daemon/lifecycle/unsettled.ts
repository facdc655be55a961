// The change of unknown outcome, in one place. A change's intent (what is about to be sent: values,
// Idempotency-Key, instant, attempt) is stored in the pipe's record as its `unsettled` change before
// the request goes out, one script conditioned on the record (state-store.ts writeIfIntent). While
// its request's time runs (code `in_flight`) the pipe is `sending`: only the attempt that holds the
// intent records its answer. A request that failed without a readable answer (timed out, cut, an
// unreadable 2xx) leaves the change `unsettled` with its error's code. Either way, no other change
// goes out until a read has settled it (answers.ts afterRead): a read that shows the values is the
// change landing late, never drift, and the same change is never sent again. A job that outlives
// its lock, its second attempt, another replica or the next start finds it in the record. A read
// that does not show it leaves it on its way until its limit; the next change's intent then takes
// its place (replacedUnknown: the audit log says its outcome is unknown, by its key), and the record
// keeps its values among `replaced` (intentWrite) until UNSETTLED_MS after its send: the platform
// may still carry it out after the newer change, and a read that shows its values then shows it
// landing late (replacedShown), never drift, never a change made by hand.
import { randomUUID } from 'node:crypto';
import type { ApiError, ScalingField, ScalingValues } from '../../api/index.js';
import type { PipeRecord, Unsettled } from '../model/record.js';

/** How long a change whose outcome is unknown may still land: a read that finds its values later
 *  than this calls them drift. The platform carries out a request it received within seconds to
 *  minutes; a request a client gave up on was seen landing up to 6-9 minutes later. */
export const UNSETTLED_MS = 15 * 60_000;

/** Replaced changes of unknown outcome a record keeps (`replaced`), the oldest dropped past it. A
 *  pipe's next change goes out only after a read settled the one before (next-step.ts): more than
 *  a few within UNSETTLED_MS is a pipe whose every change times out, and its record stays small. */
export const REPLACED_KEPT = 3;

/** The read is the first since the change of unknown outcome sent at `at` (its settle read). */
export const noReadSince = (rec: PipeRecord, at: number): boolean => rec.lastReadAt === null || rec.lastReadAt < at;

/** A change's outcome is unknown and no read has come since it was sent. */
export function unsettled(rec: PipeRecord): boolean {
  return rec.unsettled !== null && noReadSince(rec, rec.unsettled.at);
}

/** The code of a change's intent until its answer, or its failure, is recorded. */
export const IN_FLIGHT = 'in_flight';

/**
 * The pipe's change is on its way: its intent is stored and its request's time (api.timeout) has
 * not run out. Its answer is the sender's to record; another attempt of its job (the job lost its
 * lock in a stall) or another replica waits. Past that time the sender is gone or stalled: its
 * outcome is unknown and a read settles it.
 */
export function sending(rec: PipeRecord, now: number): boolean {
  const u = rec.unsettled;
  return unsettled(rec) && u?.code === IN_FLIGHT && u.until !== undefined && now < u.until;
}

/** The id of the record's change sent and not yet recorded ('' none): every write of a turn's
 *  answer is conditioned on it being what the turn started from. */
export const intentOf = (rec: PipeRecord): string => rec.unsettled?.id ?? '';

export interface IntentOf {
  readonly sent: ScalingValues;
  readonly key: string;
  /** The instant it goes out. */
  readonly at: number;
  /** The job's attempt (1: its first). */
  readonly attempt: number;
  /** How long its request may take (api.timeout): its answer is awaited until then. */
  readonly timeoutMs: number;
}

/** The intent of a change about to be sent to the pipe whose record is `rec`. */
export function newIntent(rec: PipeRecord, o: IntentOf): Unsettled {
  // after every read the pipe had before this change, even within one millisecond (or on a clock
  // that has not moved): a change queued behind that read must not take it for the settling one
  const at = Math.max(o.at, (rec.lastReadAt ?? -Infinity) + 1);
  return {
    sent: o.sent,
    at,
    code: IN_FLIGHT,
    id: randomUUID(),
    key: o.key,
    attempt: o.attempt,
    until: at + o.timeoutMs,
  };
}

/** The change of unknown outcome that the intent of a new change (its Idempotency-Key `key`)
 *  replaces in the record: a read since did not show it (on its way, or never taken), and the
 *  record keeps only the newest, so no read will settle it now. Null: none, or a send of the same
 *  change again (its key). */
export function replacedUnknown(rec: PipeRecord, key: string): Unsettled | null {
  const u = rec.unsettled;
  return u !== null && u.key !== key ? u : null;
}

/**
 * What the record takes when the intent `intent` is stored (before its request goes out): the
 * intent, and the change of unknown outcome it takes the place of (`replaced`, replacedUnknown),
 * kept among the record's `replaced` with those still within UNSETTLED_MS of their send, at most
 * REPLACED_KEPT, the oldest dropped.
 */
export function intentWrite(
  rec: PipeRecord,
  intent: Unsettled,
): { readonly write: Partial<PipeRecord>; readonly replaced: Unsettled | null } {
  const replaced = replacedUnknown(rec, intent.key ?? '');
  if (replaced === null) return { write: { unsettled: intent }, replaced };
  const kept = [...mayLand(rec.replaced, intent.at), replaced].slice(-REPLACED_KEPT);
  return { write: { unsettled: intent, replaced: kept }, replaced };
}

/** The changes of `changes` that may still land at `now`: sent within UNSETTLED_MS. */
export const mayLand = (changes: readonly Unsettled[], now: number): readonly Unsettled[] =>
  changes.filter((c) => now - c.at <= UNSETTLED_MS);

/**
 * The replaced change of unknown outcome (the record's `replaced`) that a read at `now` showing
 * `applied` shows landed late, the newest if several; null none. Every value it sent is shown, it
 * may still land (within UNSETTLED_MS of its send), and some value of it is explained by nothing
 * else: the pipe did not hold it at the platform's last report, and it is neither the target of
 * the change being confirmed, nor a value of the record's unsettled change, nor what pipescaler
 * last applied (any of these showing is that, not the old change).
 */
export function replacedShown(rec: PipeRecord, applied: ScalingValues, now: number): Unsettled | null {
  const explained = (f: ScalingField, v: number): boolean =>
    rec.applied[f] === v ||
    rec.confirming?.target[f] === v ||
    rec.unsettled?.sent[f] === v ||
    rec.lastApplied?.[f] === v;
  for (const r of [...mayLand(rec.replaced, now)].reverse()) {
    const sent = Object.entries(r.sent) as [ScalingField, number][];
    if (sent.length > 0 && sent.every(([f, v]) => applied[f] === v) && sent.some(([f, v]) => !explained(f, v)))
      return r;
  }
  return null;
}

/** What the record holds once a change's request was not carried out (answered 4xx, 5xx or 429, or
 *  never written): what it held before the intent, except a change of unknown outcome the intent
 *  replaced (`replacedUnknown`), whose outcome_unknown line is written then: given up once, it
 *  does not come back for the retry to replace and report again (its values stay among the
 *  record's `replaced`, intentWrite: a read may still find it landing late). */
export function afterNotCarriedOut(rec: PipeRecord, replaced: Unsettled | null): Unsettled | null {
  return replaced !== null ? null : rec.unsettled;
}

/** The intent once its request failed and its outcome is unknown: settled by a read at once. */
export function unknownAfter(intent: Unsettled, err: ApiError): Unsettled {
  const { until: _until, ...sent } = intent;
  return { ...sent, code: err.code, ...(err.reached === 'yes' ? { taken: true } : {}) };
}
