// stop(): an ordered list of named steps. Intake stops first (config watch, key checks, cron);
// in-flight turns get the grace period to finish (the graceful path; by default api.timeout and a
// second, stopGraceMs, so every request in flight is answered or times out); past it the forceful
// path cuts them (a cut change is recorded unsettled, a cut read goes back to the queue as a retry,
// for another replica or the next start), and every later step fits in STOP_AFTER_GRACE_MS, so a
// service manager that waits the grace and a few seconds more never SIGKILLs. Each close step has
// its own limit; one that overruns is named in the stop line.
import type { Queue, Worker } from 'bullmq';
import type { DaemonLogger } from '../model/logger.js';
import type { EmbeddedCloud } from './embedded.js';
import type { Heartbeat } from '../store/heartbeat.js';
import type { KeyChecks } from '../lanes/key-checks.js';
import type { Lanes } from '../lanes/lanes.js';
import type { MetricSource } from '../sources/metric-source.js';
import type { Outcomes } from '../outcomes/sinks.js';
import type { RedisClient } from '../store/redis-connection.js';
import type { Scheduler } from './scheduler.js';
import { finishedWithin } from './within.js';

/** stop() ends within its grace period plus this. */
export const STOP_AFTER_GRACE_MS = 1_000;

/** After a request's own limit, time for a turn to write what its answer said to Redis. */
export const ANSWER_WRITE_MS = 1_000;

/**
 * The stop's default grace: a request in flight ends within `api.timeout` (answered, or timed out
 * and recorded unsettled, its outcome read at the next start), so in-flight turns get that long and
 * a second more to write their answer; only a turn that starts a second request within the grace
 * (a services list, then its change) is cut, and the cut change is recorded unsettled too. The
 * service manager's stop timeout must leave room for it and STOP_AFTER_GRACE_MS (docs/deploy.md:
 * systemd TimeoutStopSec, Kubernetes terminationGracePeriodSeconds, compose stop_grace_period).
 */
export function stopGraceMs(config: { readonly api: { readonly timeoutMs: number } }): number {
  return config.api.timeoutMs + ANSWER_WRITE_MS;
}

/** After stop(), `pipescaler run` closes its telemetry server and exits (at most 2 s for a stray
 *  handle), with a second to spare. */
export const EXIT_AFTER_STOP_MS = 3_000;

/** The longest a stop takes from the signal to the exit, given its grace. */
export function stopWithinMs(graceMs: number): number {
  return graceMs + STOP_AFTER_GRACE_MS + EXIT_AFTER_STOP_MS;
}

/**
 * THE stop timeout: a stop (SIGTERM) ends with the process' exit within it, api.timeout + 5 s (35 s
 * at the default 30 s), and every service manager waits this long before it SIGKILLs: systemd's
 * TimeoutStopSec, Kubernetes' terminationGracePeriodSeconds, compose's stop_grace_period; the README,
 * docs/deploy.md and the `stopping` log line state it (test/deploy/stop-timeout.test.ts holds them
 * to it). Raise those with api.timeout.
 */
export function stopTimeoutMs(config: { readonly api: { readonly timeoutMs: number } }): number {
  return stopWithinMs(stopGraceMs(config));
}

export interface ShutdownStep {
  readonly name: string;
  /** The step's limit after a graceful drain, and within the forceful path's last second. */
  readonly gracefulMs: number;
  readonly forcedMs: number;
  run(): Promise<unknown>;
  /** When the step did not finish within its limit. */
  onLate?(): void;
  /** After the step, finished in time or not. */
  after?(): void;
}

export interface ShutdownPlan {
  /** Stop taking work: quick and local, each awaited in turn. */
  readonly intake: readonly { readonly name: string; run(): unknown }[];
  /** The grace period, asked after the intake stopped (shorter without Redis: nothing can finish). */
  graceMs(): number;
  /** Waits for the work in flight. */
  drain(): Promise<unknown>;
  /** The forceful path, in order, once the grace has passed; the rest is skipped once drained. */
  readonly force: readonly ShutdownStep[];
  /** Then, in order, on either path. */
  readonly close: readonly ShutdownStep[];
  /** Called once when the grace has passed with work still in flight. */
  onOverrun(graceMs: number): void;
}

export interface ShutdownResult {
  readonly graceful: boolean;
  /** The steps that did not finish within their limit. */
  readonly late: readonly string[];
}

export async function runShutdown(plan: ShutdownPlan): Promise<ShutdownResult> {
  for (const step of plan.intake) await step.run();
  const graceMs = plan.graceMs();
  const deadline = Date.now() + graceMs + STOP_AFTER_GRACE_MS;
  const left = (ms: number) => Math.max(0, Math.min(ms, deadline - Date.now()));
  const late: string[] = [];
  const within = async (step: ShutdownStep, ms: number) => {
    if (
      await finishedWithin(
        Promise.resolve().then(() => step.run()),
        ms,
      )
    )
      return;
    late.push(step.name);
    step.onLate?.();
  };
  const drain = { done: false };
  const draining = plan.drain().finally(() => {
    drain.done = true;
  });
  const graceful = await finishedWithin(draining, graceMs);
  if (!graceful) {
    plan.onOverrun(graceMs);
    for (const step of plan.force) {
      if (drain.done) break;
      await within(step, left(step.forcedMs));
    }
  }
  for (const step of plan.close) await within(step, graceful ? step.gracefulMs : left(step.forcedMs));
  return { graceful, late };
}

/** What a daemon has running at stop(); null for what it never started. */
export interface DaemonParts {
  readonly unwatchConfig: (() => void) | null;
  readonly checks: KeyChecks;
  readonly scheduler: Scheduler | null;
  readonly lanes: Lanes | null;
  readonly evaluateQueue: Queue | null;
  readonly evaluateWorker: Worker | null;
  /** The outcomes' history and notification outbox: written out, then unbound from the emitter. */
  readonly outcomes: Outcomes;
  readonly metrics: MetricSource;
  readonly embedded: EmbeddedCloud | null;
  readonly heartbeat: Heartbeat;
  readonly unwatchRedis: () => void;
  /** The daemon's own connection (closed here), or null for one the caller passed in (kept). */
  readonly ownRedis: RedisClient | null;
  redisReady(): boolean;
  readonly logger: DaemonLogger;
}

/** The daemon's stop, step by step. */
export function daemonShutdown(p: DaemonParts, timeoutMs: number): ShutdownPlan {
  const workers = [
    ...(p.lanes?.workers() ?? []),
    ...(p.evaluateWorker ? [p.evaluateWorker] : []),
    ...p.outcomes.workers(),
  ];
  const queues = [...(p.lanes?.queues() ?? []), ...(p.evaluateQueue ? [p.evaluateQueue] : []), ...p.outcomes.queues()];
  const none = () => Promise.resolve();
  return {
    intake: [
      { name: 'unwatch-config', run: () => p.unwatchConfig?.() },
      { name: 'stop-key-checks', run: () => p.checks.stop() },
      { name: 'stop-cron', run: () => p.scheduler?.stop() },
    ],
    // worker.close() waits for active jobs with no limit of its own. Without Redis no job can
    // finish anyway (nor would close() return), so there is no point waiting the full grace.
    graceMs: () => (p.redisReady() ? timeoutMs : Math.min(timeoutMs, 1_000)),
    drain: () => Promise.all(workers.map((w) => w.close())),
    onOverrun: (graceMs) =>
      p.logger.warn(
        { timeoutMs: graceMs, redisReady: p.redisReady() },
        'in-flight jobs did not finish in time; ending their requests and closing workers by force',
      ),
    force: [
      // Each lane's Pool is its own: destroying it fails the requests in flight at once, and their
      // jobs go back to the queue (a retry) for the next replica or start to finish.
      {
        name: 'end-requests',
        gracefulMs: 0,
        forcedMs: 200,
        run: () => p.lanes?.closeClients({ force: true }) ?? none(),
      },
      // The drain itself (close() already asked): the workers end once their requests failed.
      { name: 'await-workers', gracefulMs: 0, forcedMs: 400, run: () => Promise.all(workers.map((w) => w.close())) },
      {
        name: 'close-workers-by-force',
        gracefulMs: 0,
        forcedMs: 200,
        run: () => Promise.all(workers.map((w) => w.close(true))),
      },
    ],
    close: [
      // What the work emitted is in Redis before the connection goes; then nothing more is taken.
      {
        name: 'flush-outcomes',
        gracefulMs: 2_000,
        forcedMs: 200,
        run: () => p.outcomes.flush(),
        after: () => p.outcomes.unbind(),
      },
      { name: 'close-queues', gracefulMs: 2_000, forcedMs: 200, run: () => Promise.all(queues.map((q) => q.close())) },
      { name: 'close-api-clients', gracefulMs: 2_000, forcedMs: 100, run: () => p.lanes?.closeClients() ?? none() },
      { name: 'close-metric-source', gracefulMs: 2_000, forcedMs: 100, run: () => p.metrics.close() },
      { name: 'close-embedded-cloud', gracefulMs: 5_000, forcedMs: 100, run: () => p.embedded?.close() ?? none() },
      {
        name: 'stop-heartbeat',
        gracefulMs: 1_000,
        forcedMs: 100,
        // the beat stops at once; without Redis its key cannot be deleted (it expires on its own):
        // no wait for that
        run: () => {
          const stopped = p.heartbeat.stop().catch(() => undefined);
          return p.redisReady() ? stopped : none();
        },
      },
      {
        name: 'close-redis',
        gracefulMs: 1_000,
        forcedMs: 100,
        run: async () => {
          p.unwatchRedis();
          // a QUIT waits for a connection there is none of
          if (!p.redisReady()) p.ownRedis?.disconnect();
          else await p.ownRedis?.quit();
        },
        onLate: () => p.ownRedis?.disconnect(),
      },
    ],
  };
}
