// The evaluate job: read the pipe's state from Redis, decide(), record, and enqueue an apply only
// when something changes. No API call happens here; first contact and reconcile reads are
// enqueued on the key's apply queue so they share its limiter.
import type { Job } from 'bullmq';
import type { ScalingValues } from '../api/index.js';
import { decide } from '../policy/index.js';
import { SKIP_REASON_CODES, type Decision } from '../policy/types.js';
import { pipeByName, type DaemonContext } from './context.js';
import { STALE_AFTER_MS, type EvaluateJob } from './queues.js';
import { trustedState } from './service-lists.js';
import { toView, type PipeRecord } from './state-store.js';

/** A bound on the stored list whatever the stabilization window (one per tick adds up). */
const MAX_RECOMMENDATIONS = 2_000;

export function createEvaluateProcessor(ctx: DaemonContext) {
  return async function evaluate(job: Job<EvaluateJob>): Promise<string> {
    const started = performance.now();
    const { pipe: name, tickAt } = job.data;
    const config = ctx.config();
    const pipe = pipeByName(config, name);
    if (!pipe) return 'unknown-pipe';
    if (ctx.now() - tickAt > STALE_AFTER_MS) return 'stale';
    const policy = config.policies[pipe.policy];
    if (!policy) return 'unknown-policy';
    const { rec, pause, service } = await ctx.store.snapshot(name, pipe);

    if (rec.parked) return 'parked';
    if (Boolean(pause) !== rec.pausedSeen) {
      await ctx.store.write(name, { pausedSeen: Boolean(pause) });
      ctx.emitter.emit('paused', {
        pipe: name, paused: Boolean(pause),
        ...(pause ? { reason: pause.reason, ...(pause.until !== undefined ? { until: pause.until } : {}) } : {}),
      });
    }
    if (rec.kind === null || rec.contactTickAt !== null) {
      await ctx.enqueueApply(pipe, 'none', tickAt, 'read');
      return 'contact';
    }

    // A service state older than a reconcile period is not trusted: the next change re-reads it.
    const serviceState = trustedState(service, tickAt, config.evaluate.reconcileMs) ?? undefined;
    const decision = decide(policy, tickAt, toView(rec, pipe.bounds, pause, serviceState));
    // Kept exactly as simulate() keeps them, so a simulated timeline is the daemon's timeline.
    const keepFrom = tickAt - policy.behavior.scaleDown.stabilizationMs;
    const recent = rec.recommendations.filter((r) => r.at >= keepFrom);
    const recommendations = decision.action === 'skip'
      ? rec.recommendations
      : Object.keys(decision.recommendation).length > 0
        ? [...recent, { at: tickAt, values: decision.recommendation }].slice(-MAX_RECOMMENDATIONS)
        : recent;
    const willApply = decision.action === 'change' && !config.dryRun;
    await ctx.store.write(name, {
      recommendations,
      lastDecision: {
        at: tickAt, action: decision.action, direction: decision.direction, windows: decision.windows,
        desired: decision.desired, changes: decision.changes, reasons: decision.reasons,
        ...(config.dryRun ? { dryRun: true } : {}),
      },
      // A skip withdraws any pending desire: a paused or stopped pipe must not be sent one.
      desired: decision.action === 'skip' ? null : decision.desired,
      desiredDirection: decision.direction,
    });

    ctx.emitter.emit('evaluation', {
      pipe: name, policy: pipe.policy, tickAt, durationMs: performance.now() - started,
      lagMs: Math.max(0, ctx.now() - tickAt), decision,
    });
    ctx.emitter.emit('window', { pipe: name, windows: decision.windows });
    if (decision.action !== 'skip') ctx.emitter.emit('desired', { pipe: name, values: decision.desired });
    // From the shared state, so every replica's gauge follows the pipe, not only the replica
    // whose worker happened to apply or read it (the "not at desired scaling" alert compares both).
    if (Object.keys(rec.applied).length > 0) ctx.emitter.emit('applied', { pipe: name, values: rec.applied });
    emitOutcome(ctx, name, rec, decision, config.dryRun);

    const readDue = rec.lastReadAt === null || tickAt - rec.lastReadAt >= config.evaluate.reconcileMs;
    if (readDue) await ctx.store.write(name, { readDue: true });
    const held = willApply && heldAfterRefusal(rec, tickAt, config.evaluate.reconcileMs);
    if (willApply && !held) await ctx.enqueueApply(pipe, decision.direction, tickAt);
    else if (readDue) await ctx.enqueueApply(pipe, 'none', tickAt, 'read');
    return held ? 'held' : decision.action;
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
function heldAfterRefusal(rec: PipeRecord, tickAt: number, reconcileMs: number): boolean {
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
export function reasonLabel(d: Pick<Decision, 'action' | 'reasons' | 'windows'>): string {
  if (d.action === 'skip') {
    const skip = d.reasons.find((r) => (SKIP_REASON_CODES as readonly string[]).includes(r.code));
    return skip?.code ?? d.reasons[0]?.code ?? 'skip';
  }
  return d.windows.length > 0 ? 'window' : 'baseline';
}
