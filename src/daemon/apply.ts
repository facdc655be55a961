// A turn on the key's apply queue does one request for one pipe, so the key's limiter counts
// every request: a read (an empty PATCH that learns kind, state and scaling at first contact and
// at each reconcile), else the next reverse private endpoint to read, else the apply of the
// pipe's newest stored desire (only the fields that differ from what the platform reported).
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { pipeKind, type PipeKind, type ReversePrivateEndpointStatus, type ScalingValues } from '../api/index.js';
import { changeDirections } from '../policy/index.js';
import type { Direction, PipeConfig } from '../policy/types.js';
import { pipeByName, type DaemonContext, type KeyLane } from './context.js';
import { handleApiFailure } from './apply-failure.js';
import { STALE_AFTER_MS, type ApplyJob } from './queues.js';
import { changesFor, driftOf, isEmpty, mergeReported, sameValues } from './scaling-values.js';
import { refuses, ServiceLists, trustedState } from './service-lists.js';
import type { PipeRecord } from './state-store.js';

interface ApplyJobData extends ApplyJob {
  /** The body sent with `idempotencyKey`; a retry with a different body needs a new key. */
  readonly sentBody?: ScalingValues;
}

export function createApplyProcessor(ctx: DaemonContext) {
  // A job is a turn to work on one pipe, not a frozen request: the intent (a read that is due,
  // the newest desire) lives in the state store, and BullMQ's deduplication keeps at most one
  // active and one waiting job per pipe, so a pipe's reads and applies never overlap.
  const services = new ServiceLists(ctx);
  return async function work(job: Job<ApplyJobData>): Promise<string> {
    const pipe = pipeByName(ctx.config(), job.data.pipe);
    if (!pipe) return 'unknown-pipe';
    const lane = ctx.laneFor(pipe);
    if (!lane) return 'no-key';
    const { rec, pause, service } = await ctx.store.snapshot(pipe.name, pipe);
    if (rec.parked) return 'parked';
    if (rec.kind === null || rec.readDue) return read(ctx, job, pipe, lane, rec);
    if (rec.endpointsDue.length > 0) return readEndpoint(ctx, job, pipe, lane, rec);
    if (pause) return 'paused';
    if (ctx.config().dryRun) return 'dry-run';
    if (!rec.desired) return 'nothing';
    if (rec.lastDecision && ctx.now() - rec.lastDecision.at > STALE_AFTER_MS) return 'stale';
    // The desire may predate an endpoint read that found it not Ready: decide() would skip now.
    if (Object.values(rec.endpoints).some((s) => s !== 'Ready')) return 'endpoint-not-ready';
    // A change to an idle or stopped service would be refused (424): its state is read first,
    // once per organization and reconcile period, and the change waits while it does not run.
    let state = trustedState(service, ctx.now(), ctx.config().evaluate.reconcileMs);
    if (state === undefined) {
      const listed = await services.read(pipe, lane);
      if (listed.requested) {
        // This turn spent its request on the list: the change gets a turn of its own.
        if (!refuses(listed.state)) await ctx.enqueueApply(pipe, job.data.direction, job.data.tickAt);
        return refuses(listed.state) ? 'service-not-running' : 'service-read';
      }
      state = listed.state;
    }
    if (refuses(state)) return 'service-not-running';
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
    const endpointIds = p.source.kafka?.reversePrivateEndpointIds ?? [];
    // Statuses of endpoints the pipe no longer uses are dropped; the others are refreshed, each
    // in a turn of its own so the key's limiter counts every request.
    const endpoints = Object.fromEntries(
      endpointIds.filter((id) => rec.endpoints[id] !== undefined).map((id) => [id, rec.endpoints[id]!]),
    ) as Record<string, ReversePrivateEndpointStatus>;
    const contact = rec.kind === null;
    const applied = mergeReported(rec.applied, p.scaling);
    await ctx.store.write(pipe.name, {
      kind, state: p.state, applied, endpoints, endpointsDue: endpointIds, lastReadAt: ctx.now(), readDue: false,
      lastError: null, authFailures: 0, ...(contact && endpointIds.length > 0 ? { contactTickAt: job.data.tickAt } : {}),
    });
    ctx.emitter.emit('applied', { pipe: pipe.name, values: applied });
    const drift = !contact && kind && rec.lastApplied ? driftOf(kind, rec.lastApplied, applied) : null;
    if (drift) {
      await ctx.store.increment(pipe.name, 'drifts');
      ctx.emitter.emit('drift', { pipe: pipe.name, expected: rec.lastApplied ?? {}, actual: applied });
      if (!rec.desired) await ctx.store.write(pipe.name, { desired: rec.lastApplied, desiredDirection: 'none' });
    }
    if (endpointIds.length > 0) {
      await ctx.enqueueApply(pipe, 'none', job.data.tickAt, 'read');
    } else if (contact) {
      // First contact: decide right away at the same tick instant instead of a cron period later.
      await ctx.enqueueEvaluate(pipe.name, job.data.tickAt, '-contact');
    } else {
      await followUp(ctx, pipe, kind, rec.desired ?? (drift ? rec.lastApplied : null), applied, job.data.tickAt);
    }
    return contact ? 'contact' : drift ? 'drift' : 'read';
  } catch (err) {
    return handleApiFailure(ctx, job, pipe, lane, err, null);
  }
}

async function readEndpoint(ctx: DaemonContext, job: Job<ApplyJobData>, pipe: PipeConfig, lane: KeyLane, rec: PipeRecord): Promise<string> {
  const [id, ...rest] = rec.endpointsDue as [string, ...string[]];
  try {
    const ep = await lane.client.getReversePrivateEndpoint(
      { organizationId: pipe.organizationId, serviceId: pipe.serviceId, reversePrivateEndpointId: id }, { retry: false });
    ctx.emitter.emit('api:contact', { at: ctx.now() });
    const done = rest.length === 0;
    await ctx.store.write(pipe.name, {
      endpoints: { ...rec.endpoints, [id]: ep.result.status }, endpointsDue: rest, ...(done ? { contactTickAt: null } : {}),
    });
    if (!done) await ctx.enqueueApply(pipe, 'none', job.data.tickAt, 'read');
    else if (rec.contactTickAt !== null) await ctx.enqueueEvaluate(pipe.name, rec.contactTickAt, '-contact');
    else await followUp(ctx, pipe, rec.kind, rec.desired, rec.applied, job.data.tickAt);
    return 'endpoint';
  } catch (err) {
    return handleApiFailure(ctx, job, pipe, lane, err, null);
  }
}

/** A desire that waited behind a read (or a drift's correction) gets its own turn. */
async function followUp(
  ctx: DaemonContext, pipe: PipeConfig, kind: PipeKind | null, desired: ScalingValues | null, applied: ScalingValues, tickAt: number,
): Promise<void> {
  if (!kind || !desired || ctx.config().dryRun) return;
  const body = changesFor(kind, desired, applied);
  if (isEmpty(body)) return;
  await ctx.enqueueApply(pipe, changeDirections(applied, body).up ? 'up' : 'down', tickAt);
}

const ids = (p: PipeConfig) => ({ organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId });
