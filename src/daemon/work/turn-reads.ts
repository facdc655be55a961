// A turn's reads: the pipe (an empty PATCH: a reconcile, confirmation, settle or first-contact read)
// and a reverse private endpoint, each carried out as a transition of the record (turn-answer.ts).
import { handleApiFailure, readOutcome } from './turn-failure.js';
import { type JobResult, type ReadWhy } from '../model/job-results.js';
import { afterEndpoint, afterRead } from '../lifecycle/answers.js';
import { readDueAfterMs } from '../lanes/lead-plans.js';
import { spend } from '../lanes/spend.js';
import { refOf } from '../model/record.js';
import { answerOf, carryOut, ids, type Turn } from './turn-answer.js';

export async function read(turn: Turn, why: ReadWhy): Promise<JobResult> {
  const { ctx, pipe, lane, rec } = turn;
  try {
    // A reconcile read draws on the key's read share. A confirmation read takes the key's whole
    // budget, queued behind every change (queues.ts priorities): the slots the changes leave free,
    // as the lead plan counts it (lead-schedule.ts); a first contact or a read that settles a change
    // of unknown outcome is what the pipe's next change waits for.
    const res = await spend(lane, (beforeSend) => lane.client.scalePipe(ids(pipe), {}, { retry: false, beforeSend }), {
      read: why === 'reconcile',
    });
    ctx.emitter.emit('api:contact', { at: ctx.now() });
    if (res.envelopeIssue)
      ctx.emitter.emit('api:envelope-issue', { pipe: pipe.name, key: lane.keyName, issue: res.envelopeIssue });
    const config = ctx.config();
    const t = afterRead(rec, answerOf(res.result), ctx.now(), {
      ref: refOf(pipe),
      continuousReads: readDueAfterMs(config, pipe) === 0,
      dryRun: config.dryRun,
      timing: turn.timing,
      lostAt: ctx.stateLoss()?.from,
    });
    // what another attempt sent or recorded since the snapshot is newer than this read's account
    if (!(await carryOut(turn, t))) return { done: 'read', why, drift: false };
    if (rec.lastError !== null) ctx.emitter.emit('read:recovered', { pipe: pipe.name, code: rec.lastError.code });
    ctx.emitter.emit('applied', { pipe: pipe.name, values: t.write.applied ?? rec.applied });
    return { done: 'read', why, drift: t.drift !== null };
  } catch (err) {
    // A read that keeps failing is reported once per run of failures (turn-failure.ts REPORT_AT).
    return handleApiFailure(
      ctx,
      turn.job,
      pipe,
      lane,
      turn.state,
      err,
      readOutcome(pipe, rec, why),
      rec.lastError?.code ?? null,
    );
  }
}

export async function readEndpoint(turn: Turn, id: string): Promise<JobResult> {
  const { ctx, job, pipe, lane, rec } = turn;
  try {
    const ep = await spend(lane, (beforeSend) =>
      lane.client.getReversePrivateEndpoint(
        { organizationId: pipe.organizationId, serviceId: pipe.serviceId, reversePrivateEndpointId: id },
        { retry: false, beforeSend },
      ),
    );
    ctx.emitter.emit('api:contact', { at: ctx.now() });
    await carryOut(turn, afterEndpoint(rec, id, ep.result.status));
    return { done: 'read_endpoint' };
  } catch (err) {
    return handleApiFailure(
      ctx,
      job,
      pipe,
      lane,
      turn.state,
      err,
      readOutcome(pipe, rec, 'endpoint'),
      rec.lastError?.code ?? null,
    );
  }
}
