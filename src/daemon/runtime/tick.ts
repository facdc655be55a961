// One tick: check that Redis still holds our state, claim the tick (one replica per tick,
// fleet-wide), start the metric queries and enqueue one evaluation per pipe. The cron calls it;
// tests call it with chosen instants.
import type { Queue } from 'bullmq';
import type { Config } from '../../config/index.js';
import type { Policy } from '../../policy/index.js';
import type { DaemonEmitter } from '../model/events.js';
import type { MetricSource } from '../sources/metric-source.js';
import { TICK_MARK_MS, tickEvaluationOptions } from '../lanes/queues.js';
import type { RedisClient } from '../store/redis-connection.js';
import type { RedisGuard } from '../store/redis-guard.js';
import type { StateStore } from '../store/state-store.js';

/**
 * Evaluations are enqueued in batches of this many: one addBulk is one MULTI, which holds Redis
 * and keeps every job of it in this process's heap until it returns. At 10,000 pipes a single
 * batch raised the steady tick's peak RSS by ~100 MB (bench/steady-tick.ts).
 */
export const TICK_BATCH = 500;

export interface TickOptions {
  readonly redis: RedisClient;
  readonly store: StateStore;
  readonly guard: RedisGuard;
  readonly metrics: MetricSource;
  readonly emitter: DaemonEmitter;
  /** This daemon's id: the value of the ticks it claims. */
  readonly replicaId: string;
  config(): Config;
  /** The evaluate queue, once the daemon started (no tick before). */
  evaluateQueue(): Queue | null;
  stopping(): boolean;
  /** The guard's start (the marker written): every tick waits for it first. */
  guardStarted(): Promise<void>;
}

/** The tick function of one daemon: enqueue one evaluation per pipe for the tick at `at`. */
export function createTick(o: TickOptions): (at: number) => Promise<void> {
  /**
   * One replica enqueues each tick: the first to set the tick's marker. The value is this
   * daemon's id, so a SET whose reply was lost in a reconnect (ioredis resends it) still counts as
   * ours. The evaluate jobs' deterministic ids remain a second guard while they are kept.
   */
  async function claimTick(at: number): Promise<boolean> {
    const key = o.store.keys.tick(Math.floor(at / 1000));
    if (await o.redis.set(key, o.replicaId, 'PX', TICK_MARK_MS, 'NX')) return true;
    return (await o.redis.get(key)) === o.replicaId;
  }

  return async function tick(at: number): Promise<void> {
    const config = o.config();
    const queue = o.evaluateQueue();
    if (!queue || o.stopping()) return;
    // Every replica checks, so each one holds its own evaluations while the state is lost.
    await o.guardStarted();
    await o.guard.check(
      config.pipes.map((p) => p.name),
      at,
    );
    if (!(await claimTick(at))) return;
    // A replica that began to stop meanwhile still enqueues the tick it claimed, for the others.
    if (!o.stopping()) o.metrics.prefetch(metricPolicies(config), at);
    for (let i = 0; i < config.pipes.length; i += TICK_BATCH) {
      await queue.addBulk(
        config.pipes.slice(i, i + TICK_BATCH).map((p) => ({
          name: 'evaluate',
          data: { pipe: p.name, tickAt: at },
          opts: tickEvaluationOptions(p.name, at),
        })),
      );
    }
    o.emitter.emit('tick', { at, pipes: config.pipes.length });
  };
}

/** The metric policies some pipe follows: their queries start with the tick (metric-source.ts). */
function metricPolicies(config: Config): Policy[] {
  const names = new Set(config.pipes.map((p) => p.policy));
  return [...names].flatMap((n) => {
    const policy = config.policies[n];
    return policy?.metric ? [policy] : [];
  });
}
