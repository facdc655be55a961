// A turn's change: its intent stored before it goes out (the record names it until its answer is
// recorded), the PATCH, and its outcome: applied (with its audit line, owed if the sender dies
// before writing it), of unknown outcome (unsettled: a read settles it), or not carried out.
import { randomUUID } from 'node:crypto';
import { isApiError, type ApiError, type ScalingValues } from '../../api/index.js';
import { changeDirections, outcomeReason } from '../../policy/index.js';
import { handleApiFailure, type ApplyOutcome } from './turn-failure.js';
import type { AuditDirection } from '../model/events.js';
import { type JobResult } from '../model/job-results.js';
import { afterSentChange } from '../lifecycle/answers.js';
import { expectedValues } from '../lifecycle/confirmation.js';
import { sameValues } from '../model/scaling-values.js';
import { spend, UnitExpired } from '../lanes/spend.js';
import { afterNotCarriedOut, intentOf, intentWrite, newIntent, unknownAfter } from '../lifecycle/unsettled.js';
import { refOf, type PipeRecord, type Unsettled } from '../model/record.js';
import { holderMayWrite, owedDecision, owedLine } from '../lifecycle/owed-line.js';
import { answerOf, follow, ids, type Turn } from './turn-answer.js';

/** 'mixed' when one PATCH moves fields both ways (each field under its own direction's rules). */
export function auditDirection(moves: { up: boolean; down: boolean }): AuditDirection {
  return moves.up && moves.down ? 'mixed' : moves.up ? 'up' : moves.down ? 'down' : 'none';
}

/** A change of unknown outcome that a new change's intent replaced before any read showed it: its
 *  outcome is not known, and the audit log says so by its key (outcome_unknown); a read that finds
 *  it carried out later (its values kept in `replaced`) adds its landed_late line. */
function reportReplaced(turn: Turn, u: Unsettled | null): void {
  if (u === null) return;
  const { ctx, pipe } = turn;
  const key = u.key !== undefined ? { idempotencyKey: u.key } : {};
  ctx.emitter.emit('change:unknown', { pipe: pipe.name, sent: u.sent, sentAt: u.at, at: ctx.now(), ...key });
}

export async function change(turn: Turn, body: ScalingValues, target: ScalingValues | undefined): Promise<JobResult> {
  const { ctx, job, pipe, lane, rec } = turn;
  let idempotencyKey = job.data.idempotencyKey;
  if (!job.data.sentBody || !sameValues(job.data.sentBody, body)) {
    if (job.data.sentBody) idempotencyKey = randomUUID();
    await job.updateData({ ...job.data, idempotencyKey, sentBody: body });
  }
  // The pipe's values as decided against: a change still on its way counts as made.
  const moves = changeDirections(expectedValues(rec.applied, rec.confirming), body);
  const last = rec.lastDecision;
  // `before` is what the platform last reported (a read, or the answer of the last request).
  const outcome: ApplyOutcome = {
    pipe: pipe.name,
    direction: auditDirection(moves),
    windows: last?.windows ?? [],
    before: rec.applied,
    reasons: last?.reasons ?? [],
    after: { ...rec.applied, ...body },
    idempotencyKey,
  };
  // what goes out, stored before it does: the record names it until its answer is recorded
  const sending: { intent?: Unsettled; replaced?: Unsettled | null; rec?: PipeRecord } = {};
  try {
    let sentAt = ctx.now();
    const res = await spend(lane, async (beforeSend) => {
      sentAt = ctx.now();
      const intent = newIntent(rec, {
        sent: body,
        key: idempotencyKey,
        at: sentAt,
        attempt: job.attemptsMade + 1,
        timeoutMs: ctx.config().api.timeoutMs,
      });
      // Refused: since the turn's snapshot another attempt of this job (it lost its lock) or
      // another replica sent a change, or recorded one: nothing goes out (its unit is spent). A
      // change of unknown outcome it takes the place of is kept among `replaced` (intentWrite).
      const stored = intentWrite(rec, intent);
      if (!(await ctx.store.writeIfIntent(pipe.name, intentOf(rec), stored.write, turn.state))) throw new IntentTaken();
      sending.intent = intent;
      sending.replaced = stored.replaced;
      sending.rec = { ...rec, ...stored.write };
      reportReplaced(turn, sending.replaced);
      return lane.client.scalePipe(ids(pipe), body, { idempotencyKey, retry: false, beforeSend });
    });
    // stored before the request went out (its id is always there)
    const intentId = sending.intent?.id ?? '';
    const now = ctx.now();
    ctx.emitter.emit('api:contact', { at: now });
    // From the first decision that wanted this change to its answer (not only the last queue wait).
    ctx.emitter.emit('apply:start', {
      pipe: pipe.name,
      key: lane.keyName,
      queueWaitMs: Math.max(0, now - (rec.wantedSince ?? job.data.tickAt)),
    });
    if (res.envelopeIssue)
      ctx.emitter.emit('api:envelope-issue', { pipe: pipe.name, key: lane.keyName, issue: res.envelopeIssue });
    // the record as the intent left it (what it replaced kept): what the answer is recorded over
    const t = afterSentChange(sending.rec ?? rec, answerOf(res.result), body, now, {
      ref: refOf(pipe),
      sentAt,
      timing: turn.timing,
      lostAt: ctx.stateLoss()?.from,
    });
    const applied = t.write.applied ?? rec.applied;
    // `after`: the values the change set, and the others as its 200 showed them. The platform
    // answers a change with the pipe as it is at that moment, most often still the old values of
    // what it changes; a field changed by hand shows there (and only there).
    const line = {
      ...outcome,
      result: 'applied' as const,
      after: { ...applied, ...body },
      ...(target ? { target } : {}),
      // A scale-up sent ahead of its window says so (lead time), or raised by a forecast.
      reason: outcomeReason({
        action: 'change',
        direction: moves.up ? 'up' : 'down',
        reasons: outcome.reasons,
        windows: outcome.windows,
      }),
      requestId: res.requestId,
    };
    // The answer goes in while the record still names this change's intent, whatever became of
    // the job's lock, and with it the audit line it owes (owed-line.ts): this sender writes the
    // line and deletes it; killed in between, a later turn of the pipe writes it. Refused: once the
    // request's time ran out another attempt settled the change with a read, whose record stands
    // (newer than this answer); the 200 is reported all the same (audit line, history,
    // notifications): this attempt alone holds it, so it is reported once (owed all the same).
    // One change, one outcome: when that read found it in force and reported it `landed_late`, the
    // 200 adds its audit line only.
    const owed = owedLine(intentId, owedDecision(line), now, ctx.config().api.timeoutMs);
    const answer = await ctx.store.recordAnswer(pipe.name, intentId, t.write, owed, turn.state);
    const recorded = answer === 'recorded';
    if (recorded) ctx.emitter.emit('applied', { pipe: pipe.name, values: applied });
    if (answer === 'recorded' || answer === 'owed') {
      // The line, then its delete, with nothing awaited in between (the delete is on its way to
      // Redis when the call returns): a kill between the two is the one left that writes it twice.
      // A reply that came later than the request's time leaves it to a later turn (owed-line.ts).
      if (holderMayWrite(owed, ctx.now())) {
        ctx.emitter.emit('decision', line);
        await ctx.store.clearOwed(pipe.name, owed);
      }
    } else
      ctx.emitter.emit('decision', {
        ...(answer === 'landed' ? { outcomeReported: 'landed_late' as const } : {}),
        ...line,
      });
    if (recorded) await follow(turn, t);
    return { done: 'change', direction: moves.up ? 'up' : 'down' };
  } catch (err) {
    if (err instanceof IntentTaken) return { done: 'nothing', step: 'wait', reason: 'sending' };
    const intent = sending.intent;
    if (intent && isApiError(err) && err.outcomeUnknown) return unsettle(turn, intent, err);
    // Answered (4xx, 5xx, 429) or never sent (its unit expired before the write): not carried out.
    // The intent gives way to what the record held before it, so that the retry sends the change
    // again; a change of unknown outcome it replaced was reported then, and stays given up.
    if (intent && (isApiError(err) || err instanceof UnitExpired)) {
      const unsettled = afterNotCarriedOut(rec, sending.replaced ?? null);
      await ctx.store.writeIfIntent(pipe.name, intent.id ?? '', { unsettled }, turn.state);
    }
    return handleApiFailure(ctx, job, pipe, lane, turn.state, err, outcome);
  }
}

/** Another attempt or replica sent or recorded a change since the turn's snapshot. */
class IntentTaken extends Error {
  constructor() {
    super('a change of the pipe was sent or recorded meanwhile');
  }
}

/** No other change goes to the pipe until a read settles what the platform holds (next-step.ts
 *  stage unsettled); the change is not retried (a second request could land out of order): the
 *  job ends, and the read is the pipe's next turn, on this replica or, at a shutdown, the next. */
async function unsettle(turn: Turn, intent: Unsettled, err: ApiError): Promise<JobResult> {
  const { ctx, job, pipe, lane, rec } = turn;
  const { sent, at } = intent;
  // another attempt settled it with a read meanwhile (the request's time had run out): reported then
  if (
    !(await ctx.store.writeIfIntent(pipe.name, intent.id ?? '', { unsettled: unknownAfter(intent, err) }, turn.state))
  )
    return { done: 'unsettled', code: err.code };
  ctx.emitter.emit('outcome', {
    pipe: pipe.name,
    outcome: 'unsettled',
    at,
    reason: err.code,
    before: rec.applied,
    after: { ...rec.applied, ...sent },
    key: lane.keyName,
    ...(err.requestId ? { requestId: err.requestId } : {}),
    message: 'the change may have been carried out; a read settles it before any other change',
  });
  await ctx.enqueueRead(pipe, job.data.tickAt, 'settle');
  return { done: 'unsettled', code: err.code };
}
