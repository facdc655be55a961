// Every pipescaler_* metric, registered on the one Registry the caller passes (never prom-client's
// global default, so tests and several daemons in one process do not collide). BullMQ's own
// bullmq_* names come from queue.exportPrometheusMetrics() and are not registered here.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { VERSION } from '../version.js';
import { LineGauge } from './line-gauge.js';

/** Up to 30 s: the API client's timeout, so a request that times out still lands in a bucket. */
export const API_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];
/** Evaluations are local (Redis + pure decide): milliseconds, with room for a slow Redis. */
const EVALUATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Tick lag and queue wait: seconds to minutes when workers fall behind or a key is rate limited. */
/** Window verdicts' lateness: 0 is met (at target by the boundary); minutes are what matters. */
export const LATENESS_BUCKETS = [0, 5, 15, 30, 60, 120, 180, 300, 600, 1200];
const WAIT_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export interface MetricsOptions {
  /** Version for pipescaler_build_info (default: package.json's). */
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
  buildInfo.set({ version: options.version ?? VERSION, node: process.versions.node }, 1);

  const lastEvaluation = new Gauge({
    name: 'pipescaler_last_evaluation_timestamp_seconds',
    help: 'When this process last evaluated a pipe (its start time until the first evaluation)',
    registers,
  });
  lastEvaluation.set((options.startedAt ?? Date.now()) / 1000);

  // The daemon makes its metrics only once its first config has loaded: that load is the first
  // successful one (else PipescalerConfigReloadFailed would fire after every start).
  const configLastReloadSuccess = new Gauge({
    name: 'pipescaler_config_last_reload_success',
    help: '1 when the config in force loaded (at start or at the last reload), 0 when the last reload failed (the previous config stays)',
    registers,
  });
  configLastReloadSuccess.set(1);

  const metrics = {
    registry,
    buildInfo,
    lastEvaluation,
    ticks: new Counter({
      name: 'pipescaler_ticks_total',
      help: 'Scheduler ticks that enqueued evaluations',
      registers,
    }),
    lastTick: new Gauge({
      name: 'pipescaler_last_tick_timestamp_seconds',
      help: 'When the scheduler last ticked',
      registers,
    }),
    evaluations: new Counter({
      name: 'pipescaler_evaluations_total',
      help: 'Pipe evaluations by policy (and pipe under telemetry.perPipeDetail), by what the decision asked for (change, none, skip)',
      labelNames: ['policy', 'pipe', 'action'] as const,
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
      help: 'Decision outcomes by policy (and pipe under telemetry.perPipeDetail), direction, result and machine reason',
      labelNames: ['policy', 'pipe', 'direction', 'result', 'reason'] as const,
      registers,
    }),
    // The same outcomes by pipe and result only: a label set known from the config, so every
    // series starts at 0 and increase() sees the first event (a series born at 1 has no increase).
    decisionResults: new Counter({
      name: 'pipescaler_decision_results_total',
      help: 'Decision outcomes by policy (and pipe under telemetry.perPipeDetail) and result (every configured policy and result starts at 0)',
      labelNames: ['policy', 'pipe', 'result'] as const,
      registers,
    }),
    desired: new LineGauge({
      name: 'pipescaler_desired_scaling',
      help: 'What the policy wants the pipe to have, per scaling field',
      labelNames: ['pipe', 'field'] as const,
      registers,
    }),
    applied: new LineGauge({
      name: 'pipescaler_applied_scaling',
      help: 'What the platform last reported for the pipe, per scaling field',
      labelNames: ['pipe', 'field'] as const,
      registers,
    }),
    windowActive: new Gauge({
      name: 'pipescaler_window_active',
      help: '1 while the window drives a pipe of the policy (the pipe under telemetry.perPipeDetail), 0 once it drives none',
      labelNames: ['policy', 'pipe', 'window'] as const,
      registers,
    }),
    pipeFailing: new LineGauge({
      name: 'pipescaler_pipe_failing',
      help: '1 from a failed change or read of the pipe until one succeeds again',
      labelNames: ['pipe'] as const,
      registers,
    }),
    backoff: new Gauge({
      name: 'pipescaler_pipe_backoff',
      help: '1 while the calls of a pipe of the policy (the pipe under telemetry.perPipeDetail) keep failing and its attempts back off (up to its reconcile period)',
      labelNames: ['policy', 'pipe'] as const,
      registers,
    }),
    paused: new LineGauge({
      name: 'pipescaler_paused',
      help: '1 while scaling of the pipe is paused',
      labelNames: ['pipe'] as const,
      registers,
    }),
    parked: new Gauge({
      name: 'pipescaler_parked',
      help: '1 while a pipe of the API key (the pipe under telemetry.perPipeDetail) is parked because the key keeps failing auth (until the next reload)',
      labelNames: ['key', 'pipe'] as const,
      registers,
    }),
    applyRetries: new Counter({
      name: 'pipescaler_apply_retries_total',
      help: 'Apply attempts that failed and are retried, by policy (and pipe under telemetry.perPipeDetail) and error code',
      labelNames: ['policy', 'pipe', 'code'] as const,
      registers,
    }),
    rateLimitPauses: new Counter({
      name: 'pipescaler_rate_limit_pauses_total',
      help: 'Times the apply queue of an API key was paused for a 429',
      labelNames: ['key'] as const,
      registers,
    }),
    reconcilePeriod: new Gauge({
      name: 'pipescaler_reconcile_period_seconds',
      help: "Effective reconcile period of a key's pipes: evaluate.reconcile, stretched to what the key's read share affords",
      labelNames: ['key'] as const,
      registers,
    }),
    budgetUnitsExpired: new Counter({
      name: 'pipescaler_budget_units_expired_total',
      help: "Requests not written because their unit of the key's budget expired before their first byte (the process busy between the budget's mark and the write): nothing sent, the job back in its place",
      labelNames: ['key'] as const,
      registers,
    }),
    rateLimitResetInvalid: new Counter({
      name: 'pipescaler_rate_limit_reset_invalid_total',
      help: "429s whose X-RateLimit-Reset was missing, unparsable or beyond twice the key's window (60 s at most): the key waited one window",
      labelNames: ['key'] as const,
      registers,
    }),
    envelopeIssues: new Counter({
      name: 'pipescaler_api_envelope_issues_total',
      help: 'Scaling answers applied although their envelope did not fit (a requestId that is not a uuid)',
      labelNames: ['key'] as const,
      registers,
    }),
    stateInvalid: new Counter({
      name: 'pipescaler_state_invalid_total',
      help: 'Pipe records read from Redis with fields that did not parse (dropped; the pipe is read again)',
      registers,
    }),
    drift: new Counter({
      name: 'pipescaler_drift_total',
      help: 'Times the platform reported other scaling than pipescaler last applied, by policy (and pipe under telemetry.perPipeDetail)',
      labelNames: ['policy', 'pipe'] as const,
      registers,
    }),
    driftActions: new Counter({
      name: 'pipescaler_drift_actions_total',
      help: "What the policy's behavior.onDrift made of a change made by hand: revert, hold, adoptAsFloor",
      labelNames: ['policy', 'pipe', 'action'] as const,
      registers,
    }),
    overrides: new Counter({
      name: 'pipescaler_overrides_total',
      help: 'Overrides coming into force (set, superseded) or leaving it (expired, cancelled), by source (operator, manual)',
      labelNames: ['policy', 'pipe', 'action', 'source'] as const,
      registers,
    }),
    freezeHeld: new Counter({
      name: 'pipescaler_freeze_held_total',
      help: 'Times a freeze window began holding back a change of a pipe, by policy (and pipe under telemetry.perPipeDetail)',
      labelNames: ['policy', 'pipe'] as const,
      registers,
    }),
    windowVerdicts: new Counter({
      name: 'pipescaler_window_verdicts_total',
      help: 'Window starts per policy (and pipe under telemetry.perPipeDetail) by verdict: met (confirmed at target by the boundary), late (after it), missed (not within the limit), excluded (paused, override, freeze, dry run, state lost around it)',
      labelNames: ['policy', 'pipe', 'verdict'] as const,
      registers,
    }),
    windowLateness: new Histogram({
      name: 'pipescaler_window_lateness_seconds',
      help: 'How long after a window start a pipe was confirmed at target (0: by the boundary), over met and late verdicts',
      buckets: LATENESS_BUCKETS,
      registers,
    }),
    configReloads: new Counter({
      name: 'pipescaler_config_reloads_total',
      help: 'Config reloads by result',
      labelNames: ['result'] as const,
      registers,
    }),
    configLastReloadSuccess,
    redisUp: new Gauge({ name: 'pipescaler_redis_up', help: '1 while the Redis connection is ready', registers }),
    redisStateLost: new Gauge({
      name: 'pipescaler_redis_state_lost',
      help: "1 while scaling is held because Redis lost the daemon's state (data_lost: its marker key is gone) or may (eviction_policy: maxmemory-policy is not noeviction)",
      labelNames: ['cause'] as const,
      registers,
    }),
    redisStateLosses: new Counter({
      name: 'pipescaler_redis_state_losses_total',
      help: "Times this replica found Redis had lost the daemon's state (data_lost) or could (eviction_policy), from 0",
      labelNames: ['cause'] as const,
      registers,
    }),
    apiKeyRejected: new Gauge({
      name: 'pipescaler_api_key_rejected',
      help: "1 while the platform refuses the API key's checks with 401 (a wrong or rotated secret: none of its pipes can be scaled), else 0",
      labelNames: ['key'] as const,
      registers,
    }),
    apiLastContact: new Gauge({
      name: 'pipescaler_api_last_contact_timestamp_seconds',
      help: 'When the platform API last answered (any status)',
      registers,
    }),
    apiChecks: new Counter({
      name: 'pipescaler_api_checks_total',
      help: 'Check-ins of API keys that had no 2xx for api.checkEvery (one services list each): ok, failed, or no_budget (skipped, the read share was spent)',
      labelNames: ['key', 'result'] as const,
      registers,
    }),
    apiLastSuccess: new Gauge({
      name: 'pipescaler_api_last_success_timestamp_seconds',
      help: 'When the platform API last answered 2xx to this API key (the start of the process until then)',
      labelNames: ['key'] as const,
      registers,
    }),
    apiLastFailure: new Gauge({
      name: 'pipescaler_api_last_failure_timestamp_seconds',
      help: 'When a call with this API key last failed for the platform or the network (5xx, timeout, no answer, unreadable answer)',
      labelNames: ['key'] as const,
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
      help: "Failed platform API attempts by API key, operation and error code (each key's series start at 0)",
      labelNames: ['key', 'operation', 'code'] as const,
      registers,
    }),
    apiRetries: new Counter({
      name: 'pipescaler_api_retries_total',
      help: "Platform API attempts retried (by the client, or by the daemon's apply queue), by operation and error code",
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
  for (const result of ['success', 'failure']) metrics.configReloads.inc({ result }, 0);
  return metrics;
}

export type Metrics = ReturnType<typeof createMetrics>;
