// The daemon's queues and workers, made at start: one lane per API key (its client, apply queue
// and Worker, lanes.ts) and the evaluate queue with its Worker.
import { MetricsTime, Queue, Worker, type WorkerOptions } from 'bullmq';
import type { ApiClient } from '../../api/index.js';
import type { Config } from '../../config/index.js';
import { createApplyProcessor } from '../work/turn.js';
import type { DaemonContext } from '../work/context.js';
import { createEvaluateProcessor } from '../work/evaluate.js';
import { Lanes, type LaneSettings } from '../lanes/lanes.js';
import { EVALUATE_QUEUE, type EvaluateJob } from '../lanes/queues.js';
import type { RedisClient } from '../store/redis-connection.js';

export interface WorkersOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  /** The API the lanes' clients talk to (the embedded cloud's URL once it runs). */
  readonly baseUrl: string;
  readonly ctx: DaemonContext;
  readonly keys: Config['api']['keys'];
  readonly settings: LaneSettings;
  readonly concurrency: number;
  /** Extra Worker options (tests lower stalledInterval and lockDuration). */
  readonly workerOptions: Partial<WorkerOptions> | undefined;
  readonly onClient: (client: ApiClient, keyName: string) => void;
}

export interface DaemonWorkers {
  readonly lanes: Lanes;
  readonly evaluateQueue: Queue;
  readonly evaluateWorker: Worker<EvaluateJob>;
}

/**
 * Every Worker's options besides its connection, prefix and concurrency. metrics: BullMQ's
 * completed/failed totals (queue.exportPrometheusMetrics) need them on. A job whose replica died
 * is handed to another after its lock lapses and a stalled check runs: BullMQ's 30 s + 30 s froze
 * such a pipe for up to a minute (the chaos suite saw 45-60 s). Jobs here are one API request; the
 * lock is renewed every lockDuration / 2 while one runs.
 */
export const WORKER_OPTIONS = {
  metrics: { maxDataPoints: MetricsTime.ONE_HOUR * 24 },
  lockDuration: 10_000,
  stalledInterval: 5_000,
} as const satisfies Partial<WorkerOptions>;

export function startWorkers(o: WorkersOptions): DaemonWorkers {
  const { ctx, redis, prefix } = o;
  const onBullError = (err: Error) => ctx.logger.debug({ err: err.message }, 'queue connection error');
  const workerOptions = {
    connection: redis,
    prefix,
    ...WORKER_OPTIONS,
    ...o.workerOptions,
  };
  const lanes = new Lanes({
    redis,
    prefix,
    baseUrl: o.baseUrl,
    processor: createApplyProcessor(ctx),
    workerOptions,
    onWorkerError: onBullError,
    onClient: o.onClient,
  });
  lanes.sync(o.keys, o.settings);
  const evaluateQueue = new Queue(EVALUATE_QUEUE, { connection: redis, prefix });
  evaluateQueue.on('error', onBullError);
  const evaluateWorker = new Worker<EvaluateJob>(EVALUATE_QUEUE, createEvaluateProcessor(ctx), {
    ...workerOptions,
    concurrency: o.concurrency,
  });
  evaluateWorker.on('error', onBullError);
  evaluateWorker.on('failed', (job, err) =>
    ctx.logger.warn({ pipe: job?.data.pipe, err: err.message }, 'evaluation failed'),
  );
  return { lanes, evaluateQueue, evaluateWorker };
}
