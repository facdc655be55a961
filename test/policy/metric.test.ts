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

describe('metric forecast', () => {
  const forecast = (mode: 'scale' | 'forecastOnly') => ({
    forecast: { historyMs: 14 * 86_400_000, horizonMs: 7_200_000, mode, refreshMs: 900_000, actuationMs: 300_000 },
  });
  // predicted every 5 min: 400 now, 950 at +10 min
  const points = [0, 5, 10, 15].map((m): [number, number] => [NOW + m * 60_000, m >= 10 ? 950 : 400]);
  const withForecast = (value: number, f: object = { points, peakError: 0.08 }) => ({
    value,
    at: NOW,
    forecast: f as { points: [number, number][] },
  });

  it('scale: raises the target to the peak over the actuation time (5m) ahead, saying why', () => {
    const d = decide(
      metricPolicy(forecast('scale')),
      NOW - 5 * 60_000 + 60_000,
      view({
        applied: { replicas: 3 },
        metric: { ...withForecast(300), at: NOW - 4 * 60_000 },
      }),
    );
    // now = +1 min less 5: looks to NOW + 1 min, whose point (at +5 min) is 400
    expect(d.desired.replicas).toBe(4);
    expect(d.metric?.forecast).toEqual({ mode: 'scale', value: 400, recommended: 4, raised: true, peakError: 0.08 });
    expect(d.reasons.find((r) => r.code === 'forecast')?.message).toBe(
      'forecast peak 400 over the next 5m (actuation 5m) / 100 per unit: replicas 3 -> 4',
    );
  });

  it('scale: the lead adds to the look-ahead; the reactive value wins when higher', () => {
    const p = metricPolicy(forecast('scale'));
    const led = decide(
      p,
      NOW,
      view({ applied: { replicas: 3 }, metric: withForecast(300), leadUntil: NOW + 5 * 60_000 }),
    );
    expect(led.desired.replicas).toBe(10);
    expect(led.reasons.find((r) => r.code === 'forecast')?.message).toContain(
      'over the next 10m (actuation 5m + lead 5m)',
    );
    const high = decide(p, NOW, view({ applied: { replicas: 3 }, metric: withForecast(900) }));
    expect(high.desired.replicas).toBe(9);
    expect(high.metric?.forecast).toMatchObject({ recommended: 4, raised: false });
  });

  it('never lowers the reactive recommendation: a forecast below the value changes nothing', () => {
    const low = points.map(([t]): [number, number] => [t, 10]);
    const d = decide(
      metricPolicy(forecast('scale')),
      NOW,
      view({ applied: { replicas: 8 }, metric: withForecast(800, { points: low }) }),
    );
    expect(d.desired.replicas).toBe(8);
    expect(d.metric?.forecast).toMatchObject({ recommended: 3, raised: false });
    expect(d.reasons.map((r) => r.code)).not.toContain('forecast');
  });

  it('forecastOnly: reports what the forecast would set and changes nothing', () => {
    const p = metricPolicy(forecast('forecastOnly'));
    const d = decide(
      p,
      NOW,
      view({ applied: { replicas: 3 }, metric: withForecast(300), leadUntil: NOW + 5 * 60_000 }),
    );
    const plain = decide(
      metricPolicy(),
      NOW,
      view({ applied: { replicas: 3 }, metric: reading(300), leadUntil: NOW + 5 * 60_000 }),
    );
    expect(d.desired).toEqual(plain.desired);
    expect(d.metric?.forecast).toEqual({
      mode: 'forecastOnly',
      value: 950,
      recommended: 10,
      raised: false,
      peakError: 0.08,
    });
  });

  it('without a forecast (too little history, a failed query, expired) the policy reacts as without one', () => {
    const p = metricPolicy(forecast('scale'));
    const none = decide(
      p,
      NOW,
      view({
        applied: { replicas: 3 },
        metric: withForecast(300, { error: '10 h of history, a forecast needs 24 h' }),
      }),
    );
    expect(none.desired.replicas).toBe(3);
    expect(none.metric?.forecast).toEqual({ mode: 'scale', error: '10 h of history, a forecast needs 24 h' });
    const later = NOW + 3_600_000;
    const expired = decide(p, later, view({ applied: { replicas: 3 }, metric: { ...withForecast(300), at: later } }));
    expect(expired.metric?.forecast).toEqual({ mode: 'scale', error: 'the forecast has expired' });
    expect(decide(p, NOW, view({ applied: { replicas: 3 }, metric: reading(300) })).metric?.forecast).toEqual({
      mode: 'scale',
      error: 'no forecast yet',
    });
  });
});
