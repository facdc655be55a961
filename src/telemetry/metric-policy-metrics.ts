// The metrics of metric-driven policies: query errors and the last good value's age per policy,
// evaluations without a usable value per policy (per pipe under telemetry.perPipeDetail), and under
// that detail only, the metric's value and the bounds it moves within per pipe. Registered and bound apart from the
// core metrics so this feature stays in one file.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DaemonEmitter } from '../daemon/index.js';
import { configName } from './labels.js';
import { DETAILED, type PipeLabels } from './pipe-labels.js';
import { subscribe } from './subscribe.js';

export function createMetricPolicyMetrics(registry: Registry) {
  const registers = [registry];
  return {
    queries: new Counter({
      name: 'pipescaler_metric_queries_total',
      help: 'Prometheus queries this replica made for metric policies (one per policy per tick across the fleet)',
      labelNames: ['policy'] as const,
      registers,
    }),
    errors: new Counter({
      name: 'pipescaler_metric_errors_total',
      help: 'Failed metric queries (error, timeout, no samples), by policy; its pipes then follow onError',
      labelNames: ['policy'] as const,
      registers,
    }),
    unavailable: new Counter({
      name: 'pipescaler_metric_unavailable_total',
      help: 'Evaluations of a metric-policy pipe without a usable value (the query failed, no sample or several matched its match, stale, NaN, Inf or negative): it followed onError; by policy (and pipe under telemetry.perPipeDetail)',
      labelNames: ['policy', 'pipe'] as const,
      registers,
    }),
    lastGoodAge: new Gauge({
      name: 'pipescaler_metric_last_good_age_seconds',
      help: "Age of the last good result of a metric policy's query",
      labelNames: ['policy'] as const,
      registers,
    }),
    value: new Gauge({
      name: 'pipescaler_metric_value',
      help: 'The metric value a pipe was last evaluated with (absent while unavailable); under telemetry.perPipeDetail only',
      labelNames: ['pipe'] as const,
      registers,
    }),
    bounds: new Gauge({
      name: 'pipescaler_metric_bounds',
      help: "The bounds (min, max) the metric moves a pipe within: the active window's or the baseline's; under telemetry.perPipeDetail only",
      labelNames: ['pipe', 'bound'] as const,
      registers,
    }),
  };
}

export type MetricPolicyMetrics = ReturnType<typeof createMetricPolicyMetrics>;

export function bindMetricPolicyEvents(
  emitter: DaemonEmitter,
  m: MetricPolicyMetrics,
  labels: PipeLabels = DETAILED,
): () => void {
  let detail = labels.detail();
  return subscribe(emitter, {
    'config:reload': ({ result }) => {
      if (result !== 'success' || labels.detail() === detail) return;
      detail = labels.detail();
      for (const family of [m.unavailable, m.value, m.bounds]) family.reset();
    },
    'metric:query': ({ policy, error }) => {
      const p = configName(policy);
      m.queries.inc({ policy: p });
      if (error !== undefined) m.errors.inc({ policy: p });
      else m.errors.inc({ policy: p }, 0);
    },
    'metric:age': ({ policy, lastGoodAgeMs }) => {
      if (lastGoodAgeMs === null) m.lastGoodAge.remove({ policy: configName(policy) });
      else m.lastGoodAge.set({ policy: configName(policy) }, lastGoodAgeMs / 1000);
    },
    evaluation: ({ pipe, decision }) => {
      const o = decision.metric;
      const p = configName(pipe);
      if (o === undefined) return;
      // from 0 at the pipe's first evaluation, so increase() sees its first unavailable value
      m.unavailable.inc(labels.byPolicy(p), o.error !== undefined ? 1 : 0);
      // the metric is the operator's own series, in their Prometheus already: per pipe on demand
      if (!labels.detail()) return;
      if (o.value !== undefined) m.value.set({ pipe: p }, o.value);
      else m.value.remove({ pipe: p });
      m.bounds.set({ pipe: p, bound: 'min' }, o.bounds.min);
      m.bounds.set({ pipe: p, bound: 'max' }, o.bounds.max);
    },
  });
}
