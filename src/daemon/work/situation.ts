// The situation of a pipe at a turn (next-step.ts Situation), gathered from the config in force,
// the Redis snapshot and, for a metric policy whose pipe decides, the metric's value at the tick.
import type { PipeConfig, Policy } from '../../policy/index.js';
import type { DaemonContext } from './context.js';
import { readDueAfterMs } from '../lanes/lead-plans.js';
import { decides, stageOf } from '../lifecycle/next-step.js';
import type { Snapshot } from '../model/record.js';
import { type Situation } from '../lifecycle/steps.js';

/**
 * @param at the instant the turn decides at
 * @param metricTick the tick whose metric value counts (the evaluation's own; a turn on the apply
 *   queue takes its decision's tick, whose query result every replica shares for 5 minutes)
 */
export async function situationOf(
  ctx: DaemonContext,
  pipe: PipeConfig,
  policy: Policy,
  snap: Snapshot,
  at: number,
  metricTick: number,
  asker: Situation['asker'],
): Promise<Situation> {
  const config = ctx.config();
  const until = ctx.leadUntilFor(pipe, at);
  const measured = ctx.measuredActuationMs?.(pipe);
  const reloadedAt = ctx.reloadedAt?.();
  const sit: Situation = {
    pipe,
    policy,
    dryRun: config.dryRun,
    // A pause declared in the config holds whatever Redis holds (or lost).
    pause: pipe.paused ? { reason: pipe.paused, scope: 'config' } : snap.pause,
    service: snap.service,
    override: snap.override,
    serviceTrustMs: config.evaluate.reconcileMs,
    reconcileMs: ctx.reconcileMsFor(pipe),
    readDueAfterMs: readDueAfterMs(config, pipe),
    ...(until !== undefined ? { leadUntil: until } : {}),
    stateLost: ctx.stateLost(),
    asker,
    ...(config.evaluate.actuation ? { actuation: config.evaluate.actuation } : {}),
    ...(measured !== undefined ? { measuredActuationMs: measured } : {}),
    ...(reloadedAt !== undefined ? { reloadedAt } : {}),
  };
  // The metric's value is fetched here so decide() stays pure, and only for a pipe that decides.
  if (!policy.metric || !decides(stageOf(snap.rec, sit, at))) return sit;
  return { ...sit, metric: await ctx.metrics.reading(policy, pipe, metricTick) };
}
