// A change's intent: what is about to be sent (values, Idempotency-Key, instant, attempt), stored in
// the pipe's record as its `unsettled` change before the request goes out, one script conditioned
// on the record (state-store.ts writeIfIntent). A job that outlives its lock (an event-loop stall),
// its second attempt, another replica or the next start finds it: the change is never sent again,
// its answer is recorded by the attempt that holds it while the record still names the intent, and
// once the request's time has run out a read settles it like any change of unknown outcome
// (lifecycle.ts stage unsettled, lifecycle-answers.ts afterRead), so the daemon's own values are
// never taken for someone else's.
import { randomUUID } from 'node:crypto';
import type { ApiError, ScalingValues } from '../api/index.js';
import { IN_FLIGHT } from './lifecycle.js';
import type { PipeRecord, Unsettled } from './state-store.js';

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

/** The intent once its request failed and its outcome is unknown: settled by a read at once. */
export function unknownAfter(intent: Unsettled, err: ApiError): Unsettled {
  const { until: _until, ...sent } = intent;
  return { ...sent, code: err.code, ...(err.reached === 'yes' ? { taken: true } : {}) };
}
