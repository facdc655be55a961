// Where the daemon's outcomes go: the shared scaling history, and the notification outbox once a
// sink is configured (started at start, or by the reload that adds the first sink). Neither is
// awaited by the work that emitted the outcome; stop() flushes both, then unbinds them.
import type { WorkerOptions, Queue, Worker } from 'bullmq';
import type { Config } from '../../config/index.js';
import { historyLimits, HistoryStore, recordHistory, type Outcome } from '../../history/index.js';
import { Notifier } from '../../notify/index.js';
import type { DaemonLogger } from '../model/logger.js';
import type { DaemonEmitter } from '../model/events.js';
import { bridgeOutcomes } from './outcome-bridge.js';
import type { RedisClient } from '../store/redis-connection.js';

export interface OutcomesOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly emitter: DaemonEmitter;
  readonly logger: DaemonLogger;
  readonly now: () => number;
  readonly workerOptions: Partial<WorkerOptions> | undefined;
  config(): Config;
}

export interface Outcomes {
  /** Starts the outbox when the config has a sink and it is not running yet. */
  startNotifier(): void;
  flush(): Promise<unknown>;
  /** Stops listening: nothing more is written. */
  unbind(): void;
  queues(): Queue[];
  workers(): Worker[];
}

export function routeOutcomes(o: OutcomesOptions): Outcomes {
  const unbridge = bridgeOutcomes(o.emitter, { now: o.now, config: () => o.config() });
  const history = recordHistory(
    o.emitter,
    new HistoryStore(o.redis, o.prefix),
    () => historyLimits(o.config().history, o.config().pipes.length),
    (err) => o.logger.debug({ err: err.message }, 'history write failed'),
  );
  let notifier: Notifier | null = null;
  let unbound = false;
  const onOutcome = (outcome: Outcome): void => notifier?.publish(outcome);
  o.emitter.on('outcome', onOutcome);
  return {
    startNotifier() {
      if (notifier || unbound || (o.config().notify?.sinks.length ?? 0) === 0) return;
      notifier = new Notifier({
        redis: o.redis,
        prefix: o.prefix,
        settings: () => o.config().notify,
        workerOptions: { ...o.workerOptions },
        onDelivery: (d) => o.emitter.emit('notify:delivery', { sink: d.sink, result: d.result, events: d.events }),
        onError: (err) => o.logger.debug({ err: err.message }, 'queue connection error'),
      });
    },
    flush: () => Promise.all([history.flush(), notifier?.flush()]),
    unbind() {
      unbound = true;
      o.emitter.off('outcome', onOutcome);
      unbridge();
      history.close();
    },
    queues: () => notifier?.queues() ?? [],
    workers: () => notifier?.workers() ?? [],
  };
}
