// A turn (Turn) and what its answer does: the transition written while the record still names the
// state the turn read (carryOut), then reported, its drift handled, and what comes next queued
// (follow): a read, a change, an evaluation at once, the change's next confirmation read.
import type { Job } from 'bullmq';
import { pipeKind, type Pipe, type ScalingValues } from '../../api/index.js';
import { type PipeConfig } from '../../policy/index.js';
import { type DaemonContext } from './context.js';
import { evaluatePipe } from './evaluate.js';
import { actuationSample, type ConfirmTiming } from '../lifecycle/confirmation.js';
import { reportConfirmation } from './confirm-events.js';
import { recordActuation } from '../store/actuation-store.js';
import { type ApplyJob } from '../lanes/queues.js';
import { handleDrift } from './operator-events.js';
import { IN_FLIGHT, intentOf } from '../lifecycle/unsettled.js';
import { type PipeRecord } from '../model/record.js';
import { type KeyLane } from '../lanes/lane.js';
import { type PipeAnswer, type Transition } from '../lifecycle/transition.js';

/** How long a landed change's mark waits for its sender's late 200 (redis-keys.ts landed). */
const LANDED_MARK_MS = 3_600_000;

export interface ApplyJobData extends ApplyJob {
  /** The body sent with `idempotencyKey`; a retry with a different body needs a new key. */
  readonly sentBody?: ScalingValues;
}

export interface Turn {
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

export function answerOf(p: Pipe): PipeAnswer {
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
export async function carryOut(turn: Turn, t: Transition): Promise<boolean> {
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
export async function follow(turn: Turn, t: Transition): Promise<void> {
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

export const ids = (p: PipeConfig) => ({ organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId });
