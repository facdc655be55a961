// The effective reconcile period of each key's pipes under the current config (key-budget.ts),
// computed once per loaded config, and the keys' lead plans (lead-plan.ts), once per config and hour
// and each time the measured actuation changes (actuation-store.ts).
import {
  keyPlans,
  leadPlanAt,
  leadPlanSpan,
  leadUntil,
  slotStartIn,
  tickIntervalMs,
  type KeyPlan,
  type LeadPlan,
  type PipeConfig,
} from '../../policy/index.js';
import type { Config } from '../../config/index.js';
import { STALE_AFTER_MS } from './queues.js';

const cache = new WeakMap<Config, ReadonlyMap<string, KeyPlan>>();

export function plansOf(config: Config): ReadonlyMap<string, KeyPlan> {
  let plans = cache.get(config);
  if (!plans) {
    plans = new Map(keyPlans(config).map((p) => [p.key, p]));
    cache.set(config, plans);
  }
  return plans;
}

export function reconcileMsFor(config: Config, pipe: PipeConfig): number {
  return plansOf(config).get(pipe.key)?.reconcileMs ?? config.evaluate.reconcileMs;
}

/** The measured actuation the daemon feeds its lead plans (actuation-store.ts ActuationEstimates):
 *  `version` changes when an estimate does, so the plan is made again. */
export interface MeasuredActuation {
  readonly version: number;
  actuationMs(pipe: PipeConfig): number | undefined;
}

const leads = new WeakMap<Config, { plan: LeadPlan; version: number | undefined }>();

/** The keys' lead plan the daemon follows at `at`: made once per config, hour and measured
 *  estimates (without `measured`: the configured expectation). */
export function leadPlanFor(config: Config, at: number, measured?: MeasuredActuation): LeadPlan {
  const span = leadPlanSpan(at);
  const cached = leads.get(config);
  if (cached?.plan.from === span.from && cached.version === measured?.version) return cached.plan;
  const plan = leadPlanAt(config, at, measured ? { actuationMs: (p) => measured.actuationMs(p) } : {});
  leads.set(config, { plan, version: measured?.version });
  return plan;
}

/** PipeView.leadUntil of the pipe at `at` under leadTime auto (undefined: no slot has started). */
export function leadUntilFor(
  config: Config,
  pipe: PipeConfig,
  at: number,
  measured?: MeasuredActuation,
): number | undefined {
  return leadUntil(leadPlanFor(config, at, measured), pipe.name, at);
}

/**
 * The instant the pipe's next slot starts, when an evaluation of the tick `tickAt` run at `now`
 * should queue its turn for it: after the tick (a slot started by then was decided at the tick)
 * and within leadTurnHorizonMs of now. Undefined: none.
 */
export function leadTurnAtFor(
  config: Config,
  pipe: PipeConfig,
  tickAt: number,
  now: number,
  measured?: MeasuredActuation,
): number | undefined {
  const tickMs = tickIntervalMs(config.evaluate.cron);
  const by = now + leadTurnHorizonMs(tickMs, now - tickAt);
  return slotStartIn(leadPlanFor(config, tickAt, measured), pipe.name, tickAt, by);
}

/**
 * How far ahead of now an evaluation queues a pipe's turn for its slot's start: beyond the pipe's
 * next evaluation, which comes a tick after this one's plus the time the evaluations wait behind
 * each other (`lagMs`, from this one's tick to now), counted twice; two ticks at least, and no
 * further than work is kept (STALE_AFTER_MS). A turn queued for later holds the pipe's place in
 * its key's queue until then, but gives way to any other turn of the pipe but a reconcile read
 * (enqueue.ts), and is asked for again at its instant when it gave way or found the place taken
 * (lead-wakes.ts).
 */
export function leadTurnHorizonMs(tickMs: number, lagMs: number): number {
  return Math.min(STALE_AFTER_MS, Math.max(2 * tickMs, tickMs + 2 * Math.max(0, lagMs)));
}

/**
 * How long after a pipe's last read (or change) its next read is due, so that every pipe of its key
 * is read within the key's reconcile period: early enough that the key's read share reads all its
 * pipes in time even when they all came due at once (a cold start, a boundary), and two ticks to
 * spare (a read is found due at a tick and sent in a turn). 0 for a key whose period the share
 * stretched: its reads go round continuously at the share's pace, in the order of their last
 * reads, each pipe once per period.
 */
export function readDueAfterMs(config: Config, pipe: PipeConfig): number {
  const plan = plansOf(config).get(pipe.key);
  if (!plan) return config.evaluate.reconcileMs;
  const readAllMs = plan.pipes * readSpacingMs(plan);
  return Math.max(0, plan.reconcileMs - readAllMs - 2 * tickIntervalMs(config.evaluate.cron));
}

/** The read share's pace on the key: one read every this many ms. */
function readSpacingMs(plan: KeyPlan): number {
  return plan.rate.perMs / (plan.readShare * plan.rate.requests);
}
