// A turn on the key's apply queue does one request for one pipe, and every request takes a unit of
// the key's shared budget first (spend.ts). Changes come before reads: a change's PATCH answers
// with the whole pipe, so it is the pipe's read too (drift checked on the fields not sent); a read
// (an empty PATCH) is sent only when no change is wanted, within the key's read share. A pipe
// never met whose kind is known gets its first change as its first contact.
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import {
  clampToLimit,
  isApiError,
  pipeKind,
  SCALABLE_PIPE_STATES,
  type PipeKind,
  type ReversePrivateEndpointStatus,
  type ScalingValues,
} from '../api/index.js';
import { afterChange, changeDirections, type PipeConfig } from '../policy/index.js';
import { pipeByName, type DaemonContext, type KeyLane } from './context.js';
import { handleApiFailure, type ApplyOutcome } from './apply-failure.js';
import type { AuditDirection } from './events.js';
import { readDueAfterMs } from './key-periods.js';
import { STALE_AFTER_MS, type ApplyJob } from './queues.js';
import { changesFor, driftOf, isEmpty, mergeReported, sameValues } from './scaling-values.js';
import { refuses, ServiceLists, trustedState } from './service-lists.js';
import { spend } from './spend.js';
import { refOf, type PauseFlag, type PipeRecord } from './state-store.js';

interface ApplyJobData extends ApplyJob {
  /** The body sent with `idempotencyKey`; a retry with a different body needs a new key. */
  readonly sentBody?: ScalingValues;
}

export function createApplyProcessor(ctx: DaemonContext) {
  // A job is a turn to work on one pipe, not a frozen request: the intent (a read that is due,
  // the newest desire) lives in the state store, and BullMQ's deduplication keeps at most one
  // active and one waiting job per pipe, so a pipe's reads and applies never overlap.
  const services = new ServiceLists(ctx);
  return async function work(job: Job<ApplyJobData>, token?: string): Promise<string> {
    const pipe = pipeByName(ctx.config(), job.data.pipe);
    if (!pipe) return 'unknown_pipe';
    const lane = ctx.laneFor(pipe);
    if (!lane) return 'no_key';
    // A reload gave the pipe another key (its pool changed, or its key: did): the turn moves to
    // that key's queue, whose deduplication keeps the pipe's requests from overlapping there.
    if (job.queueName !== lane.queue.name) {
      await ctx.enqueueApply(pipe, job.data.direction, job.data.tickAt, job.name === 'read' ? 'read' : 'apply');
      return 'key_moved';
    }
    const { rec, pause, service } = await ctx.store.snapshot(pipe.name, pipe);
    if (rec.parked) return 'parked';
    // The name points at another pipe since a reload: the next evaluation resets what we knew.
    if (rec.ref !== null && rec.ref !== refOf(pipe)) return 'pipe_changed';
    const turn = { ctx, job, token, pipe, lane, rec };
    const firstChange = rec.kind === null && rec.contactKind !== null && rec.desired !== null && !rec.contactAsRead;
    if (rec.kind === null && !firstChange) return read(turn);
    if (rec.endpointsDue.length > 0) return readEndpoint(turn);
    const kind = rec.kind ?? rec.contactKind;
    if (kind === null) throw new Error(`pipe ${pipe.name}: a first change without a contact kind`); // firstChange has one

    const body = rec.desired ? changesFor(kind, rec.desired, rec.applied) : {};
    const blocked = changeBlocked(ctx, pipe, rec, pause, body);
    // Changes before reads; a read only when no change is wanted (or the change may not go now).
    if (blocked !== null) return rec.readDue && rec.kind !== null ? read(turn) : blocked;

    // A change to an idle or stopped service would be refused (424): its state is read first,
    // once per organization and reconcile period, and the change waits while it does not run.
    // The turn that read the list goes on to its change, with a unit of its own: without one it
    // goes back to the front of its priority (spend.ts), the state now stored. A new turn at the
    // back of the queue made that change the last of a cold start's (every reconcile period, one
    // pipe waited behind every change queued after its own).
    let state = trustedState(service, ctx.now(), ctx.config().evaluate.reconcileMs);
    if (state === undefined) state = (await services.read(pipe, lane)).state;
    if (refuses(state)) return 'service_not_running';
    return apply(turn, kind, body);
  };
}

interface Turn {
  readonly ctx: DaemonContext;
  readonly job: Job<ApplyJobData>;
  readonly token: string | undefined;
  readonly pipe: PipeConfig;
  readonly lane: KeyLane;
  readonly rec: PipeRecord;
}

/**
 * Why the stored desire may not be sent now, or null. Checked right before every PATCH against
 * what the turn just learned and the current config: the pipe's state (a Stopped pipe is never
 * sent a change), the pipe's bounds and the platform's ranges (a reload may have narrowed them).
 */
function changeBlocked(
  ctx: DaemonContext,
  pipe: PipeConfig,
  rec: PipeRecord,
  pause: PauseFlag | null,
  body: ScalingValues,
): string | null {
  if (pause) return 'paused';
  if (ctx.config().dryRun) return 'dry_run';
  if (!rec.desired) return 'nothing';
  if (isEmpty(body)) return 'unchanged';
  if (rec.lastDecision && ctx.now() - rec.lastDecision.at > STALE_AFTER_MS) return 'stale';
  if (rec.state !== null && !SCALABLE_PIPE_STATES.has(rec.state)) return 'pipe_state';
  // The desire may predate an endpoint read that found it not Ready: decide() would skip now.
  if (Object.values(rec.endpoints).some((s) => s !== 'Ready')) return 'endpoint_not_ready';
  for (const [f, v] of Object.entries(body) as [keyof ScalingValues, number][]) {
    const b = pipe.bounds[f];
    if (clampToLimit(f, v) !== v || (b?.min !== undefined && v < b.min) || (b?.max !== undefined && v > b.max))
      return 'out_of_bounds';
  }
  return null;
}

/** 'mixed' when one PATCH moves fields both ways (each field under its own direction's rules). */
export function auditDirection(moves: { up: boolean; down: boolean }): AuditDirection {
  return moves.up && moves.down ? 'mixed' : moves.up ? 'up' : moves.down ? 'down' : 'none';
}

async function apply(turn: Turn, kind: PipeKind, body: ScalingValues): Promise<string> {
  const { ctx, job, pipe, lane, rec } = turn;
  const contact = rec.kind === null;
  let idempotencyKey = job.data.idempotencyKey;
  if (!job.data.sentBody || !sameValues(job.data.sentBody, body)) {
    if (job.data.sentBody) idempotencyKey = randomUUID();
    await job.updateData({ ...job.data, idempotencyKey, sentBody: body });
  }
  const moves = changeDirections(rec.applied, body);
  const last = rec.lastDecision;
  // `before` is what the platform last reported (a read, or the answer of the last request).
  const outcome: ApplyOutcome = {
    pipe: pipe.name,
    direction: auditDirection(moves),
    windows: last?.windows ?? [],
    before: rec.applied,
    reasons: last?.reasons ?? [],
    after: { ...rec.applied, ...body },
  };
  try {
    const res = await spend(lane, () => lane.client.scalePipe(ids(pipe), body, { idempotencyKey, retry: false }));
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
    const p = res.result;
    const realKind = pipeKind(p.source) ?? kind;
    const applied = mergeReported(rec.applied, p.scaling, body);
    const endpointIds = p.source.kafka?.reversePrivateEndpointIds ?? [];
    // The answer is the pipe's read: a field we did not send that differs from what we last
    // applied drifted behind our back.
    const notSent = rec.lastApplied
      ? Object.fromEntries(Object.entries(rec.lastApplied).filter(([f]) => !(f in body)))
      : null;
    const drift = !contact && notSent ? driftOf(realKind, notSent, applied) : null;
    await ctx.store.write(pipe.name, {
      applied,
      lastApplied: applied,
      state: p.state,
      kind: realKind,
      // Stamped by the evaluation step's rule (both directions when one PATCH moves fields both ways).
      lastChange: afterChange(rec.applied, rec.lastChange, body, now, applied).lastChange,
      lastError: null,
      authFailures: 0,
      lastReadAt: now,
      readDue: false,
      contactKind: null,
      wantedSince: null,
      ref: refOf(pipe),
      ...(contact ? { endpointsDue: endpointIds } : {}),
    });
    ctx.emitter.emit('applied', { pipe: pipe.name, values: applied });
    ctx.emitter.emit('decision', {
      ...outcome,
      result: 'applied',
      after: applied,
      // A scale-up sent ahead of its window says so (lead time).
      reason:
        moves.up && outcome.reasons.some((r) => r.code === 'lead_time')
          ? 'lead_time'
          : outcome.windows.length > 0
            ? 'window'
            : 'baseline',
      requestId: res.requestId,
    });
    if (drift) {
      await ctx.store.increment(pipe.name, 'drifts');
      ctx.emitter.emit('drift', { pipe: pipe.name, expected: notSent ?? {}, actual: applied });
      await ctx.enqueueEvaluate(pipe.name, job.data.tickAt, '-drift');
    }
    if (contact && endpointIds.length > 0) await ctx.enqueueApply(pipe, 'none', job.data.tickAt, 'read');
    return contact ? 'contact_applied' : 'applied';
  } catch (err) {
    // A first change sent as the assumed kind that the platform refuses for its fields: the pipe
    // is of another kind. Read it instead (the next turn), nothing failed.
    if (contact && isApiError(err) && err.code === 'API_BAD_REQUEST') {
      await ctx.store.write(pipe.name, { contactAsRead: true, contactKind: null, desired: null });
      await ctx.enqueueApply(pipe, 'none', job.data.tickAt, 'read');
      return 'contact_refused';
    }
    // A first contact that keeps failing the same way is reported once per change of state.
    return handleApiFailure(ctx, job, pipe, lane, err, outcome, contact ? (rec.lastError?.code ?? null) : undefined);
  }
}

async function read(turn: Turn): Promise<string> {
  const { ctx, job, pipe, lane, rec } = turn;
  const contact = rec.kind === null;
  try {
    // A reconcile read draws on the key's read share; a first contact is what every change waits for.
    const res = await spend(lane, () => lane.client.scalePipe(ids(pipe), {}, { retry: false }), { read: !contact });
    ctx.emitter.emit('api:contact', { at: ctx.now() });
    if (res.envelopeIssue)
      ctx.emitter.emit('api:envelope-issue', { pipe: pipe.name, key: lane.keyName, issue: res.envelopeIssue });
    const p = res.result;
    const kind = pipeKind(p.source);
    const endpointIds = p.source.kafka?.reversePrivateEndpointIds ?? [];
    // Statuses of endpoints the pipe no longer uses are dropped; the others are refreshed, each
    // in a turn of its own so the key's budget counts every request.
    const endpoints = Object.fromEntries(
      endpointIds.flatMap((id) => {
        const status = rec.endpoints[id];
        return status === undefined ? [] : [[id, status] as const];
      }),
    ) as Record<string, ReversePrivateEndpointStatus>;
    const applied = mergeReported(rec.applied, p.scaling);
    await ctx.store.write(pipe.name, {
      kind,
      state: p.state,
      applied,
      endpoints,
      endpointsDue: endpointIds,
      lastReadAt: ctx.now(),
      readDue: false,
      lastError: null,
      authFailures: 0,
      ref: refOf(pipe),
      contactAsRead: false,
      contactKind: null,
      ...(contact && endpointIds.length > 0 ? { contactTickAt: job.data.tickAt } : {}),
    });
    if (rec.lastError !== null) ctx.emitter.emit('read:recovered', { pipe: pipe.name, code: rec.lastError.code });
    ctx.emitter.emit('applied', { pipe: pipe.name, values: applied });
    const drift = !contact && kind && rec.lastApplied ? driftOf(kind, rec.lastApplied, applied) : null;
    if (drift) {
      await ctx.store.increment(pipe.name, 'drifts');
      ctx.emitter.emit('drift', { pipe: pipe.name, expected: rec.lastApplied ?? {}, actual: applied });
    }
    if (endpointIds.length > 0) {
      await ctx.enqueueApply(pipe, 'none', job.data.tickAt, 'read');
    } else if (contact) {
      // First contact: decide right away at the same tick instant instead of a cron period later.
      await ctx.enqueueEvaluate(pipe.name, job.data.tickAt, '-contact');
    } else if (!sameValues(applied, rec.applied)) {
      // The platform has other values than the stored desire was decided against (a drift): decide
      // again from what it has, so the correction follows maxStep, cooldowns and each direction's rules.
      await ctx.store.write(pipe.name, { desired: null });
      await ctx.enqueueEvaluate(pipe.name, job.data.tickAt, '-drift');
    } else if (
      !(await followUp(ctx, pipe, kind, rec.desired, applied, job.data.tickAt)) &&
      readDueAfterMs(ctx.config(), pipe) === 0
    ) {
      // A key whose reads go round continuously (its period stretched to its read share): the
      // next read of this pipe queues up now, behind every pipe read before it, so each is read
      // once per round, in the order of their last reads.
      await ctx.enqueueApply(pipe, 'none', job.data.tickAt, 'read');
    }
    return contact ? 'contact' : drift ? 'drift' : 'read';
  } catch (err) {
    return handleApiFailure(ctx, job, pipe, lane, err, readOutcome(pipe, rec), rec.lastError?.code ?? null);
  }
}

/** A read that fails is a failed decision too (with its code), reported once per change of state. */
function readOutcome(pipe: PipeConfig, rec: PipeRecord): ApplyOutcome {
  return {
    pipe: pipe.name,
    direction: 'none',
    windows: rec.lastDecision?.windows ?? [],
    before: rec.applied,
    after: rec.applied,
    reasons:
      rec.kind === null
        ? [{ code: 'unknown_pipe', message: 'first contact: the pipe could not be read' }]
        : [{ code: 'unknown_pipe', message: 'reconcile read failed' }],
  };
}

async function readEndpoint(turn: Turn): Promise<string> {
  const { ctx, job, pipe, lane, rec } = turn;
  const [id, ...rest] = rec.endpointsDue as [string, ...string[]];
  try {
    const ep = await spend(lane, () =>
      lane.client.getReversePrivateEndpoint(
        { organizationId: pipe.organizationId, serviceId: pipe.serviceId, reversePrivateEndpointId: id },
        { retry: false },
      ),
    );
    ctx.emitter.emit('api:contact', { at: ctx.now() });
    const done = rest.length === 0;
    await ctx.store.write(pipe.name, {
      endpoints: { ...rec.endpoints, [id]: ep.result.status },
      endpointsDue: rest,
      ...(done ? { contactTickAt: null } : {}),
    });
    if (!done) await ctx.enqueueApply(pipe, 'none', job.data.tickAt, 'read');
    else if (rec.contactTickAt !== null) await ctx.enqueueEvaluate(pipe.name, rec.contactTickAt, '-contact');
    else await followUp(ctx, pipe, rec.kind, rec.desired, rec.applied, job.data.tickAt);
    return 'endpoint';
  } catch (err) {
    return handleApiFailure(ctx, job, pipe, lane, err, null);
  }
}

/** A desire that waited behind a read gets its own turn; true when it did. */
async function followUp(
  ctx: DaemonContext,
  pipe: PipeConfig,
  kind: PipeKind | null,
  desired: ScalingValues | null,
  applied: ScalingValues,
  tickAt: number,
): Promise<boolean> {
  if (!kind || !desired || ctx.config().dryRun) return false;
  const body = changesFor(kind, desired, applied);
  if (isEmpty(body)) return false;
  await ctx.enqueueApply(pipe, changeDirections(applied, body).up ? 'up' : 'down', tickAt);
  return true;
}

const ids = (p: PipeConfig) => ({ organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId });
