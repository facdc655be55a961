// The metric-policy metrics from the daemon's events: every evaluation of a metric pipe without a
// usable value counts for that pipe, whatever the cause (a failed query, no or several matching
// samples, a stale value), from 0 at its first evaluation; the value gauge goes while it lasts.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/index.js';
import type { Decision, MetricOutcome } from '../../src/policy/index.js';
import { bindMetricPolicyEvents, createMetricPolicyMetrics } from '../../src/telemetry/metric-policy-metrics.js';

function evaluation(pipe: string, metric: MetricOutcome) {
  const decision = {
    action: 'none',
    direction: 'none',
    windows: [],
    desired: {},
    changes: {},
    reasons: [],
    metric,
  } as unknown as Decision;
  return { pipe, policy: 'by-lag', tickAt: 0, durationMs: 1, lagMs: 0, decision };
}

describe('pipescaler_metric_unavailable_total', () => {
  it('counts each evaluation without a usable value per pipe, from 0', async () => {
    const registry = new Registry();
    const emitter = new DaemonEmitter();
    bindMetricPolicyEvents(emitter, createMetricPolicyMetrics(registry));
    const bounds = { min: 1, max: 4 };
    emitter.emit('evaluation', evaluation('fine', { field: 'replicas', value: 200, bounds, recommended: 2 }));
    emitter.emit(
      'evaluation',
      evaluation('ambiguous', {
        field: 'replicas',
        error: '2 samples match {consumergroup="cg"}; the match must pick one',
        bounds,
        recommended: 2,
      }),
    );
    emitter.emit(
      'evaluation',
      evaluation('ambiguous', {
        field: 'replicas',
        error: '2 samples match {consumergroup="cg"}; the match must pick one',
        bounds,
        recommended: 2,
      }),
    );
    emitter.emit(
      'evaluation',
      evaluation('missing', {
        field: 'replicas',
        error: 'no sample matches {consumergroup="cg-x"}',
        bounds,
        recommended: 1,
      }),
    );
    const values = (await registry.getSingleMetric('pipescaler_metric_unavailable_total')!.get()).values;
    const of = (pipe: string) => values.find((v) => v.labels.pipe === pipe)?.value;
    expect([of('fine'), of('ambiguous'), of('missing')]).toEqual([0, 2, 1]);
    const gauge = (await registry.getSingleMetric('pipescaler_metric_value')!.get()).values;
    expect(gauge.map((v) => v.labels.pipe)).toEqual(['fine']);
  });
});
