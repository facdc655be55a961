// What one API key's request budget affords: the platform allows `requests` per `perMs` per key,
// and reading a pipe costs a request like changing it. Reads take at most `readShare` of the
// budget, so the reconcile period of a key's pipes stretches to what that share affords.
import { poolsOf } from './key-pool.js';
import { autoLeadMs, expectedActuationMs, tickIntervalMs } from './lead-plan.js';
import { readShareOf } from './read-share.js';
import { count } from './words.js';
import type { ScalingConfig, PipeConfig } from './types.js';

export { DEFAULT_READ_SHARE, readShareOf } from './read-share.js';

export interface KeyRate {
  readonly requests: number;
  readonly perMs: number;
}

/** The reconcile period of a key's pipes: the configured one, or longer when `pipes` reads at
 *  `share` of the key's rate need longer (pipes / (share x rate)). */
export function reconcilePeriodMs(pipes: number, reconcileMs: number, share: number, rate: KeyRate): number {
  const affordMs = Math.ceil((pipes * rate.perMs) / (share * rate.requests));
  return Math.max(reconcileMs, affordMs);
}

/** Longest a waiting scale-down waits: every other pipe of the key may have one change ahead of
 *  it, and changes get at least (1 - share) of the budget. */
export function scaleDownBoundMs(pipes: number, share: number, rate: KeyRate): number {
  return Math.ceil((pipes * rate.perMs) / ((1 - share) * rate.requests));
}

/** Time for `changes` requests of one key at its full rate: the lead a boundary needs. */
export function changesMs(changes: number, rate: KeyRate): number {
  return Math.ceil((changes * rate.perMs) / rate.requests);
}

export interface KeyPlan {
  readonly key: string;
  /** The pool the key serves (key-pool.ts), and how many keys the pool has. */
  readonly pool?: { readonly name: string; readonly keys: number };
  readonly pipes: number;
  readonly rate: KeyRate;
  readonly readShare: number;
  /** The effective reconcile period of this key's pipes. */
  readonly reconcileMs: number;
  /** True when the budget stretched it beyond evaluate.reconcile. */
  readonly stretched: boolean;
  readonly scaleDownBoundMs: number;
  /** How early leadTime auto starts the scale-ups of a boundary that moves every pipe of the key
   *  (lead-plan.ts: 90 % of the key's rate, the last two ticks before the boundary; with an
   *  expected actuation, each change's confirming read on the same lane, and the actuation). */
  readonly boundaryLeadMs: number;
}

/** Per API key of the config: its pipes (after pool assignment, `keyOf`), period and bounds. */
export function keyPlans(config: ScalingConfig, keyOf: (p: PipeConfig) => string = (p) => p.key): KeyPlan[] {
  const share = readShareOf(config);
  const counts = new Map<string, number>();
  for (const p of config.pipes) counts.set(keyOf(p), (counts.get(keyOf(p)) ?? 0) + 1);
  const pools = poolsOf(config.api.keys);
  return Object.entries(config.api.keys).map(([key, k]) => {
    const pipes = counts.get(key) ?? 0;
    const reconcileMs = reconcilePeriodMs(pipes, config.evaluate.reconcileMs, share, k.rateLimit);
    const pool = k.pool === undefined ? {} : { pool: { name: k.pool, keys: pools.get(k.pool)?.length ?? 1 } };
    return {
      key,
      ...pool,
      pipes,
      rate: k.rateLimit,
      readShare: share,
      reconcileMs,
      stretched: reconcileMs > config.evaluate.reconcileMs,
      scaleDownBoundMs: scaleDownBoundMs(pipes, share, k.rateLimit),
      boundaryLeadMs: autoLeadMs(pipes, k.rateLimit, tickIntervalMs(config.evaluate.cron), expectedActuationMs(config)),
    };
  });
}

/** "key default: 1,200 pipes, reconcile every 80 min within its budget"; a pool's key says so:
 *  "key batch-1 (pool batch, 2 keys): 600 pipes, ..." */
export function describeKeyPlan(p: KeyPlan): string {
  const n = p.pipes.toLocaleString('en-US');
  const every = humanMs(p.reconcileMs);
  const rate = `${p.rate.requests} per ${humanMs(p.rate.perMs)}`;
  const pool = p.pool ? ` (pool ${p.pool.name}, ${count(p.pool.keys, 'key')})` : '';
  if (p.pipes === 0) return `key ${p.key}${pool}: no pipes (${rate})`;
  return (
    `key ${p.key}${pool}: ${n} pipe${p.pipes === 1 ? '' : 's'}, reconcile every ${every}${p.stretched ? ' within its budget' : ''}` +
    ` (${rate}, reads at most ${Math.round(p.readShare * 100)} %); a waiting scale-down is sent within ${humanMs(p.scaleDownBoundMs)},` +
    ` a boundary moving every pipe starts its scale-ups ${humanMs(p.boundaryLeadMs)} ahead (leadTime auto)`
  );
}

export function humanMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 120) return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
  const m = s / 60;
  if (m < 120) return `${Math.round(m * 10) / 10} min`;
  return `${Math.round((m / 60) * 10) / 10} h`;
}
