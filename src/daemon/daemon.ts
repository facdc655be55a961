// createDaemon(): the scheduler, the queues and workers, the Redis state, reload and lifecycle,
// wired together. Everything outside (clock, Redis, config, emitter, logger) is injectable so
// tests run it in-process and drive ticks with chosen instants.
import { randomUUID } from 'node:crypto';
import { MetricsTime, Queue, Worker, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ApiClient } from '../api/client.js';
import { loadConfig } from '../policy/load-config.js';
import type { Config, Direction, PipeConfig } from '../policy/types.js';
import { createApplyProcessor } from './apply.js';
import { silentLogger, type DaemonContext, type DaemonLogger } from './context.js';
import { watchConfig } from './config-watch.js';
import { effectiveKeys, startEmbedded, type EmbeddedCloud } from './embedded.js';
import { createEvaluateProcessor } from './evaluate.js';
import { DaemonEmitter } from './events.js';
import { Lanes } from './lanes.js';
import { applyJobOptions, EVALUATE_QUEUE, evaluateJobId, evaluateJobOptions, type ApplyJobName } from './queues.js';
import { connectRedis, watchStatus } from './redis-connection.js';
import { scheduleTicks, type Scheduler } from './scheduler.js';
import { StateStore } from './state-store.js';
import { readPipeStatuses, type PipeStatus } from './status.js';
import { settleWithin } from './settle.js';

export interface DaemonOptions {
  /** A loaded Config, or the path of a YAML config (then also the file reloads come from). */
  readonly config: Config | string;
  /** The file `reload()` without argument reads, when `config` is an object. */
  readonly configPath?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** An existing connection (the caller closes it), or a URL; default config.redis.url. */
  readonly redis?: Redis;
  readonly redisUrl?: string;
  /** Key prefix of every Redis key (BullMQ's and ours); default config.redis.prefix. */
  readonly prefix?: string;
  readonly now?: () => number;
  readonly emitter?: DaemonEmitter;
  readonly logger?: DaemonLogger;
  /** Start the cron at start(); tests drive tick() themselves. Default true. */
  readonly schedule?: boolean;
  /** Watch the config file for changes. Default true when there is a path. */
  readonly watch?: boolean;
  /** Overrides of the API target (tests point at their own embedded cloud). */
  readonly api?: { readonly baseUrl: string; readonly keys?: Config['api']['keys'] };
  /** Extra Worker options (tests lower stalledInterval and lockDuration). */
  readonly workerOptions?: Partial<WorkerOptions>;
  /** 401/403 in a row after which a pipe is parked. Default 3. */
  readonly parkAfter?: number;
  /** Called with each API client the daemon makes (one per key), e.g. to bind its metrics. */
  readonly onClient?: (client: ApiClient, keyName: string) => void;
}

export interface DaemonStatus {
  readonly running: boolean;
  readonly ready: boolean;
  readonly dryRun: boolean;
  readonly pipes: readonly PipeStatus[];
}

export interface Daemon {
  readonly emitter: DaemonEmitter;
  readonly store: StateStore;
  start(): Promise<void>;
  /** Enqueue one evaluation per pipe for the tick at `at` (epoch ms; default now()). */
  tick(at?: number): Promise<void>;
  /** Swap in a new config (or re-read the file); a broken one is refused and the old one stays. */
  reload(config?: Config): Promise<boolean>;
  /** Stop ticking, let in-flight jobs finish within timeoutMs, then force; close everything. */
  stop(opts?: { timeoutMs?: number }): Promise<void>;
  status(): Promise<DaemonStatus>;
  config(): Config;
  queues(): Queue[];
  workers(): Worker[];
  /** True while Redis answers. */
  ready(): boolean;
}

/**
 * Evaluations are enqueued in batches of this many: one addBulk is one MULTI, which holds Redis
 * and keeps every job of it in this process's heap until it returns. At 10,000 pipes a single
 * batch raised the steady tick's peak RSS by ~100 MB (bench/steady-tick.ts).
 */
export const TICK_BATCH = 500;

export function createDaemon(options: DaemonOptions): Daemon {
  const path = typeof options.config === 'string' ? options.config : options.configPath;
  let current: Config = typeof options.config === 'string' ? loadConfig(options.config, options.env) : options.config;
  const emitter = options.emitter ?? new DaemonEmitter();
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const prefix = options.prefix ?? current.redis.prefix;
  let redisReady = false;
  let stopping = false;
  const onRedisStatus = (ready: boolean) => {
    redisReady = ready;
    if (stopping) return; // our own quit, not an outage
    emitter.emit('redis:status', { ready });
  };
  const ownRedis = !options.redis;
  const redis = options.redis ?? connectRedis(options.redisUrl ?? current.redis.url, onRedisStatus);
  // A connection passed in is the caller's; we only listen to it, and stop listening at stop().
  const unwatchRedis = options.redis ? watchStatus(options.redis, onRedisStatus) : () => {};
  if (options.redis) redisReady = options.redis.status === 'ready';
  const store = new StateStore(redis, prefix);

  let running = false;
  let scheduler: Scheduler | null = null;
  let unwatch: (() => void) | null = null;
  let embedded: EmbeddedCloud | null = null;
  let lanes: Lanes | null = null;
  let evaluateQueue: Queue | null = null;
  let evaluateWorker: Worker | null = null;
  const onBullError = (err: Error) => logger.debug({ err: err.message }, 'queue connection error');

  const ctx: DaemonContext = {
    config: () => current,
    store, emitter, logger, now,
    parkAfter: options.parkAfter ?? 3,
    laneFor: (pipe) => lanes?.get(pipe.key),
    async enqueueEvaluate(pipe, tickAt, suffix = '') {
      await evaluateQueue?.add('evaluate', { pipe, tickAt }, evaluateJobOptions(evaluateJobId(pipe, tickAt, suffix)));
    },
    async enqueueApply(pipe: PipeConfig, direction: Direction, tickAt: number, name: ApplyJobName = 'apply') {
      const lane = lanes?.get(pipe.key);
      if (!lane) {
        logger.error({ pipe: pipe.name, key: pipe.key }, 'pipe names an API key that is not configured');
        return;
      }
      const data = { pipe: pipe.name, tickAt, idempotencyKey: randomUUID(), direction };
      await lane.queue.add(name, data, applyJobOptions(name, pipe.name, direction));
    },
  };

  async function tick(at = now()): Promise<void> {
    const config = current;
    if (!evaluateQueue || stopping) return;
    for (let i = 0; i < config.pipes.length; i += TICK_BATCH) {
      await evaluateQueue.addBulk(config.pipes.slice(i, i + TICK_BATCH).map((p) => ({
        name: 'evaluate', data: { pipe: p.name, tickAt: at }, opts: evaluateJobOptions(evaluateJobId(p.name, at)),
      })));
    }
    emitter.emit('tick', { at, pipes: config.pipes.length });
  }

  function startSchedule(): void {
    scheduler = scheduleTicks(current.evaluate.cron, async (at) => {
      try {
        await tick(at);
      } catch (err) {
        logger.warn({ err: (err as Error).message, at }, 'tick could not enqueue its evaluations; the next tick will');
      }
    }, logger);
  }

  async function reload(next?: Config): Promise<boolean> {
    let config: Config;
    try {
      if (next) config = next;
      else if (path) config = loadConfig(path, options.env);
      else throw new Error('no config file to reload from');
    } catch (err) {
      const errors = err instanceof Error ? err.message.split('\n') : [String(err)];
      emitter.emit('config:reload', { result: 'failure', errors });
      return false;
    }
    const previous = current;
    current = config;
    if (config.redis.url !== previous.redis.url || config.redis.prefix !== previous.redis.prefix
      || config.api.baseUrl !== previous.api.baseUrl || config.api.fixtures !== previous.api.fixtures) {
      logger.warn({}, 'changes to redis.url, redis.prefix, api.baseUrl and api.fixtures take effect at the next restart');
    }
    lanes?.sync(effectiveKeys(config, embedded?.demoKey ?? null));
    if (evaluateWorker) evaluateWorker.concurrency = config.evaluate.concurrency;
    if (scheduler && config.evaluate.cron !== previous.evaluate.cron) {
      await scheduler.stop();
      startSchedule();
    }
    try {
      await store.unpark(config.pipes.map((p) => p.name));
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'could not clear parked pipes');
    }
    emitter.emit('config:reload', { result: 'success' });
    return true;
  }

  async function start(): Promise<void> {
    if (running) return;
    running = true;
    let baseUrl = options.api?.baseUrl ?? current.api.baseUrl;
    if (baseUrl === 'embedded') {
      embedded = await startEmbedded(current);
      baseUrl = embedded.url;
      logger.info({ url: embedded.url, fixtures: current.api.fixtures }, 'embedded cloud started');
    }
    // metrics: BullMQ's completed/failed totals (queue.exportPrometheusMetrics) need them on.
    // A job whose replica died is handed to another after its lock lapses and a stalled check runs:
    // BullMQ's 30 s + 30 s froze such a pipe for up to a minute (the chaos suite saw 45-60 s). Jobs
    // here are one API request; the lock is renewed every lockDuration / 2 while one runs.
    const workerOptions = {
      connection: redis, prefix, metrics: { maxDataPoints: MetricsTime.ONE_HOUR * 24 },
      lockDuration: 10_000, stalledInterval: 5_000, ...options.workerOptions,
    };
    lanes = new Lanes({
      redis, prefix, baseUrl, timeoutMs: current.api.timeoutMs, processor: createApplyProcessor(ctx),
      workerOptions, onWorkerError: onBullError, onClient: options.onClient,
    });
    lanes.sync(options.api?.keys ?? effectiveKeys(current, embedded?.demoKey ?? null));
    evaluateQueue = new Queue(EVALUATE_QUEUE, { connection: redis, prefix });
    evaluateQueue.on('error', onBullError);
    evaluateWorker = new Worker(EVALUATE_QUEUE, createEvaluateProcessor(ctx), {
      ...workerOptions, concurrency: current.evaluate.concurrency,
    });
    evaluateWorker.on('error', onBullError);
    evaluateWorker.on('failed', (job, err) => logger.warn({ pipe: job?.data.pipe, err: err.message }, 'evaluation failed'));
    if (options.schedule ?? true) startSchedule();
    if (path && (options.watch ?? true)) unwatch = watchConfig(path, () => void reload());
    logger.info({ pipes: current.pipes.length, cron: current.evaluate.cron, dryRun: current.dryRun }, 'daemon started');
  }

  async function stop({ timeoutMs = 10_000 } = {}): Promise<void> {
    if (stopping) return;
    stopping = true;
    unwatch?.();
    await scheduler?.stop();
    const workers = [...(lanes?.workers() ?? []), ...(evaluateWorker ? [evaluateWorker] : [])];
    // worker.close() waits for active jobs with no limit of its own. Without Redis no job can
    // finish anyway (nor would close() return), so there is no point waiting the full grace.
    const graceMs = redisReady ? timeoutMs : Math.min(timeoutMs, 1_000);
    const graceful = await settleWithin(Promise.all(workers.map((w) => w.close())), graceMs);
    if (!graceful) {
      logger.warn({ timeoutMs: graceMs, redisReady }, 'in-flight jobs did not finish in time; closing workers by force');
      await settleWithin(Promise.all(workers.map((w) => w.close(true))), 2_000);
    }
    const queues = [...(lanes?.queues() ?? []), ...(evaluateQueue ? [evaluateQueue] : [])];
    await settleWithin(Promise.all(queues.map((q) => q.close())), 2_000);
    await lanes?.closeClients();
    await embedded?.close();
    unwatchRedis();
    if (ownRedis) {
      if (!(await settleWithin(redis.quit(), 1_000))) redis.disconnect();
    }
    running = false;
    logger.info({ graceful }, 'daemon stopped');
  }

  return {
    emitter, store, start, tick, reload, stop,
    async status() {
      return { running, ready: redisReady, dryRun: current.dryRun, pipes: await readPipeStatuses(store, current) };
    },
    config: () => current,
    queues: () => [...(evaluateQueue ? [evaluateQueue] : []), ...(lanes?.queues() ?? [])],
    workers: () => [...(evaluateWorker ? [evaluateWorker] : []), ...(lanes?.workers() ?? [])],
    ready: () => redisReady,
  };
}
