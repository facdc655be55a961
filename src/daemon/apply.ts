// The apply queue's jobs: `apply` sends the pipe's newest stored desire (only the fields that
// differ from what the platform last reported); `read` is an empty PATCH that learns the pipe's
// kind, state and scaling (first contact, reconcile). Both run under the key's limiter.
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { pipeKind, type PipeKind, type ReversePrivateEndpointStatus, type ScalingValues } from '../api/index.js';
import { changeDirections } from '../policy/index.js';
import type { Direction, PipeConfig } from '../policy/types.js';
import { pipeByName, type DaemonContext, type KeyLane } from './context.js';
import { handleApiFailure } from './apply-failure.js';
import type { ApplyJob } from './queues.js';
import { changesFor, driftOf, isEmpty, mergeReported, sameValues } from './scaling-values.js';
import type { PipeRecord } from './state-store.js';

interface ApplyJobData extends ApplyJob {
  /** The body sent with `idempotencyKey`; a retry with a different body needs a new key. */
  readonly sentBody?: ScalingValues;
}

export function createApplyProcessor(ctx: DaemonContext) {
  // A job is a turn to work on one pipe, not a frozen request: the intent (a read that is due,
  // the newest desire) lives in the state store, and BullMQ's deduplication keeps at most one
  // active and one waiting job per pipe, so a pipe's reads and applies never overlap.
  return async function work(job: Job<ApplyJobData>): Promise<string> {
    const pipe = pipeByName(ctx.config(), job.data.pipe);
    if (!pipe) return 'unknown-pipe';
    const lane = ctx.laneFor(pipe);
    if (!lane) return 'no-key';
    const [rec, pause] = await Promise.all([ctx.store.read(pipe.name), ctx.store.pause(pipe.name)]);
    if (rec.parked) return 'parked';
    if (rec.kind === null || rec.readDue) return read(ctx, job, pipe, lane, rec);
    if (pause) return 'paused';
    if (ctx.config().dryRun) return 'dry-run';
    if (!rec.desired) return 'nothing';
    return apply(ctx, job, pipe, lane, rec, rec.kind, rec.desired);
  };
}

async function apply(
  ctx: DaemonContext, job: Job<ApplyJobData>, pipe: PipeConfig, lane: KeyLane, rec: PipeRecord,
  kind: PipeKind, desired: ScalingValues,
): Promise<string> {
  const body = changesFor(kind, desired, rec.applied);
  if (isEmpty(body)) return 'unchanged';
  let idempotencyKey = job.data.idempotencyKey;
  if (!job.data.sentBody || !sameValues(job.data.sentBody, body)) {
    if (job.data.sentBody) idempotencyKey = randomUUID();
    await job.updateData({ ...job.data, idempotencyKey, sentBody: body });
  }
  const moves = changeDirections(rec.applied, body);
  const direction: Direction = moves.up ? 'up' : moves.down ? 'down' : 'none';
  ctx.emitter.emit('apply:start', { pipe: pipe.name, key: lane.keyName, queueWaitMs: Math.max(0, Date.now() - job.timestamp) });
  const last = rec.lastDecision;
  const outcome = { pipe: pipe.name, direction, windows: last?.windows ?? [], before: rec.applied, reasons: last?.reasons ?? [] };
  try {
    const res = await lane.client.scalePipe(ids(pipe), body, { idempotencyKey, retry: false });
    const now = ctx.now();
    ctx.emitter.emit('api:contact', { at: now });
    const applied = mergeReported(rec.applied, res.result.scaling, body);
    await ctx.store.write(pipe.name, {
      applied,
      lastApplied: applied,
      state: res.result.state,
      kind: pipeKind(res.result.source) ?? kind,
      // Both directions are stamped when one PATCH moves fields both ways (as decide() expects).
      lastChange: { ...rec.lastChange, ...(moves.up ? { up: now } : {}), ...(moves.down ? { down: now } : {}) },
      lastError: null,
      authFailures: 0,
    });
    ctx.emitter.emit('applied', { pipe: pipe.name, values: applied });
    ctx.emitter.emit('decision', {
      ...outcome, result: 'applied', reason: outcome.windows.length > 0 ? 'window' : 'baseline', after: applied,
      requestId: res.requestId,
    });
    return 'applied';
  } catch (err) {
    return handleApiFailure(ctx, job, pipe, lane, err, { ...outcome, after: { ...rec.applied, ...body } });
  }
}

async function read(ctx: DaemonContext, job: Job<ApplyJobData>, pipe: PipeConfig, lane: KeyLane, rec: PipeRecord): Promise<string> {
  try {
    const res = await lane.client.scalePipe(ids(pipe), {}, { retry: false });
    ctx.emitter.emit('api:contact', { at: ctx.now() });
    const p = res.result;
    const kind = pipeKind(p.source);
    const endpoints: Record<string, ReversePrivateEndpointStatus> = {};
    for (const id of p.source.kafka?.reversePrivateEndpointIds ?? []) {
      const ep = await lane.client.getReversePrivateEndpoint(
        { organizationId: pipe.organizationId, serviceId: pipe.serviceId, reversePrivateEndpointId: id }, { retry: false });
      endpoints[id] = ep.result.status;
    }
    const applied = mergeReported(rec.applied, p.scaling);
    await ctx.store.write(pipe.name, {
      kind, state: p.state, applied, endpoints, lastReadAt: ctx.now(), readDue: false, lastError: null, authFailures: 0,
    });
    ctx.emitter.emit('applied', { pipe: pipe.name, values: applied });
    if (rec.kind === null) {
      // First contact: decide right away at the same tick instant instead of a cron period later.
      await ctx.enqueueEvaluate(pipe.name, job.data.tickAt, '-contact');
      return 'contact';
    }
    const drift = kind && rec.lastApplied ? driftOf(kind, rec.lastApplied, applied) : null;
    if (drift) {
      await ctx.store.increment(pipe.name, 'drifts');
      ctx.emitter.emit('drift', { pipe: pipe.name, expected: rec.lastApplied ?? {}, actual: applied });
      ctx.logger.warn({ pipe: pipe.name, expected: rec.lastApplied, actual: applied }, 'scaling drifted from what pipescaler applied; applying it again');
      if (!rec.desired) await ctx.store.write(pipe.name, { desired: rec.lastApplied, desiredDirection: 'none' });
    }
    const desired = rec.desired ?? (drift ? rec.lastApplied : null);
    if (kind && desired && !ctx.config().dryRun && !isEmpty(changesFor(kind, desired, applied))) {
      // An apply that waited behind this read (or the drift's correction) gets its own turn.
      await ctx.enqueueApply(pipe, changeDirections(applied, changesFor(kind, desired, applied)).up ? 'up' : 'down', job.data.tickAt);
    }
    return drift ? 'drift' : 'read';
  } catch (err) {
    return handleApiFailure(ctx, job, pipe, lane, err, null);
  }
}

const ids = (p: PipeConfig) => ({ organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId });
