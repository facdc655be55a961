// createDaemon(): the parts of a daemon wired together and their shared state (the config in
// force, Redis' readiness, what has started). Each part is a file of its own: the tick (tick.ts),
// the reload (reload.ts), the queues and workers (workers.ts), the shutdown (shutdown.ts).
// Everything outside (clock, Redis, config, emitter, logger) is injectable so tests run it
// in-process and drive ticks with chosen instants.
import { randomUUID } from 'node:crypto';
import type { Queue, Worker, WorkerOptions } from 'bullmq';
import type { ApiClient } from '../../api/index.js';
import { loadEffectiveConfig, type Config } from '../../config/index.js';
import { type DaemonContext } from '../work/context.js';
import { ConfigFiles } from './config-watch.js';
import { effectiveKeys, startEmbedded, type EmbeddedCloud } from './embedded.js';
import { enqueueEvaluation, enqueueTurn } from '../lanes/enqueue.js';
import { DaemonEmitter } from '../model/events.js';
import { KeyChecks } from '../lanes/key-checks.js';
import { LeadWakes } from '../lanes/lead-wakes.js';
import { pipeByName } from '../model/pipe-index.js';
import { ActuationEstimates, countsMeasured } from '../store/actuation-store.js';
import { leadTurnAtFor, leadUntilFor, reconcileMsFor } from '../lanes/lead-plans.js';
import type { Lanes } from '../lanes/lanes.js';
import { announcePlans, createReload, laneSettings } from './reload.js';
import type { RestartSetting } from './reload-check.js';
import { RedisGuard } from '../store/redis-guard.js';
import { RedisOutage } from '../store/redis-outage.js';
import { DemoConflict, resetDemoState } from '../store/demo-state.js';
import { MetricSource } from '../sources/metric-source.js';
import { routeOutcomes } from '../outcomes/sinks.js';
import type { EvaluateJob } from '../lanes/queues.js';
import {
  connectRedis,
  describeRedis,
  prefixProblem,
  watchStatus,
  type RedisClient,
} from '../store/redis-connection.js';
import { Heartbeat } from '../store/heartbeat.js';
import { scheduleTicks, type Scheduler } from './scheduler.js';
import { daemonShutdown, runShutdown, stopGraceMs } from './shutdown.js';
import { StateStore } from '../store/state-store.js';
import { readPipeStatuses, type PipeStatus } from '../views/status.js';
import { createTick } from './tick.js';
import { startWorkers } from './workers.js';
import { silentLogger, type DaemonLogger } from '../model/logger.js';

/** A daemon clock this close to the wall clock is the wall clock (turns queued for later: enqueueRead, enqueueChange). */
const WALL_CLOCK_SLACK_MS = 1_000;

export interface DaemonOptions {
  /** A loaded Config, or the path of a YAML config (then also the file reloads come from). */
  readonly config: Config | string;
  /** The file `reload()` without argument reads, when `config` is an object. */
  readonly configPath?: string;
  /** What the config file is read with: interpolation and the overrides (PIPESCALER_REDIS_URL ...). Default process.env. */
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
   * True when the caller serves telemetry on config.telemetry.listen (`pipescaler run`): a reload
   * that changes it is refused, as it takes a restart.
   */
  readonly servesTelemetry?: boolean;
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
  /** Stop ticking, let in-flight jobs finish within timeoutMs (default stopGraceMs: api.timeout and
   *  a second), then force; close everything. */
  stop(opts?: { timeoutMs?: number }): Promise<void>;
  status(): Promise<DaemonStatus>;
  config(): Config;
  queues(): Queue[];
  workers(): Worker[];
  /** True while Redis answers. */
  ready(): boolean;
}

export function createDaemon(options: DaemonOptions): Daemon {
  const path = typeof options.config === 'string' ? options.config : options.configPath;
  const files = options.configFiles ?? new ConfigFiles();
  // The file with the environment's overrides, noting what it read (config-watch.ts): at start and
  // at every reload the same way, so an override never looks like a change.
  const env = options.env ?? process.env;
  const load = (file: string) => files.load((readFile) => loadEffectiveConfig(file, env, 'all', readFile));
  // a reload's: in a worker thread, so that a large config's parse holds no request (config-thread.ts)
  const loadAside = (file: string) =>
    files.loadOffThread(file, env, (readFile) => loadEffectiveConfig(file, env, 'all', readFile));
  let current: Config = typeof options.config === 'string' ? load(options.config) : options.config;
  const emitter = options.emitter ?? new DaemonEmitter();
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  // BullMQ's delayed set runs on the wall clock: a daemon on a clock of its own (tests, a
  // simulation) leaves a turn for later (a confirmation read, a lead slot's change) to the tick
  // that finds it due.
  const onWallClock = () => Math.abs(now() - Date.now()) <= WALL_CLOCK_SLACK_MS;
  const prefix = options.prefix ?? current.redis.prefix;
  let redisReady = false;
  let stopping = false;
  const isStopping = () => stopping;
  const ownRedis = !options.redis;
  const target = { ...current.redis, url: options.redisUrl ?? current.redis.url };
  const where = ownRedis ? describeRedis(target) : 'given';
  const outage = new RedisOutage(emitter, where, now);
  const onRedisStatus = (ready: boolean, cause?: string) => {
    redisReady = ready;
    if (stopping) return; // our own quit, not an outage
    if (ready) guard.reconnected();
    outage.status(ready);
    emitter.emit('redis:status', { ready, where, ...(cause !== undefined ? { cause } : {}) });
  };
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
    ...(options.servesTelemetry ? [] : (['telemetry.listen'] as const)),
  ]);
  const heartbeat = new Heartbeat(redis, store.keys, replicaId, () => ({
    pipes: current.pipes.length,
    dryRun: current.dryRun,
    ...(embedded ? { embedded: { url: embedded.url, adminToken: embedded.adminToken } } : {}),
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

  const metrics = new MetricSource({ redis, prefix, emitter, now, config: () => current });
  const outcomes = routeOutcomes({
    redis,
    prefix,
    emitter,
    logger,
    now,
    workerOptions: options.workerOptions,
    config: () => current,
  });
  // Measured actuation for the lead plans: read from Redis at most every minute, by whichever
  // evaluation asks first (never awaited there: until read, the configured expectation).
  const actuation = new ActuationEstimates(redis, store.keys);
  /** When this replica last reloaded (an unconfirmed change is sent once more after it). */
  let reloadedAt: number | undefined;
  // A lead slot's change whose queued turn lost its place is asked for again at the slot's start.
  const leadWakes = new LeadWakes(async (name, tickAt) => {
    const pipe = pipeByName(current, name);
    if (pipe && !stopping) await ctx.enqueueChange(pipe, 'up', tickAt);
  });

  const ctx: DaemonContext = {
    config: () => current,
    reloadedAt: () => reloadedAt,
    store,
    emitter,
    logger,
    now,
    metrics,
    parkAfter: options.parkAfter ?? 3,
    stateLost: () => guard.held(),
    stateLoss: () => guard.lastLoss(),
    verdictsGiven: new Map(),
    laneFor: (pipe) => lanes?.get(pipe.key),
    reconcileMsFor: (pipe) => reconcileMsFor(current, pipe),
    measuredActuationMs: (pipe) => (countsMeasured(current) ? actuation.actuationMs(pipe) : undefined),
    leadUntilFor: (pipe, at) => {
      if (!countsMeasured(current)) return leadUntilFor(current, pipe, at);
      void actuation.refreshFor(current, now());
      return leadUntilFor(current, pipe, at, actuation);
    },
    leadTurnAtFor: (pipe, tickAt) =>
      leadTurnAtFor(current, pipe, tickAt, now(), countsMeasured(current) ? actuation : undefined),
    enqueueEvaluate: (pipe, tickAt, suffix) => enqueueEvaluation(evaluateQueue, pipe, tickAt, suffix),
    enqueueRead: async (pipe, tickAt, why, sentAt, at) => {
      const delayMs = at === undefined ? 0 : at - now();
      if (delayMs > 0 && !onWallClock()) return;
      const again = await enqueueTurn(
        lanes?.get(pipe.key),
        logger,
        pipe,
        'none',
        tickAt,
        why ?? 'reconcile',
        sentAt,
        at === undefined ? undefined : { at, delayMs: Math.max(0, delayMs) },
      );
      if (again !== undefined && onWallClock()) leadWakes.at(pipe.name, again, tickAt);
    },
    enqueueChange: async (pipe, direction, tickAt, at) => {
      const delayMs = at === undefined ? 0 : at - now();
      if (delayMs > 0 && !onWallClock()) return;
      const again = await enqueueTurn(
        lanes?.get(pipe.key),
        logger,
        pipe,
        direction,
        tickAt,
        'change',
        undefined,
        at === undefined ? undefined : { at, delayMs: Math.max(0, delayMs) },
      );
      if (again !== undefined && onWallClock()) leadWakes.at(pipe.name, again, tickAt);
    },
  };

  // A quiet key is still heard from every api.checkEvery (key-checks.ts).
  const checks = new KeyChecks({ ctx, lane: (keyName) => lanes?.get(keyName) });

  const tick = createTick({
    redis,
    store,
    guard,
    metrics,
    emitter,
    replicaId,
    config: () => current,
    evaluateQueue: () => evaluateQueue,
    stopping: () => stopping,
    guardStarted: () => guardStarted,
  });

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

  const reload = createReload({
    load: path ? () => loadAside(path) : null,
    fixedSettings,
    store,
    emitter,
    logger,
    config: () => current,
    demoKey: () => embedded?.demoKey ?? null,
    lanes: () => lanes,
    async swap(config, previous) {
      current = config;
      reloadedAt = now();
      if (evaluateWorker) evaluateWorker.concurrency = config.evaluate.concurrency;
      if (scheduler && config.evaluate.cron !== previous.evaluate.cron) {
        await scheduler.stop();
        startSchedule();
      }
      if (running && !stopping) outcomes.startNotifier();
    },
  });

  async function start(): Promise<void> {
    if (running) return;
    running = true;
    if (demo)
      await resetDemoState(redis, prefix, store.keys, logger).catch((err: unknown) => {
        // a second demo on a running one's prefix does not start
        if (err instanceof DemoConflict) throw err;
        logger.warn({ err: (err as Error).message }, "could not check the demo's Redis state at start");
      });
    // a stop while the start waited (for Redis): nothing more is started (a function: the
    // compiler would take `stopping` for what it was before the await)
    if (isStopping()) return;
    // Not awaited here (Redis may still be coming up); every tick waits for it first, so the
    // marker exists before it is first checked.
    guardStarted = guard
      .start()
      // pauses an older version stored by pipe name move to the pipe's identity (operator-state.ts)
      .then(() => migratePauses(store, current, logger))
      .catch((err: unknown) =>
        logger.warn({ err: (err as Error).message }, 'could not check the Redis state at start'),
      );
    heartbeat.start();
    let baseUrl = options.api?.baseUrl ?? current.api.baseUrl;
    if (baseUrl === 'embedded') {
      embedded = await startEmbedded(current);
      if (isStopping()) {
        await embedded.close();
        return;
      }
      baseUrl = embedded.url;
      logger.info({ url: embedded.url, fixtures: current.api.fixtures }, 'embedded cloud started');
      void heartbeat.beat().catch(() => undefined); // names the cloud now, not at the next beat
    }
    ({ lanes, evaluateQueue, evaluateWorker } = startWorkers({
      redis,
      prefix,
      baseUrl,
      ctx,
      keys: options.api?.keys ?? effectiveKeys(current, embedded?.demoKey ?? null),
      settings: laneSettings(current),
      concurrency: current.evaluate.concurrency,
      workerOptions: options.workerOptions,
      onClient: (client, keyName) => {
        checks.watch(client, keyName);
        options.onClient?.(client, keyName);
      },
    }));
    outcomes.startNotifier();
    if (options.schedule ?? true) startSchedule();
    checks.start();
    if (path && (options.watch ?? true)) unwatch = files.watch(() => void reload(), { fallback: path });
    logger.info(
      {
        pipes: current.pipes.length,
        cron: current.evaluate.cron,
        dryRun: current.dryRun,
        redis: where,
      },
      'daemon started',
    );
    announcePlans(current, logger, emitter);
  }

  async function stop({ timeoutMs = stopGraceMs(current) }: { timeoutMs?: number } = {}): Promise<void> {
    if (stopping) return;
    stopping = true;
    outage.stop();
    leadWakes.clear();
    const parts = {
      unwatchConfig: unwatch,
      checks,
      scheduler,
      lanes,
      evaluateQueue,
      evaluateWorker,
      outcomes,
      metrics,
      embedded,
      heartbeat,
      unwatchRedis,
      ownRedis: ownRedis ? redis : null,
      redisReady: () => redisReady,
      logger,
    };
    const { graceful, late } = await runShutdown(daemonShutdown(parts, timeoutMs));
    running = false;
    logger.info({ graceful, ...(late.length > 0 ? { late } : {}) }, 'daemon stopped');
  }

  return {
    emitter,
    store,
    start,
    tick: (at = now()) => tick(at),
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

async function migratePauses(store: StateStore, config: Config, logger: DaemonLogger): Promise<void> {
  const moved = await store.operator.migrateNamedPauses(config.pipes);
  if (moved.length > 0) logger.info({ pipes: moved }, "pauses stored by pipe name now follow the pipe's ids");
}
