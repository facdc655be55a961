// The config of metric-driven scaling: metrics.prometheus, policies.*.metric, pipes[].labels.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { ORG, PIPE, SERVICE } from './config-fixture.js';

const text = (
  metric: string,
  labels = '    labels: { consumerGroup: cg-orders }\n',
  metrics = `metrics:
  prometheus:
    url: \${PROMETHEUS_URL:-http://127.0.0.1:9090}
    timeout: 3s
    bearerTokenFile: token
`,
) => `${metrics}pipes:
  - name: orders
    organizationId: ${ORG}
    serviceId: ${SERVICE}
    pipeId: ${PIPE}
    policy: lag
${labels}policies:
  lag:
    baseline: { replicas: { min: 1, max: 4 } }
    metric:
${metric}`;

const GOOD = `      query: sum by (consumergroup) (kafka_consumergroup_lag)
      match: { consumergroup: "{{ .labels.consumerGroup }}" }
      targetPerReplica: 50000
`;

function issues(t: string): string[] {
  try {
    parseConfig(t, { file: '/etc/ps/pipescaler.yaml', env: {} });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => `${i.line} ${i.path}: ${i.message}`);
    throw err;
  }
  return [];
}

describe('metric config', () => {
  it('loads a metric policy with its defaults and the pipe labels', () => {
    const c = parseConfig(text(GOOD), { file: '/etc/ps/pipescaler.yaml', env: {} });
    expect(c.metrics).toEqual({
      prometheus: { url: 'http://127.0.0.1:9090', timeoutMs: 3000, headers: {}, bearerTokenFile: '/etc/ps/token' },
    });
    expect(c.policies.lag!.metric).toEqual({
      query: 'sum by (consumergroup) (kafka_consumergroup_lag)',
      match: { consumergroup: '{{ .labels.consumerGroup }}' },
      targetPer: { replicas: 50000 },
      onError: { kind: 'hold' },
      staleAfterMs: 120_000,
      tolerance: 0.1,
    });
    expect(c.pipes[0]!.labels).toEqual({ consumerGroup: 'cg-orders' });
  });

  it('takes onError baseline or fixed values, a percentage tolerance and staleAfter', () => {
    const c = parseConfig(
      text(`${GOOD}      onError: { replicas: 4 }\n      tolerance: "5%"\n      staleAfter: 30s\n`),
      { file: 'x.yaml', env: {} },
    );
    expect(c.policies.lag!.metric).toMatchObject({
      onError: { kind: 'fixed', values: { replicas: 4 } },
      tolerance: 0.05,
      staleAfterMs: 30_000,
    });
    expect(
      parseConfig(text(`${GOOD}      onError: baseline\n`), { file: 'x.yaml', env: {} }).policies.lag!.metric!.onError,
    ).toEqual({ kind: 'baseline' });
  });

  it('names each bad field with its line', () => {
    expect(
      issues(text('      query: q\n      onError: drop\n      tolerance: 2\n      targetPerReplica: -1\n')),
    ).toEqual([
      '18 policies.lag.metric.onError: must be hold, baseline, or fixed values such as { replicas: 4 }',
      '19 policies.lag.metric.tolerance: must be a fraction from 0 to below 1 (0.1) or a percentage ("10%")',
      '20 policies.lag.metric.targetPerReplica: targetPerReplica must be a number above 0',
    ]);
    expect(issues(text('      query: q\n'))).toEqual([
      expect.stringContaining('needs targetPerReplica (stream pipes) or targetPerConcurrency'),
    ]);
    expect(issues(text('      query: q\n      targetPerReplica: 5\n      onError: { replicas: 40 }\n'))[0]).toMatch(
      /^19 policies.lag.metric.onError.replicas: /,
    );
  });

  it('checks at load time that every pipe of the policy has the labels the match names', () => {
    expect(issues(text(GOOD, ''))).toEqual([
      '11 pipes[0].policy: pipe "orders" has no label "consumerGroup", which policy "lag" metric.match.consumergroup needs',
    ]);
    expect(issues(text(GOOD.replace('.labels.consumerGroup', '.label.consumerGroup')))[0]).toContain(
      'unknown placeholder {{ .label.consumerGroup }}',
    );
  });

  it('needs metrics.prometheus for a metric, with an http(s) url and one kind of auth', () => {
    expect(issues(text(GOOD, undefined, ''))).toEqual([
      expect.stringContaining('policies.lag.metric: a metric needs metrics.prometheus'),
    ]);
    expect(issues(text(GOOD, undefined, 'metrics:\n  prometheus:\n    url: ftp://x\n'))).toEqual([
      expect.stringContaining('metrics.prometheus.url: must be an http(s) URL'),
    ]);
    const both =
      'metrics:\n  prometheus:\n    url: http://x\n    bearerTokenFile: t\n    basicAuth: { username: u, passwordFile: p }\n';
    expect(issues(text(GOOD, undefined, both))).toEqual([
      expect.stringContaining('metrics.prometheus.basicAuth: give bearerTokenFile or basicAuth, not both'),
    ]);
  });

  it('takes metric.forecast with its defaults: 14d of history, a 2h horizon, forecastOnly, every 15m', () => {
    const load = (f: string) => parseConfig(text(`${GOOD}${f}`), { file: 'x.yaml', env: {} }).policies.lag!.metric;
    expect(load('      forecast: {}\n')!.forecast).toEqual({
      historyMs: 14 * 86_400_000,
      horizonMs: 7_200_000,
      mode: 'forecastOnly',
      refreshMs: 900_000,
      actuationMs: 300_000,
    });
    expect(
      load('      forecast: { history: 7d, horizon: 1h, mode: scale, refresh: 5m, actuation: 3m }\n')!.forecast,
    ).toEqual({
      historyMs: 7 * 86_400_000,
      horizonMs: 3_600_000,
      mode: 'scale',
      refreshMs: 300_000,
      actuationMs: 180_000,
    });
  });

  it('names each bad forecast field with its line', () => {
    expect(
      issues(
        text(
          `${GOOD}      forecast:\n        history: 12h\n        mode: always\n        horizon: 3d\n        every: 1h\n`,
        ),
      ),
    ).toEqual([
      '21 policies.lag.metric.forecast.history: must be from 1d to 30d',
      '22 policies.lag.metric.forecast.mode: must be forecastOnly or scale',
      '23 policies.lag.metric.forecast.horizon: must be at most 48h',
      '24 policies.lag.metric.forecast.every: unknown key "every"',
    ]);
    expect(issues(text(`${GOOD}      forecast: { horizon: 10m }\n`))).toEqual([
      '20 policies.lag.metric.forecast.horizon: refresh (15 min) + actuation (5 min) must fit in the horizon (10 min): a forecast must still see past the actuation time when the next one comes',
    ]);
  });
});
