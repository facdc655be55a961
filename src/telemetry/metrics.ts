// Every pipescaler_* metric, registered on the one Registry the caller passes (never prom-client's
// global default, so tests and several daemons in one process do not collide). BullMQ's own
// bullmq_* names come from queue.exportPrometheusMetrics() and are not registered here.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Up to 30 s: the API client's timeout, so a request that times out still lands in a bucket. */
export const API_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];
/** Evaluations are local (Redis + pure decide): milliseconds, with room for a slow Redis. */
const EVALUATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Tick lag and queue wait: seconds to minutes when workers fall behind or a key is rate limited. */
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export interface MetricsOptions {
  /** Package version for pipescaler_build_info. */
  readonly version?: string;
  /** Node's process_* and nodejs_* metrics on the same registry (default true). */
  readonly defaultMetrics?: boolean;
  /** Epoch ms; start value of pipescaler_last_evaluation_timestamp_seconds (default: now). */
  readonly startedAt?: number;
}

export function createMetrics(registry: Registry, options: MetricsOptions = {}) {
  const registers = [registry];
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const buildInfo = new Gauge({
    name: 'pipescaler_build_info',
    help: 'Always 1; the labels say which pipescaler and Node run',
    labelNames: ['version', 'node'] as const,
    registers,
  });
  buildInfo.set({ version: options.version ?? 'unknown', node: process.versions.node }, 1);

  const lastEvaluation = new Gauge({
    name: 'pipescaler_last_evaluation_timestamp_seconds',
    help: 'When this process last evaluated a pipe (its start time until the first evaluation)',
    registers,
  });
  lastEvaluation.set((options.startedAt ?? Date.now()) / 1000);

  return {
    registry,
    buildInfo,
    lastEvaluation,
    ticks: new Counter({ name: 'pipescaler_ticks_total', help: 'Scheduler ticks that enqueued evaluations', registers }),
    lastTick: new Gauge({ name: 'pipescaler_last_tick_timestamp_seconds', help: 'When the scheduler last ticked', registers }),
    evaluations: new Counter({
      name: 'pipescaler_evaluations_total',
      help: 'Pipe evaluations, by what the decision asked for (change, none, skip)',
      labelNames: ['pipe', 'action'] as const,
      registers,
    }),
    evaluationDuration: new Histogram({
      name: 'pipescaler_evaluation_duration_seconds',
      help: 'Time to evaluate one pipe (state read + decide)',
      buckets: EVALUATION_BUCKETS,
      registers,
    }),
    tickLag: new Histogram({
      name: 'pipescaler_tick_lag_seconds',
      help: 'From the tick instant to the evaluation of a pipe',
      buckets: WAIT_BUCKETS,
      registers,
    }),
    applyQueueWait: new Histogram({
      name: 'pipescaler_apply_queue_wait_seconds',
      help: 'How long an apply job waited in its API key queue before it started',
      labelNames: ['key'] as const,
      buckets: WAIT_BUCKETS,
      registers,
    }),
    decisions: new Counter({
      name: 'pipescaler_decisions_total',
      help: 'Decision outcomes by pipe, direction, result and machine reason',
      labelNames: ['pipe', 'direction', 'result', 'reason'] as const,
      registers,
    }),
    desired: new Gauge({
      name: 'pipescaler_desired_scaling',
      help: 'What the policy wants the pipe to have, per scaling field',
      labelNames: ['pipe', 'field'] as const,
      registers,
    }),
    applied: new Gauge({
      name: 'pipescaler_applied_scaling',
      help: 'What the platform last reported for the pipe, per scaling field',
      labelNames: ['pipe', 'field'] as const,
      registers,
    }),
    windowActive: new Gauge({
      name: 'pipescaler_window_active',
      help: '1 while the window drives the pipe, 0 once it no longer does',
      labelNames: ['pipe', 'window'] as const,
      registers,
    }),
    paused: new Gauge({ name: 'pipescaler_paused', help: '1 while scaling of the pipe is paused', labelNames: ['pipe'] as const, registers }),
    parked: new Gauge({
      name: 'pipescaler_parked',
      help: '1 while the pipe is parked because its API key keeps failing auth (until the next reload)',
      labelNames: ['pipe'] as const,
      registers,
    }),
    applyRetries: new Counter({
      name: 'pipescaler_apply_retries_total',
      help: 'Apply attempts that failed and are retried, by pipe and error code',
      labelNames: ['pipe', 'code'] as const,
      registers,
    }),
    rateLimitPauses: new Counter({
      name: 'pipescaler_rate_limit_pauses_total',
      help: 'Times the apply queue of an API key was paused for a 429',
      labelNames: ['key'] as const,
      registers,
    }),
    drift: new Counter({
      name: 'pipescaler_drift_total',
      help: 'Times the platform reported other scaling than pipescaler last applied',
      labelNames: ['pipe'] as const,
      registers,
    }),
    configReloads: new Counter({
      name: 'pipescaler_config_reloads_total',
      help: 'Config reloads by result',
      labelNames: ['result'] as const,
      registers,
    }),
    configLastReloadSuccess: new Gauge({
      name: 'pipescaler_config_last_reload_success',
      help: '1 when the last config reload succeeded, 0 when it failed (the previous config stays)',
      registers,
    }),
    redisUp: new Gauge({ name: 'pipescaler_redis_up', help: '1 while the Redis connection is ready', registers }),
    apiLastContact: new Gauge({
      name: 'pipescaler_api_last_contact_timestamp_seconds',
      help: 'When the platform API last answered (any status)',
      registers,
    }),
    apiRequestDuration: new Histogram({
      name: 'pipescaler_api_request_duration_seconds',
      help: 'Platform API attempts by operation and HTTP status (none: no response)',
      labelNames: ['operation', 'status'] as const,
      buckets: API_DURATION_BUCKETS,
      registers,
    }),
    apiErrors: new Counter({
      name: 'pipescaler_api_errors_total',
      help: 'Failed platform API attempts by operation and error code',
      labelNames: ['operation', 'code'] as const,
      registers,
    }),
    apiRetries: new Counter({
      name: 'pipescaler_api_retries_total',
      help: 'Platform API attempts retried by the client, by operation and error code',
      labelNames: ['operation', 'code'] as const,
      registers,
    }),
    apiRateLimited: new Counter({
      name: 'pipescaler_api_rate_limited_total',
      help: 'Platform API answers of 429 Too Many Requests, by operation',
      labelNames: ['operation'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
