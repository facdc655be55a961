import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/decide.js';
import { indexSamples, matchKey, parseSampleValue, resolveMatch, selectSample } from '../../src/policy/metric-match.js';
import { rawRecommendation } from '../../src/policy/metric.js';
import type { MetricSpec, Policy } from '../../src/policy/types.js';
import { at, policy, recurring, view } from './build.js';

const NOW = at('2026-11-24T10:00:00Z'); // a Tuesday, 11:00 in Berlin
const spec = (o: Partial<MetricSpec> = {}): MetricSpec => ({
  query: 'sum by (consumergroup) (kafka_consumergroup_lag)',
  match: {},
  targetPer: { replicas: 100 },
  onError: { kind: 'hold' },
  staleAfterMs: 120_000,
  tolerance: 0.1,
  ...o,
});
const metricPolicy = (o: Partial<MetricSpec> = {}, p: Partial<Policy> = {}): Policy =>
  policy({
    baseline: { replicas: { min: 1, max: 4 } },
    windows: [
      recurring({
        name: 'business-hours',
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        start: '08:00',
        end: '20:00',
        timezone: 'Europe/Berlin',
        target: { replicas: { min: 3, max: 10 } },
      }),
    ],
    metric: spec(o),
    ...p,
  });
const reading = (value: number, when = NOW) => ({ value, at: when });

describe('metric target tracking', () => {
  it('recommends ceil(value / target) inside the window bounds', () => {
    const d = decide(metricPolicy(), NOW, view({ applied: { replicas: 3 }, metric: reading(650) }));
    expect(d.desired.replicas).toBe(7);
    expect(d.metric).toEqual({ field: 'replicas', value: 650, bounds: { min: 3, max: 10 }, recommended: 7 });
    expect(d.reasons.map((r) => r.code)).toContain('metric');
  });

  it('clamps to the window max and to the min (0 stays at the lower bound)', () => {
    expect(
      decide(metricPolicy(), NOW, view({ applied: { replicas: 3 }, metric: reading(5000) })).desired.replicas,
    ).toBe(10);
    expect(decide(metricPolicy(), NOW, view({ applied: { replicas: 6 }, metric: reading(0) })).desired.replicas).toBe(
      3,
    );
  });

  it('uses the baseline bounds outside every window', () => {
    const night = at('2026-11-24T22:00:00Z');
    const d = decide(metricPolicy(), night, view({ applied: { replicas: 8 }, metric: reading(900, night) }));
    expect(d.metric?.bounds).toEqual({ min: 1, max: 4 });
    expect(d.desired.replicas).toBe(4);
  });

  it('cannot move a fixed set (min = max)', () => {
    const p = metricPolicy(
      {},
      {
        windows: [
          recurring({
            name: 'fixed',
            start: '00:00',
            durationMs: 86_400_000,
            timezone: 'UTC',
            target: { replicas: { value: 5 } },
          }),
        ],
      },
    );
    const d = decide(p, NOW, view({ applied: { replicas: 5 }, metric: reading(100_000) }));
    expect(d.desired.replicas).toBe(5);
    expect(d.metric?.bounds).toEqual({ min: 5, max: 5 });
  });

  it('keeps the applied value within the tolerance', () => {
    // 5 x 100 = 500; 540 is 8% above: no change; 560 is 12% above: 6
    const held = decide(metricPolicy(), NOW, view({ applied: { replicas: 5 }, metric: reading(540) }));
    expect(held.action).toBe('none');
    expect(held.reasons.map((r) => r.code)).toContain('tolerance');
    expect(decide(metricPolicy(), NOW, view({ applied: { replicas: 5 }, metric: reading(560) })).desired.replicas).toBe(
      6,
    );
    expect(decide(metricPolicy(), NOW, view({ applied: { replicas: 5 }, metric: reading(460) })).action).toBe('none');
    expect(decide(metricPolicy(), NOW, view({ applied: { replicas: 5 }, metric: reading(440) })).desired.replicas).toBe(
      5,
    );
  });

  it('drives concurrency for object-storage pipes with targetPerConcurrency', () => {
    const p = metricPolicy({ targetPer: { replicas: 100, concurrency: 10 } }, { baseline: {}, windows: [] });
    const d = decide(p, NOW, view({ kind: 'objectStorage', applied: { concurrency: 2 }, metric: reading(95) }));
    expect(d.desired).toEqual({ concurrency: 10 });
  });

  it('maxStep and cooldown still smooth the move', () => {
    const p = metricPolicy(
      {},
      {
        behavior: {
          scaleUp: { maxStep: { replicas: 2 }, cooldownMs: 0 },
          scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 600_000 },
        },
      },
    );
    expect(decide(p, NOW, view({ applied: { replicas: 3 }, metric: reading(900) })).desired.replicas).toBe(5);
    const recs = [{ at: NOW - 60_000, values: { replicas: 9 } }];
    expect(
      decide(p, NOW, view({ applied: { replicas: 9 }, metric: reading(300), recommendations: recs })).desired.replicas,
    ).toBe(9);
  });
});

describe('metric unavailable', () => {
  const codes = (d: ReturnType<typeof decide>) => d.reasons.map((r) => r.code);
  it.each([
    ['an error', { error: 'connect ECONNREFUSED 127.0.0.1:9090' }, 'ECONNREFUSED'],
    ['NaN', reading(NaN), 'NaN'],
    ['+Inf', reading(Infinity), '+Inf'],
    ['a negative value', reading(-5), 'negative'],
    ['a stale value', reading(100, NOW - 180_000), '3m old'],
  ])('holds on %s', (_what, r, text) => {
    const d = decide(metricPolicy(), NOW, view({ applied: { replicas: 8 }, metric: r }));
    expect(d.desired.replicas).toBe(8);
    expect(codes(d)).toContain('metric_unavailable');
    expect(d.reasons.find((x) => x.code === 'metric_unavailable')!.message).toContain(text);
    expect(d.metric?.error).toContain(text);
  });

  it('holds within the bounds: a window end still narrows to the baseline', () => {
    const night = at('2026-11-24T22:00:00Z');
    expect(
      decide(metricPolicy(), night, view({ applied: { replicas: 8 }, metric: { error: 'down' } })).desired.replicas,
    ).toBe(4);
  });

  it('onError baseline and fixed values', () => {
    const base = metricPolicy({ onError: { kind: 'baseline' } }, { baseline: { replicas: { value: 4 } } });
    expect(decide(base, NOW, view({ applied: { replicas: 8 }, metric: { error: 'x' } })).desired.replicas).toBe(4);
    const fixed = metricPolicy({ onError: { kind: 'fixed', values: { replicas: 6 } } });
    expect(decide(fixed, NOW, view({ applied: { replicas: 8 }, metric: { error: 'x' } })).desired.replicas).toBe(6);
    expect(
      decide(fixed, NOW, view({ applied: { replicas: 8 }, metric: undefined })).reasons.map((r) => r.code),
    ).toContain('metric_unavailable');
  });
});

describe('rawRecommendation', () => {
  it('is exact on whole ratios and rounds up otherwise', () => {
    expect(rawRecommendation(100_000, 50_000)).toBe(2);
    expect(rawRecommendation(100_001, 50_000)).toBe(3);
    expect(rawRecommendation(0.3, 0.1)).toBe(3);
    expect(rawRecommendation(0, 10)).toBe(0);
  });
});

describe('match', () => {
  const pipe = {
    name: 'orders',
    pipeId: 'p1',
    serviceId: 's1',
    organizationId: 'o1',
    labels: { consumerGroup: 'cg-orders' },
  };
  it('resolves placeholders and selects exactly one sample', () => {
    const wanted = resolveMatch({ consumergroup: '{{ .labels.consumerGroup }}', pipe: 'x-{{.name}}' }, pipe);
    expect(wanted).toEqual({ consumergroup: 'cg-orders', pipe: 'x-orders' });
    const samples = [
      { labels: { consumergroup: 'cg-orders', pipe: 'x-orders' }, value: 5 },
      { labels: { consumergroup: 'cg-other', pipe: 'x-orders' }, value: 7 },
    ];
    const names = Object.keys(wanted);
    const index = indexSamples(samples, names);
    expect(selectSample(index.get(matchKey(names, wanted)) ?? [], wanted, 1)).toEqual({ value: 5, at: 1 });
    expect(selectSample([], wanted, 1)).toEqual({
      error: 'no sample matches {consumergroup="cg-orders", pipe="x-orders"}',
    });
    expect(selectSample(samples, {}, 1)).toMatchObject({ error: expect.stringContaining('2 samples match the query') });
  });

  it('parses Prometheus sample values', () => {
    expect(parseSampleValue('+Inf')).toBe(Infinity);
    expect(parseSampleValue('-Inf')).toBe(-Infinity);
    expect(parseSampleValue('NaN')).toBeNaN();
    expect(parseSampleValue('12.5')).toBe(12.5);
  });
});
