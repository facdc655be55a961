// The evaluate job: read the pipe's state from Redis, decide(), record, and enqueue an apply only
// when something changes. No API call happens here; first contact and reconcile reads are
// enqueued on the key's apply queue so they share its limiter.
import type { Job } from 'bullmq';
import type { ScalingValues } from '../api/index.js';
import { decide, evaluateStep, assumedKind, SKIP_REASON_CODES, type Decision, type Policy } from '../policy/index.js';
import { pipeByName, type DaemonContext } from './context.js';
import { readDueAfterMs } from './key-periods.js';
import { STALE_AFTER_MS, type EvaluateJob } from './queues.js';
import { trustedState } from './service-lists.js';
import { refOf, toView, type PipeRecord, type StoredDecision } from './state-store.js';

export function createEvaluateProcessor(ctx: DaemonContext) {
  return async function evaluate(job: Job<EvaluateJob>): Promise<string> {
    const started = performance.now();
    const { pipe: name, tickAt } = job.data;
    const config = ctx.config();
    const pipe = pipeByName(config, name);
    if (!pipe) return 'unknown_pipe';
    if (ctx.now() - tickAt > STALE_AFTER_MS) return 'stale';
    const policy = config.policies[pipe.policy];
    if (!policy) return 'unknown_policy';
    const snap = await ctx.store.snapshot(name, pipe);
    const { service } = snap;
    // a pause declared in the config holds whatever Redis holds (or lost)
    const pause = pipe.paused ? { reason: pipe.paused, scope: 'config' as const } : snap.pause;
    let rec = snap.rec;
    // The name now points at another pipe (a reload changed its ids): what we knew is of the old one.
    if (rec.ref !== null && rec.ref !== refOf(pipe)) {
      await ctx.store.reset(name);
      rec = (await ctx.store.snapshot(name, pipe)).rec;
    }

    if (rec.parked) return 'parked';
    if (Boolean(pause) !== rec.pausedSeen) {
      await ctx.store.write(name, { pausedSeen: Boolean(pause) });
      ctx.emitter.emit('paused', {
        pipe: name,
        paused: Boolean(pause),
        ...(pause ? { reason: pause.reason, ...(pause.until !== undefined ? { until: pause.until } : {}) } : {}),
      });
    }
    const reconcileMs = ctx.reconcileMsFor(pipe);
    // leadTime auto: the pipe's slot in its key's lead plan lets a scale-up go before its boundary.
    const until = ctx.leadUntilFor?.(pipe, tickAt);
    const lead = until === undefined ? {} : { leadUntil: until };
    if (rec.kind === null || rec.contactTickAt !== null) {
      // A first contact that failed for good (404 for a wrong pipe id...) waits for the next
      // reconcile period, not one request per tick.
      if (heldAfterRefusal(rec, tickAt, reconcileMs)) return 'held';
      const kind = rec.contactTickAt === null && !rec.contactAsRead ? (assumedKind(pipe, policy)?.kind ?? null) : null;
      // A metric policy decides from a reading of the pipe's own metric, and a maxStep from the
      // pipe's current values: such a pipe is met by reading it first.
      // While Redis' state is lost (redis-guard.ts) nothing is changed: the pipe is read.
      if (kind === null || config.dryRun || policy.metric || hasMaxStep(policy) || (ctx.held?.() ?? null) !== null) {
        await ctx.enqueueApply(pipe, 'none', tickAt, 'read');
        return 'contact';
      }
      // The kind is known: the first contact is the first change, and its answer is the read. A
      // pipe that may not be changed now (paused, its service idle) costs no request until it may.
      const known = trustedState(service, tickAt, config.evaluate.reconcileMs) ?? undefined;
      const assumed = decide(policy, tickAt, {
        ...toView({ ...rec, kind, state: 'Running' }, pipe.bounds, pause, known),
        ...lead,
      });
      if (assumed.action === 'none') {
        await ctx.enqueueApply(pipe, 'none', tickAt, 'read');
        return 'contact';
      }
      const change = assumed.action === 'change';
      const stored = await ctx.store.writeDecision(name, tickAt, {
        ref: refOf(pipe),
        contactKind: change ? kind : null,
        desired: change ? assumed.desired : null,
        desiredDirection: assumed.direction,
        wantedSince: change ? (rec.wantedSince ?? tickAt) : null,
        lastDecision: decisionRecord(tickAt, assumed, false),
      });
      if (!stored) return 'superseded';
      if (!change) {
        emitOutcome(ctx, name, rec, assumed, false);
        return 'skip';
      }
      await ctx.enqueueApply(pipe, 'up', tickAt);
      return 'contact_change';
    }

    // A service state older than a reconcile period is not trusted: the next change re-reads it.
    const serviceState = trustedState(service, tickAt, config.evaluate.reconcileMs) ?? undefined;
    // The metric's value is fetched here so decide() stays pure.
    const metric = policy.metric && ctx.metrics ? await ctx.metrics.reading(policy, pipe, tickAt) : undefined;
    const view = { ...toView(rec, pipe.bounds, pause, serviceState), ...lead };
    // The evaluation step simulate() takes too, so a simulated timeline is the daemon's timeline.
    const { decision, recommendations } = evaluateStep(policy, tickAt, metric ? { ...view, metric } : view);
    // Redis lost its state (redis-guard.ts): decide and record, send nothing until it is rebuilt.
    const stateHeld = ctx.held?.() ?? null;
    const willApply = decision.action === 'change' && !config.dryRun && stateHeld === null;
    const stored = await ctx.store.writeDecision(name, tickAt, {
      recommendations,
      lastDecision: decisionRecord(tickAt, decision, config.dryRun),
      // A skip withdraws any pending desire: a paused or stopped pipe must not be sent one.
      desired: decision.action === 'skip' || stateHeld !== null ? null : decision.desired,
      desiredDirection: decision.direction,
      // The apply-wait metric counts from the first decision that wanted this change.
      wantedSince: willApply ? (rec.wantedSince ?? tickAt) : null,
      ref: refOf(pipe),
    });
    // A newer tick's decision is stored already: this late evaluation changes nothing.
    if (!stored) return 'superseded';

    ctx.emitter.emit('evaluation', {
      pipe: name,
      policy: pipe.policy,
      tickAt,
      durationMs: performance.now() - started,
      lagMs: Math.max(0, ctx.now() - tickAt),
      decision,
    });
    ctx.emitter.emit('window', { pipe: name, windows: decision.windows });
    if (decision.action !== 'skip') ctx.emitter.emit('desired', { pipe: name, values: decision.desired });
    // From the shared state, so every replica's gauge follows the pipe, not only the replica
    // whose worker happened to apply or read it (the "not at desired scaling" alert compares both).
    if (Object.keys(rec.applied).length > 0) ctx.emitter.emit('applied', { pipe: name, values: rec.applied });
    emitOutcome(ctx, name, rec, decision, config.dryRun);

    // The key's budget stretches the reconcile period (key-budget.ts); a change's answer is a read
    // too, so a read is due only some time after the last answer about the pipe, early enough to
    // land within the period (key-periods.ts).
    const readDue = rec.lastReadAt === null || tickAt - rec.lastReadAt >= readDueAfterMs(config, pipe);
    if (readDue && !rec.readDue) await ctx.store.write(name, { readDue: true });
    const held = willApply && heldAfterRefusal(rec, tickAt, reconcileMs);
    if (willApply && !held) await ctx.enqueueApply(pipe, decision.direction, tickAt);
    else if (readDue) await ctx.enqueueApply(pipe, 'none', tickAt, 'read');
    return held ? 'held' : decision.action;
  };
}

function hasMaxStep(policy: Policy): boolean {
  const { scaleUp, scaleDown } = policy.behavior;
  return Object.keys(scaleUp.maxStep).length > 0 || Object.keys(scaleDown.maxStep).length > 0;
}

function decisionRecord(tickAt: number, d: Decision, dryRun: boolean): StoredDecision {
  return {
    at: tickAt,
    action: d.action,
    direction: d.direction,
    windows: d.windows,
    desired: d.desired,
    changes: d.changes,
    reasons: d.reasons,
    ...(dryRun ? { dryRun: true } : {}),
  };
}

/** Answers that the same request would get again: bad request, unknown pipe, idle service. */
const REFUSALS: ReadonlySet<string> = new Set(['API_BAD_REQUEST', 'API_NOT_FOUND', 'API_FAILED_DEPENDENCY']);

/**
 * After a refusal the pipe's applies wait for the next reconcile read rather than repeating every
 * tick: an idle service answered 424 to every 30 s tick (2,880 wasted calls a day per pipe, from
 * the key's shared 10-per-10-s budget). The read clears lastError when it succeeds, and the next
 * tick applies again.
 */
export function heldAfterRefusal(rec: PipeRecord, tickAt: number, reconcileMs: number): boolean {
  const err = rec.lastError;
  return err !== null && REFUSALS.has(err.code) && tickAt - err.at < reconcileMs;
}

function emitOutcome(ctx: DaemonContext, pipe: string, rec: PipeRecord, d: Decision, dryRun: boolean): void {
  if (d.action === 'none') return;
  if (d.action === 'change' && !dryRun) return; // the apply job reports the outcome
  // A pipe that stays skipped for the same reason is reported once, not at every tick.
  const last = rec.lastDecision;
  if (d.action === 'skip' && last?.action === 'skip' && reasonLabel(last) === reasonLabel(d)) return;
  const after: ScalingValues = d.action === 'change' ? { ...rec.applied, ...d.changes } : rec.applied;
  ctx.emitter.emit('decision', {
    pipe,
    direction: d.direction,
    result: d.action === 'skip' ? 'skipped' : 'dry_run',
    reason: reasonLabel(d),
    windows: d.windows,
    before: rec.applied,
    after,
    reasons: d.reasons,
  });
}

/** The short machine reason for a metric label. */
export function reasonLabel(d: Pick<Decision, 'action' | 'direction' | 'reasons' | 'windows'>): string {
  if (d.action === 'skip') {
    const skip = d.reasons.find((r) => (SKIP_REASON_CODES as readonly string[]).includes(r.code));
    return skip?.code ?? d.reasons[0]?.code ?? 'skip';
  }
  if (d.reasons.some((r) => r.code === 'metric_unavailable')) return 'metric_unavailable';
  // A scale-up sent ahead of its window (lead time).
  if (d.direction === 'up' && d.reasons.some((r) => r.code === 'lead_time')) return 'lead_time';
  return d.windows.length > 0 ? 'window' : 'baseline';
}
