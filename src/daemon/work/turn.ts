// A turn on the key's apply queue: one request for one pipe, after a unit of the key's shared
// budget (spend.ts). What the request is comes from the pipe's lifecycle (next-step.ts nextStep),
// decided again here with the current clock and config, so a change whose reason has expired
// since the evaluation (its window ended, a reload narrowed the bounds, the pipe was paused) is
// never sent; what its answer makes of the record comes from answers.ts.
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { isApiError, pipeKind, type ApiError, type Pipe, type ScalingValues } from '../../api/index.js';
import { changeDirections, outcomeReason, type PipeConfig } from '../../policy/index.js';
import { type DaemonContext } from './context.js';
import { handleApiFailure, readOutcome, type ApplyOutcome } from './turn-failure.js';
import type { AuditDirection } from '../model/events.js';
import { evaluatePipe } from './evaluate.js';
import { dropped, type JobResult } from '../model/job-results.js';
import { afterEndpoint, afterRead, afterSentChange } from '../lifecycle/answers.js';
import { nextStep, turnInstant } from '../lifecycle/next-step.js';
import { actuationSample, expectedValues, type ConfirmTiming } from '../lifecycle/confirmation.js';
import { reportConfirmation } from './confirm-events.js';
import { recordActuation } from '../store/actuation-store.js';
import { readDueAfterMs } from '../lanes/lead-plans.js';
import { confirmOrderOf, turnOf, type ApplyJob } from '../lanes/queues.js';
import { sameValues } from '../model/scaling-values.js';
import { ServiceLists } from './service-lists.js';
import { situationOf } from './situation.js';
import { handleDrift } from './operator-events.js';
import { spend, UnitExpired } from '../lanes/spend.js';
import {
  afterNotCarriedOut,
  IN_FLIGHT,
  intentOf,
  intentWrite,
  newIntent,
  unknownAfter,
} from '../lifecycle/unsettled.js';
import { refOf, type PipeRecord, type Unsettled } from '../model/record.js';
import { type KeyLane } from '../lanes/lane.js';
import { pipeByName } from '../model/pipe-index.js';
import { type ReadWhy } from '../model/job-results.js';
import { timingOf } from '../lifecycle/steps.js';
import { type PipeAnswer, type Transition } from '../lifecycle/transition.js';
import { stateOfMarker } from '../store/redis-guard.js';
import { holderMayWrite, owedDecision, owedLine } from '../lifecycle/owed-line.js';
import { writeOwedLines } from './owed-lines.js';

/** How long a landed change's mark waits for its sender's late 200 (redis-keys.ts landed). */
const LANDED_MARK_MS = 3_600_000;

interface ApplyJobData extends ApplyJob {
  /** The body sent with `idempotencyKey`; a retry with a different body needs a new key. */
  readonly sentBody?: ScalingValues;
}

export function createApplyProcessor(ctx: DaemonContext) {
  // A job is a turn to work on one pipe, not a frozen request: what it does is decided when it
  // runs, and BullMQ's deduplication keeps at most one active and one waiting job per pipe, so a
  // pipe's requests never overlap.
  const services = new ServiceLists(ctx);
  return async function work(job: Job<ApplyJobData>, token?: string): Promise<JobResult> {
    const config = ctx.config();
    const pipe = pipeByName(config, job.data.pipe);
    if (!pipe) return dropped('unknown_pipe');
    const policy = config.policies[pipe.policy];
    if (!policy) return dropped('unknown_policy');
    const lane = ctx.laneFor(pipe);
    if (!lane) return dropped('no_key');
    // A reload gave the pipe another key (its pool changed, or its key: did): the turn moves to
    // that key's queue, whose deduplication keeps the pipe's requests from overlapping there.
    if (job.queueName !== lane.queue.name) {
      const turnName = turnOf(job.name);
      if (turnName !== 'change') await ctx.enqueueRead(pipe, job.data.tickAt, turnName, confirmOrderOf(job));
      else await ctx.enqueueChange(pipe, job.data.direction, job.data.tickAt);
      return { done: 'key_moved', key: lane.keyName };
    }
    const snap = await ctx.store.snapshot(pipe.name, pipe);
    // Redis lost the state, no tick noticed yet: nothing is asked of the platform for it; the tick
    // that notices has the pipe read again. Else what the turn writes goes in only while the marker
    // names the state it read (stateOfMarker): an answer never makes a record of an emptied one.
    if (snap.marker === null) return dropped('state_lost');
    // an audit line a change's sender died before writing, due: written first (owed-lines.ts)
    if (snap.owed.length > 0) await writeOwedLines(ctx, pipe.name, snap.owed);
    const { rec } = snap;
    const at = turnInstant(rec, ctx.now());
    let sit = await situationOf(ctx, pipe, policy, snap, at, rec.decidedAt ?? job.data.tickAt, 'turn');
    // a retry of the job is the pipe's next attempt that its backoff scheduled (next-step.ts backingOff)
    if (job.attemptsMade > 0) sit = { ...sit, retry: true };
    let { step, decision } = nextStep(rec, sit, at);
    const turn: Turn = { ctx, job, token, pipe, lane, rec, state: stateOfMarker(snap.marker), timing: timingOf(sit) };
    if (step.do === 'list_services') {
      // The turn that read the list goes on to its change, with a unit of its own: without one it
      // goes back to the front of its priority (spend.ts), the state now stored. A new turn at the
      // back of the queue made that change the last of a cold start's.
      const { state } = await services.read(pipe, lane, turn.state);
      sit = { ...sit, service: { state, at: ctx.now() } };
      ({ step, decision } = nextStep(rec, sit, at));
    }
    switch (step.do) {
      case 'forget':
        // The next evaluation forgets the record.
        return dropped('pipe_changed');
      case 'read':
        return read(turn, step.why);
      case 'read_endpoint':
        return readEndpoint(turn, step.endpointId);
      case 'change':
        return change(turn, step.body, decision?.recommendation);
      case 'list_services':
        // Not after a list just stored (its state, even unknown, is fresh): nothing to send.
        return { done: 'nothing', step: 'wait', reason: 'service_unknown' };
      case 'wait':
      case 'skip':
        return { done: 'nothing', step: step.do, reason: step.reason };
    }
  };
}

interface Turn {
  readonly ctx: DaemonContext;
  readonly job: Job<ApplyJobData>;
  readonly token: string | undefined;
  readonly pipe: PipeConfig;
  readonly lane: KeyLane;
  readonly rec: PipeRecord;
  /** The state the turn's snapshot read (redis-guard.ts stateOfMarker): its writes need it still. */
  readonly state: string;
  /** When the pipe's confirmation reads go, and its limit. */
  readonly timing: ConfirmTiming;
}

/** 'mixed' when one PATCH moves fields both ways (each field under its own direction's rules). */
export function auditDirection(moves: { up: boolean; down: boolean }): AuditDirection {
  return moves.up && moves.down ? 'mixed' : moves.up ? 'up' : moves.down ? 'down' : 'none';
}

function answerOf(p: Pipe): PipeAnswer {
  return {
    kind: pipeKind(p.source),
    state: p.state,
    scaling: p.scaling,
    endpointIds: p.source.kafka?.reversePrivateEndpointIds ?? [],
  };
}

/**
 * Writes a transition, reports it and its drift and enqueues what comes next; nothing of it when
 * another attempt of the job (it lost its lock) or another replica sent a change or recorded one
 * since the turn's snapshot (unsettled.ts): that one's record stands. False then.
 */
async function carryOut(turn: Turn, t: Transition): Promise<boolean> {
  // A read that finds in force a change its sender still holds (stalled past its request's time,
  // or gone) reports it landed; marked first, so that its 200, should it still come, knows.
  for (const landed of [t.landed, t.landedReplaced]) {
    const id = landed?.id;
    const change = [turn.rec.unsettled, ...turn.rec.replaced].find((c) => c !== null && c.id === id);
    if (id !== undefined && change?.code === IN_FLIGHT)
      await turn.ctx.store.redis.set(turn.ctx.store.keys.landed(id), '1', 'PX', LANDED_MARK_MS);
  }
  if (!(await turn.ctx.store.writeIfIntent(turn.pipe.name, intentOf(turn.rec), t.write, turn.state))) return false;
  await follow(turn, t);
  return true;
}

/** What a written transition reports and enqueues. */
async function follow(turn: Turn, t: Transition): Promise<void> {
  const { ctx, job, pipe } = turn;
  const kind = t.write.kind ?? turn.rec.kind;
  // A change's outcome first, before anything awaits: its audit line is written (stdout) as soon as
  // its record is, so a replica killed in between loses as little as can be.
  // the change of unknown outcome the record held, and one a newer change had replaced
  for (const landed of [t.landed, t.landedReplaced]) {
    if (!landed) continue;
    ctx.emitter.emit('change:landed', {
      pipe: pipe.name,
      sent: landed.sent,
      sentAt: landed.at,
      at: ctx.now(),
      ...(landed.key !== undefined ? { idempotencyKey: landed.key } : {}),
    });
    ctx.emitter.emit('outcome', {
      pipe: pipe.name,
      outcome: 'landed_late',
      at: ctx.now(),
      reason: 'landed_late',
      after: landed.sent,
      message: `a change sent ${Math.round((ctx.now() - landed.at) / 1000)} s ago, whose outcome was unknown, shows in a read`,
    });
  }
  if (t.unknown)
    ctx.emitter.emit('change:unknown', {
      pipe: pipe.name,
      sent: t.unknown.sent,
      sentAt: t.unknown.at,
      at: ctx.now(),
      ...(t.unknown.key !== undefined ? { idempotencyKey: t.unknown.key } : {}),
    });
  // each measured actuation is a sample of the pipe's (and its kind's) p95 (actuation-store.ts):
  // the instant its read stood for, its wait in the queue not counted, unless the change was in
  // force at its own answer, went unconfirmed or its outcome was unknown (confirmation.ts
  // actuationSample); one lost to Redis going away is only one sample
  const c = t.confirmation;
  const sample = c?.is === 'confirmed' ? actuationSample(c) : undefined;
  if (t.confirmation) reportConfirmation(ctx, pipe, turn.rec, kind, t.confirmation, sample);
  if (sample && 'ms' in sample)
    await recordActuation(ctx.store.redis, ctx.store.keys, { ...pipe, kind }, sample.ms).catch(() => {});
  // Answered: a pipe whose calls were failing is out of its backoff (answers.ts).
  if (turn.rec.failures > 0)
    ctx.emitter.emit('backoff', { pipe: pipe.name, backingOff: false, failures: turn.rec.failures });
  // counted, emitted, and kept as a `manual` override when the policy's onDrift says so
  if (t.drift) await handleDrift(ctx, pipe, t.drift.expected, t.drift.actual, turn.state);

  const next = t.next;
  if (next.then === 'read') await ctx.enqueueRead(pipe, job.data.tickAt);
  else if (next.then === 'change') await ctx.enqueueChange(pipe, next.up ? 'up' : 'down', job.data.tickAt);
  else if (next.then === 'evaluate') await evaluateNow(turn);
  // The change's next confirmation read is queued for its instant (confirmation.ts), not found
  // due at the first tick after it.
  const due = t.write.confirming;
  if (due?.dueAt != null && due.dueAt > ctx.now())
    await ctx.enqueueRead(pipe, job.data.tickAt, 'confirm', due.sentAt, due.dueAt);
}

/**
 * The evaluation an answer calls for, made by the turn itself at the tick it came from: its change
 * goes to the key's queue at its own priority at once (scale-ups first), and through nextStep and
 * its safety check like any other. Queued on the evaluate queue, it waited behind a tick's
 * evaluations of the whole fleet: seconds on a busy process, the tail of a cold start.
 */
async function evaluateNow(turn: Turn): Promise<void> {
  const { ctx, job, pipe } = turn;
  try {
    await evaluatePipe(ctx, pipe.name, job.data.tickAt);
  } catch (err) {
    // The answer is stored: a failure here must not fail the turn (its retry would ask again).
    ctx.logger.warn({ pipe: pipe.name, err: (err as Error).message }, 'evaluation after an answer failed: queued');
    await ctx.enqueueEvaluate(pipe.name, job.data.tickAt, '-answer');
  }
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

async function change(turn: Turn, body: ScalingValues, target: ScalingValues | undefined): Promise<JobResult> {
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

async function read(turn: Turn, why: ReadWhy): Promise<JobResult> {
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

async function readEndpoint(turn: Turn, id: string): Promise<JobResult> {
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

const ids = (p: PipeConfig) => ({ organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId });
