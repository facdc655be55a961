// createDaemon(): the scheduler, the queues and workers, the Redis state, reload and lifecycle,
// wired together. Everything outside (clock, Redis, config, emitter, logger) is injectable so
// tests run it in-process and drive ticks with chosen instants.
import { randomUUID } from 'node:crypto';
import { MetricsTime, Queue, Worker, type WorkerOptions } from 'bullmq';
import type { ApiClient } from '../api/index.js';
import { loadConfig, type Config } from '../config/index.js';
import {
  DEFAULT_MAX_ENTRIES,
  DEFAULT_RETENTION_MS,
  HistoryStore,
  recordHistory,
  type Outcome,
} from '../history/index.js';
import { Notifier } from '../notify/index.js';
import { describeKeyPlan, readShareOf, type Direction, type PipeConfig, type Policy } from '../policy/index.js';
import { createApplyProcessor } from './apply.js';
import { silentLogger, type DaemonContext, type DaemonLogger } from './context.js';
import { ConfigFiles } from './config-watch.js';
import { effectiveKeys, startEmbedded, type EmbeddedCloud } from './embedded.js';
import { createEvaluateProcessor } from './evaluate.js';
import { DaemonEmitter } from './events.js';
import { bridgeOutcomes } from './outcome-bridge.js';
import { KeyChecks } from './key-checks.js';
import { leadUntilFor, plansOf, reconcileMsFor } from './key-periods.js';
import { Lanes } from './lanes.js';
import { configChanges } from './reload-changes.js';
import { reloadProblems, restartProblems, type RestartSetting } from './reload-check.js';
import { RedisGuard } from './redis-guard.js';
import { resetDemoState } from './demo-state.js';
import { MetricSource } from './metric-source.js';
import {
  applyJobOptions,
  EVALUATE_QUEUE,
  evaluateJobId,
  evaluateJobOptions,
  TICK_MARK_MS,
  tickEvaluationOptions,
  type ApplyJobName,
  type EvaluateJob,
} from './queues.js';
import { connectRedis, describeRedis, prefixProblem, watchStatus, type RedisClient } from './redis-connection.js';
import { Heartbeat } from './heartbeat.js';
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
  /** An existing connection (the caller closes it), or a URL (redis://, rediss://,
   *  redis+sentinel://, redis+cluster://); default config.redis.url, with the config's credentials. */
  readonly redis?: RedisClient;
  readonly redisUrl?: string;
  /** Key prefix of every Redis key (BullMQ's and ours); default config.redis.prefix. */
  readonly prefix?: string;
  readonly now?: () => number;
  readonly emitter?: DaemonEmitter;
  readonly logger?: DaemonLogger;
  /** Start the cron at start(); tests drive tick() themselves. Default true. */
  readonly schedule?: boolean;
  /** Watch the config file and the files it names for changes. Default true when there is a path. */
  readonly watch?: boolean;
  /** The caller's loads of `config` (pipescaler run): what they read is watched from the start. */
  readonly configFiles?: ConfigFiles;
  /** Overrides of the API target (tests point at their own embedded cloud). */
  readonly api?: { readonly baseUrl: string; readonly keys?: Config['api']['keys'] };
  /** Extra Worker options (tests lower stalledInterval and lockDuration). */
  readonly workerOptions?: Partial<WorkerOptions>;
  /** 401/403 in a row after which a pipe is parked. Default 3. */
  readonly parkAfter?: number;
  /** Called with each API client the daemon makes (one per key), e.g. to bind its metrics. */
  readonly onClient?: (client: ApiClient, keyName: string) => void;
  /**
   * True when the caller serves telemetry on config.telemetry.listen (`pipescaler run` without
   * PIPESCALER_TELEMETRY_LISTEN): a reload that changes it is refused, as it takes a restart.
   */
  readonly telemetryFromConfig?: boolean;
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

async function upgradePending(
  queue: Queue,
  id: string,
  ourId: string | undefined,
  ours: string,
  priority: number,
): Promise<void> {
  // Our job was added (no turn was pending): nothing to upgrade. Every evaluation that still
  // wants a waiting change lands here, once per tick per pipe (1,200 a tick at a cold start).
  if (id === ourId) return;
  try {
    const pending = await queue.getJob(id);
    if (!pending || (pending.data as { idempotencyKey?: string }).idempotencyKey === ours) return;
    // Already at our priority or ahead, and never delayed (a retry's backoff sets `delay`): nothing
    // to raise or promote, and no need to ask its state.
    if (pending.priority <= priority && !(pending.delay > 0)) return;
    const state = await pending.getState();
    if (state === 'delayed') await pending.promote();
    if (
      (state === 'delayed' || state === 'prioritized' || state === 'waiting') &&
      (pending.opts.priority ?? 0) > priority
    ) {
      await pending.changePriority({ priority });
    }
  } catch {
    // It became active or finished meanwhile: that turn (or the next) sends the newest desire.
  }
}

/** What each key's lane takes from the config: all of it follows a reload. */
function laneSettings(config: Config) {
  return {
    readShare: readShareOf(config),
    timeoutMs: config.api.timeoutMs,
    maxResponseBytes: config.api.maxResponseBytes,
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

/** stop() ends within its grace period plus this. */
export const STOP_AFTER_GRACE_MS = 1_000;

export function createDaemon(options: DaemonOptions): Daemon {
  const path = typeof options.config === 'string' ? options.config : options.configPath;
  const files = options.configFiles ?? new ConfigFiles();
  const load = (file: string) => files.load((readFile) => loadConfig(file, options.env, 'all', readFile));
  let current: Config = typeof options.config === 'string' ? load(options.config) : options.config;
  const emitter = options.emitter ?? new DaemonEmitter();
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const prefix = options.prefix ?? current.redis.prefix;
  let redisReady = false;
  let stopping = false;
  const onRedisStatus = (ready: boolean, cause?: string) => {
    redisReady = ready;
    if (stopping) return; // our own quit, not an outage
    if (ready) guard.reconnected();
    emitter.emit('redis:status', { ready, ...(cause !== undefined ? { cause } : {}) });
  };
  const ownRedis = !options.redis;
  const target = { ...current.redis, url: options.redisUrl ?? current.redis.url };
  // A cluster needs every key of one script in one slot: refused before anything connects.
  const problem = options.redis ? null : prefixProblem(target, prefix);
  if (problem !== null) throw new Error(`redis.prefix "${prefix}": ${problem}`);
  const redis = options.redis ?? connectRedis(target, onRedisStatus);
  // A connection passed in is the caller's; we only listen to it, and stop listening at stop().
  const unwatchRedis = options.redis ? watchStatus(options.redis, onRedisStatus) : () => {};
  if (options.redis) redisReady = options.redis.status === 'ready';
  const store = new StateStore(redis, prefix, (pipe, fields) => emitter.emit('state:invalid', { pipe, fields }));
  const replicaId = randomUUID();
  // What the file does not decide: a reload's change of it is no change (reload-check.ts).
  const fixedSettings = new Set<RestartSetting>([
    ...(options.redis ? (['redis.url', 'redis.username', 'redis.password', 'redis.sentinelPassword'] as const) : []),
    ...(options.redisUrl !== undefined ? (['redis.url'] as const) : []),
    ...(options.prefix !== undefined ? (['redis.prefix'] as const) : []),
    ...(options.api ? (['api.baseUrl', 'api.fixtures'] as const) : []),
    ...(options.telemetryFromConfig ? [] : (['telemetry.listen'] as const)),
  ]);
  const heartbeat = new Heartbeat(redis, store.keys, replicaId, () => ({
    pipes: current.pipes.length,
    dryRun: current.dryRun,
  }));
  // On the embedded cloud the state in Redis is the demo's: a start wipes a stopped demo's (demo-state.ts).
  const demo = (options.api?.baseUrl ?? current.api.baseUrl) === 'embedded';
  const guard = new RedisGuard(redis, store.keys, emitter, logger, now, demo);
  let guardStarted: Promise<void> = Promise.resolve();

  let running = false;
  let scheduler: Scheduler | null = null;
  let unwatch: (() => void) | null = null;
  let embedded: EmbeddedCloud | null = null;
  let lanes: Lanes | null = null;
  let evaluateQueue: Queue | null = null;
  let evaluateWorker: Worker<EvaluateJob> | null = null;
  const onBullError = (err: Error) => logger.debug({ err: err.message }, 'queue connection error');

  const metrics = new MetricSource({ redis, prefix, emitter, now, config: () => current });
  // Outcomes (outcome-bridge.ts) go to the shared history and, once started, the notification
  // outbox; neither is awaited by the work that emitted them.
  const unbridge = bridgeOutcomes(emitter, { now, config: () => current });
  const history = recordHistory(
    emitter,
    new HistoryStore(redis, prefix),
    () => current.history ?? { retentionMs: DEFAULT_RETENTION_MS, maxEntries: DEFAULT_MAX_ENTRIES },
    (err) => logger.debug({ err: err.message }, 'history write failed'),
  );
  let notifier: Notifier | null = null;
  const startNotifier = (): void => {
    if (notifier || stopping || (current.notify?.sinks.length ?? 0) === 0) return;
    notifier = new Notifier({
      redis,
      prefix,
      settings: () => current.notify,
      workerOptions: { ...options.workerOptions },
      onDelivery: (d) => emitter.emit('notify:delivery', { sink: d.sink, result: d.result, events: d.events }),
      onError: onBullError,
    });
  };
  const onOutcome = (o: Outcome): void => notifier?.publish(o);
  emitter.on('outcome', onOutcome);
  const ctx: DaemonContext = {
    config: () => current,
    store,
    emitter,
    logger,
    now,
    metrics,
    parkAfter: options.parkAfter ?? 3,
    stateLost: () => guard.held(),
    laneFor: (pipe) => lanes?.get(pipe.key),
    reconcileMsFor: (pipe) => reconcileMsFor(current, pipe),
    leadUntilFor: (pipe, at) => leadUntilFor(current, pipe, at),
    async enqueueEvaluate(pipe, tickAt, suffix = '') {
      await evaluateQueue?.add('evaluate', { pipe, tickAt }, evaluateJobOptions(evaluateJobId(pipe, tickAt, suffix)));
    },
    enqueueRead: (pipe, tickAt) => enqueueTurn(pipe, 'none', tickAt, 'read'),
    enqueueChange: (pipe, direction, tickAt) => enqueueTurn(pipe, direction, tickAt, 'apply'),
  };

  async function enqueueTurn(pipe: PipeConfig, direction: Direction, tickAt: number, name: ApplyJobName) {
    const lane = lanes?.get(pipe.key);
    if (!lane) {
      logger.error({ pipe: pipe.name, key: pipe.key }, 'pipe names an API key that is not configured');
      return;
    }
    const data = { pipe: pipe.name, tickAt, idempotencyKey: randomUUID(), direction };
    const opts = applyJobOptions(name, pipe.name, direction);
    const job = await lane.queue.add(name, data, opts);
    // Deduplicated onto the pipe's pending turn: a change must not wait at a read's (or a
    // scale-down's) priority, nor behind a read's delay. The turn does the newest desire anyway.
    if (name === 'apply' && job.id !== undefined)
      await upgradePending(lane.queue, job.id, opts.jobId, data.idempotencyKey, opts.priority ?? 0);
  }

  // A quiet key is still heard from every api.checkEvery (key-checks.ts).
  const checks = new KeyChecks({ ctx, lane: (keyName) => lanes?.get(keyName) });

  async function tick(at = now()): Promise<void> {
    const config = current;
    if (!evaluateQueue || stopping) return;
    // Every replica checks, so each one holds its own evaluations while the state is lost.
    await guardStarted;
    await guard.check(config.pipes.map((p) => p.name));
    if (!(await claimTick(at))) return;
    // A replica that began to stop meanwhile still enqueues the tick it claimed, for the others.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stop() may set it during the awaits above
    if (!stopping) metrics.prefetch(metricPolicies(config), at);
    for (let i = 0; i < config.pipes.length; i += TICK_BATCH) {
      await evaluateQueue.addBulk(
        config.pipes.slice(i, i + TICK_BATCH).map((p) => ({
          name: 'evaluate',
          data: { pipe: p.name, tickAt: at },
          opts: tickEvaluationOptions(p.name, at),
        })),
      );
    }
    emitter.emit('tick', { at, pipes: config.pipes.length });
  }

  /**
   * One replica enqueues each tick: the first to set the tick's marker. The value is this
   * daemon's id, so a SET whose reply was lost in a reconnect (ioredis resends it) still counts as
   * ours. The evaluate jobs' deterministic ids remain a second guard while they are kept.
   */
  async function claimTick(at: number): Promise<boolean> {
    const key = store.keys.tick(Math.floor(at / 1000));
    if (await redis.set(key, replicaId, 'PX', TICK_MARK_MS, 'NX')) return true;
    return (await redis.get(key)) === replicaId;
  }

  function startSchedule(): void {
    scheduler = scheduleTicks(
      current.evaluate.cron,
      async (at) => {
        try {
          await tick(at);
        } catch (err) {
          logger.warn(
            { err: (err as Error).message, at },
            'tick could not enqueue its evaluations; the next tick will',
          );
        }
      },
      logger,
    );
  }

  async function reload(next?: Config): Promise<boolean> {
    let config: Config;
    try {
      if (next) config = next;
      else if (path) config = load(path);
      else throw new Error('no config file to reload from');
    } catch (err) {
      const errors = err instanceof Error ? err.message.split('\n') : [String(err)];
      emitter.emit('config:reload', { result: 'failure', errors });
      return false;
    }
    const previous = current;
    // Everything the swap needs is checked first: a refused reload changes nothing. What takes a
    // restart (the Redis connection, the API's base URL, the telemetry server) is refused too.
    const keys = effectiveKeys(config, embedded?.demoKey ?? null);
    const problems = [...restartProblems(config, previous, fixedSettings), ...reloadProblems(config, keys, previous)];
    if (problems.length === 0) {
      try {
        lanes?.sync(keys, laneSettings(config));
      } catch (err) {
        problems.push(`api: ${(err as Error).message}`);
      }
    }
    if (problems.length > 0) {
      emitter.emit('config:reload', { result: 'failure', errors: problems });
      return false;
    }
    current = config;
    const changes = configChanges(previous, config);
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
    announcePlans(config);
    if (running) startNotifier();
    emitter.emit('config:reload', { result: 'success', changes });
    return true;
  }

  /** Each key's reconcile period and bounds under this config: logged and exported as metrics. */
  function announcePlans(config: Config): void {
    for (const p of plansOf(config).values()) {
      const text = describeKeyPlan(p);
      logger.info(
        {
          key: p.key,
          ...(p.pool ? { pool: p.pool.name } : {}),
          pipes: p.pipes,
          reconcileSeconds: p.reconcileMs / 1000,
          scaleDownBoundSeconds: p.scaleDownBoundMs / 1000,
        },
        text,
      );
      emitter.emit('budget:plan', {
        key: p.key,
        pipes: p.pipes,
        reconcileMs: p.reconcileMs,
        stretched: p.stretched,
        scaleDownBoundMs: p.scaleDownBoundMs,
        text,
      });
    }
  }

  async function start(): Promise<void> {
    if (running) return;
    running = true;
    if (demo)
      await resetDemoState(redis, prefix, store.keys, logger).catch((err: unknown) =>
        logger.warn({ err: (err as Error).message }, "could not check the demo's Redis state at start"),
      );
    // Not awaited here (Redis may still be coming up); every tick waits for it first, so the
    // marker exists before it is first checked.
    guardStarted = guard
      .start()
      .catch((err: unknown) =>
        logger.warn({ err: (err as Error).message }, 'could not check the Redis state at start'),
      );
    heartbeat.start();
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
      connection: redis,
      prefix,
      metrics: { maxDataPoints: MetricsTime.ONE_HOUR * 24 },
      lockDuration: 10_000,
      stalledInterval: 5_000,
      ...options.workerOptions,
    };
    lanes = new Lanes({
      redis,
      prefix,
      baseUrl,
      processor: createApplyProcessor(ctx),
      workerOptions,
      onWorkerError: onBullError,
      onClient: (client, keyName) => {
        checks.watch(client, keyName);
        options.onClient?.(client, keyName);
      },
    });
    lanes.sync(options.api?.keys ?? effectiveKeys(current, embedded?.demoKey ?? null), laneSettings(current));
    evaluateQueue = new Queue(EVALUATE_QUEUE, { connection: redis, prefix });
    evaluateQueue.on('error', onBullError);
    evaluateWorker = new Worker<EvaluateJob>(EVALUATE_QUEUE, createEvaluateProcessor(ctx), {
      ...workerOptions,
      concurrency: current.evaluate.concurrency,
    });
    evaluateWorker.on('error', onBullError);
    evaluateWorker.on('failed', (job, err) =>
      logger.warn({ pipe: job?.data.pipe, err: err.message }, 'evaluation failed'),
    );
    startNotifier();
    if (options.schedule ?? true) startSchedule();
    checks.start();
    if (path && (options.watch ?? true)) unwatch = files.watch(() => void reload(), { fallback: path });
    logger.info(
      {
        pipes: current.pipes.length,
        cron: current.evaluate.cron,
        dryRun: current.dryRun,
        redis: ownRedis ? describeRedis(target) : 'given',
      },
      'daemon started',
    );
    announcePlans(current);
  }

  async function stop({ timeoutMs = 10_000 } = {}): Promise<void> {
    if (stopping) return;
    stopping = true;
    unwatch?.();
    checks.stop();
    await scheduler?.stop();
    const workers = [
      ...(lanes?.workers() ?? []),
      ...(evaluateWorker ? [evaluateWorker] : []),
      ...(notifier?.workers() ?? []),
    ];
    // worker.close() waits for active jobs with no limit of its own. Without Redis no job can
    // finish anyway (nor would close() return), so there is no point waiting the full grace.
    const graceMs = redisReady ? timeoutMs : Math.min(timeoutMs, 1_000);
    // Everything after the grace fits in one more second, so a pod with a 30 s grace period is
    // never SIGKILLed (a 25 s request used to hold stop through pool.close() for 24 s).
    const deadline = Date.now() + graceMs + STOP_AFTER_GRACE_MS;
    const left = (ms: number) => Math.max(0, Math.min(ms, deadline - Date.now()));
    const closing = Promise.all(workers.map((w) => w.close()));
    const graceful = await settleWithin(closing, graceMs);
    if (!graceful) {
      logger.warn(
        { timeoutMs: graceMs, redisReady },
        'in-flight jobs did not finish in time; ending their requests and closing workers by force',
      );
      // Each lane's Pool is its own: destroying it fails the requests in flight at once, and their
      // jobs go back to the queue (a retry) for the next replica or start to finish.
      await settleWithin(lanes?.closeClients({ force: true }) ?? Promise.resolve(), left(200));
      if (!(await settleWithin(closing, left(400))))
        await settleWithin(Promise.all(workers.map((w) => w.close(true))), left(200));
    }
    // what the work emitted is in Redis before the connection goes
    await settleWithin(Promise.all([history.flush(), notifier?.flush()]), graceful ? 2_000 : left(200));
    emitter.off('outcome', onOutcome);
    unbridge();
    history.close();
    const queues = [
      ...(lanes?.queues() ?? []),
      ...(evaluateQueue ? [evaluateQueue] : []),
      ...(notifier?.queues() ?? []),
    ];
    await settleWithin(Promise.all(queues.map((q) => q.close())), graceful ? 2_000 : left(200));
    await settleWithin(lanes?.closeClients() ?? Promise.resolve(), graceful ? 2_000 : left(100));
    await settleWithin(metrics.close(), graceful ? 2_000 : left(100));
    await settleWithin(embedded?.close() ?? Promise.resolve(), graceful ? 5_000 : left(100));
    await settleWithin(
      heartbeat.stop().catch(() => undefined),
      graceful ? 1_000 : left(100),
    );
    unwatchRedis();
    if (ownRedis) {
      if (!(await settleWithin(redis.quit(), graceful ? 1_000 : left(100)))) redis.disconnect();
    }
    running = false;
    logger.info({ graceful }, 'daemon stopped');
  }

  return {
    emitter,
    store,
    start,
    tick,
    reload,
    stop,
    async status() {
      return {
        running,
        ready: redisReady,
        dryRun: current.dryRun,
        pipes: await readPipeStatuses(store, current, now()),
      };
    },
    config: () => current,
    // the scaling work only: the notification outbox holds batches due up to a coalescing period
    // later, and is no part of whether the daemon's work is done
    queues: () => [...(evaluateQueue ? [evaluateQueue] : []), ...(lanes?.queues() ?? [])],
    workers: () => [...(evaluateWorker ? [evaluateWorker] : []), ...(lanes?.workers() ?? [])],
    ready: () => redisReady,
  };
}
