// The dashboard and the alert rules against a REAL Prometheus (Debian's binary, test/prometheus.ts)
// scraping a real daemon every second: the daemon runs in-process against the embedded cloud with
// one-second ticks, Prometheus loads rules.yml with only its `for:` durations scaled down (the
// expressions are the shipped ones), and the test asks Prometheus' HTTP API:
//   - after the warm-up of normal operation, no alert is pending or firing (none fires on a start);
//   - the stat panels count what they say (equal to the counters' own totals and the daemon's
//     events), the decision bars count one apply as one;
//   - provoked faults bring their alert to pending with the pipe or key label: a pipe id the
//     platform answers 404, a key it refuses, a 429, scaling answering 500, the cloud stopped;
//   - every dashboard expression, variables substituted, returns series for what the run produced.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import type { PipeConfig } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { createLogger, startDaemonTelemetry, type DaemonTelemetry } from '../../src/telemetry/index.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  until,
  waitForEvent,
  pipeOf,
} from '../daemon/helpers.js';
import {
  PROMETHEUS_BIN,
  scaledRules,
  startPrometheus,
  type PromAlert,
  type PrometheusServer,
  type RuleFile,
} from '../prometheus.js';
import { requireTool } from '../require-tool.js';
import { OPTIONAL, untilGcObserved } from './metric-coverage.js';
import { dashboardExpressions, metricNamesIn, substituteVariables } from './promql-names.js';

const hasPrometheus = requireTool(PROMETHEUS_BIN, 'prometheus');

const RULES = 'config/prometheus/rules.yml';
const DASHBOARD = 'config/grafana/dashboards/pipescaler.json';
const GHOST = 'ghost-events';
const LEGACY = 'legacy-events';

describe.skipIf(!hasPrometheus)('the dashboard and the alerts against a real Prometheus', () => {
  const prefix = uniquePrefix('promrun');
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const dir = mkdtempSync(join(tmpdir(), 'pipescaler-promrun-'));
  const emitter = new DaemonEmitter();
  const applied: string[] = [];
  const failedAt: number[] = [];
  let cloud: EmbeddedCloud;
  let daemon: Daemon;
  let telemetry: DaemonTelemetry;
  let prom: PrometheusServer;
  let config: Config;
  let instance = '';
  let startedAt = 0;
  let warmedAt = 0;
  const vars = (interval: string) => ({
    __rate_interval: '10s',
    __interval: interval,
    __range: '5m',
    job: 'pipescaler',
    instance,
    policy: '.*',
    pipe: '.*',
    DS_PROMETHEUS: 'prometheus',
  });
  const now = () => Date.now() / 1000;

  /** The active alerts with `alertname` whose labels include `labels`. */
  const active = (alerts: PromAlert[], alertname: string, labels: Record<string, string>) =>
    alerts.filter(
      (a) => a.labels.alertname === alertname && Object.entries(labels).every(([k, v]) => a.labels[k] === v),
    );

  async function untilAlert(alertname: string, labels: Record<string, string>, timeoutMs = 20_000): Promise<PromAlert> {
    let found: PromAlert | undefined;
    let last: PromAlert[] = [];
    await until(
      async () => {
        last = await prom.alerts();
        found = active(last, alertname, labels).find((a) => a.state === 'pending' || a.state === 'firing');
        return found !== undefined;
      },
      timeoutMs,
      `${alertname} ${JSON.stringify(labels)} pending (active: ${JSON.stringify(last.map((a) => a.labels))})`,
    ).catch((e: unknown) => {
      throw new Error(
        `${e instanceof Error ? e.message : String(e)}; active: ${JSON.stringify(last.map((a) => [a.labels, a.state]))}`,
      );
    });
    return found!;
  }

  beforeAll(async () => {
    startedAt = now();
    cloud = await startCloud({
      fixtures: 'config/cloud.yaml',
      port: 0,
      rateLimit: { requests: 1_000, perMs: 1_000 },
      random: () => 0,
    });
    const t = Date.now();
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 2_000,
      pipes: [demoPipe('orders-events', 'steady'), demoPipe('clickstream', 'launch'), demoPipe('nightly-s3', 'batch')],
      policies: {
        steady: policy('steady', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }),
        // A window that covers the whole run: it drives the pipe from the first tick to the last.
        launch: policy('launch', { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 }, [
          oneOff('launch-day', t - 3_600_000, t + 3_600_000, {
            replicas: 2,
            replicaCpuMillicores: 500,
            replicaMemoryGb: 2,
          }),
        ]),
        batch: policy('batch', { concurrency: 3 }),
      },
    });
    config = { ...base, evaluate: { ...base.evaluate, cron: '* * * * * *' } };
    writeFileSync(join(dir, 'pipescaler.yaml'), 'pipes: [\n');

    const logger = createLogger({ level: 'silent' });
    emitter.on('config:reload', (r) => {
      if (r.result === 'success') config = daemon.config();
    });
    emitter.on('decision', (d) => {
      if (d.result === 'applied') applied.push(d.pipe);
      if (d.result === 'failed') failedAt.push(Date.now());
    });
    // The daemon reports Redis changes; a connection passed in that is ready already is not one.
    expect(await redis.ping()).toBe('PONG');
    telemetry = await startDaemonTelemetry({
      emitter,
      logger,
      config: () => config,
      queues: () => daemon.queues(),
      listen: '127.0.0.1:0',
      redisReady: true,
    });
    instance = new URL(telemetry.url).host;
    const rules = scaledRules(readFileSync(RULES, 'utf8'));
    prom = await startPrometheus({ targets: [instance], rules: [rules.text] });
    daemon = createDaemon({
      config,
      configPath: join(dir, 'pipescaler.yaml'),
      watch: false,
      redis,
      prefix,
      emitter,
      logger,
      api: { baseUrl: cloud.url, keys: config.api.keys },
      workerOptions: FAST_WORKERS,
      onClient: (client, keyName) => telemetry.bindClient(client.events, keyName),
    });
    await daemon.start();
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop({ timeoutMs: 3_000 });
    await telemetry?.close();
    await prom?.stop();
    await cloud?.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    await cleanupPrefix(redis, prefix);
    redis.disconnect();
  });

  it('loads the shipped expressions with only the for: durations scaled', () => {
    const { shipped, scaled } = scaledRules(readFileSync(RULES, 'utf8'));
    const exprs = (f: RuleFile) => f.groups.flatMap((g) => g.rules.map((r) => r.expr));
    expect(exprs(scaled)).toEqual(exprs(shipped));
    expect(scaled.groups[0]!.rules.find((r) => r.alert === 'PipescalerApplyFailing')!.for).toBe('2s');
  });

  it('warms up to every pipe at its desired scaling, then has no alert pending or firing', async () => {
    const sel = `job="pipescaler", instance="${instance}"`;
    await prom.waitFor(`min(pipescaler_ready{${sel}})`, (r) => r[0]?.value === 1, 30_000);
    await prom.waitFor(`count(pipescaler_applied_scaling{${sel}})`, (r) => r[0]?.value === 7, 30_000); // 3 + 3 + 1 fields
    await prom.waitFor(
      `count(pipescaler_desired_scaling{${sel}} != pipescaler_applied_scaling{${sel}}) or vector(0)`,
      (r) => r[0]?.value === 0,
      30_000,
    );
    await prom.waitFor(
      `sum(pipescaler_decision_results_total{${sel}, result="applied"})`,
      (r) => r[0]?.value === 3,
      30_000,
    );
    warmedAt = now();
    // Four more scrapes and rule evaluations of steady operation.
    await until(() => now() > warmedAt + 5, 10_000, 'steady seconds');
    const alerts = await prom.alerts();
    expect(alerts.map((a) => [a.labels.alertname, a.state])).toEqual([]);
    // Nothing was pending at any evaluation since the warm-up (ALERTS has a sample per evaluation).
    const series = await prom.queryRange('ALERTS', warmedAt + 1, now(), 1);
    expect(series.map((s) => s.metric)).toEqual([]);
    expect(applied.sort()).toEqual(['clickstream', 'nightly-s3', 'orders-events']);
  }, 60_000);

  it('counts what the stat and bar panels say: exact totals, one apply is one', async () => {
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const exprOf = (title: string) =>
      substituteVariables(dashboard.panels.find((p) => p.title === title)!.targets![0]!.expr, vars('2s'));
    const at = now();
    const [stat] = await prom.query(exprOf('Changes applied (1h)'), at);
    const [raw] = await prom.query(`sum(pipescaler_decision_results_total{job="pipescaler", result="applied"})`, at);
    expect(stat!.value).toBe(applied.length);
    expect(raw!.value).toBe(applied.length);
    const [failed] = await prom.query(exprOf('Failed calls (1h)'), at);
    expect(failed!.value).toBe(0);
    // The bars at a 2 s step: the points of every series add up to the decisions made, and the
    // first decision of each label set (a series born at 1) is counted.
    const bars = await prom.queryRange(exprOf('Decisions by direction and result'), startedAt - 10, at, 2);
    const total = bars.flatMap((s) => s.values.map(([, v]) => v)).reduce((a, b) => a + b, 0);
    const [decisions] = await prom.query('sum(pipescaler_decisions_total{job="pipescaler"})', at);
    expect(total).toBe(decisions!.value);
    const appliedBars = bars.filter((s) => s.metric.result === 'applied').flatMap((s) => s.values.map(([, v]) => v));
    expect(appliedBars.reduce((a, b) => a + b, 0)).toBe(3);
  }, 30_000);

  it('brings a 404 pipe, a refused key and drift to their alerts, with the pipe or key label', async () => {
    const ghost: PipeConfig = {
      ...demoPipe('orders-events', 'steady'),
      name: GHOST,
      pipeId: 'b1000000-0000-4000-8000-0000000000ff',
    };
    const legacy: PipeConfig = { ...demoPipe('payments-msk', 'steady', 'broken'), name: LEGACY };
    const keys = {
      ...config.api.keys,
      broken: { ...config.api.keys.default!, keyId: 'pipescaler-unknown-key', keySecret: 'not-the-secret' },
    };
    expect(
      await daemon.reload({ ...config, api: { ...config.api, keys }, pipes: [...config.pipes, ghost, legacy] }),
    ).toBe(true);
    // Someone scales a pipe by hand: the next reconcile read finds it.
    cloud.store.pipe(DEMO.pipes['nightly-s3'])!.scaling.concurrency = 1;
    const drift = waitForEvent(emitter, 'drift', (d) => d.pipe === 'nightly-s3', 20_000);
    // And pauses one, as `pipescaler pause` does.
    await daemon.store.operator.setPause(pipeOf(daemon, 'clickstream'), { reason: 'incident' });
    const paused = waitForEvent(emitter, 'paused', (p) => p.pipe === 'clickstream' && p.paused, 20_000);
    await untilAlert('PipescalerApplyFailing', { pipe: GHOST });
    await untilAlert('PipescalerApiErrors', { key: 'default', code: 'API_NOT_FOUND' });
    // parked pipes are kept per API key by default (telemetry.perPipeDetail names the pipe)
    await untilAlert('PipescalerPipeParked', { key: 'broken' });
    await drift;
    await paused;
    // Nothing fires for the pipes that work.
    const alerts = await prom.alerts();
    expect(
      active(alerts, 'PipescalerApplyFailing', {})
        .map((a) => a.labels.pipe)
        .filter((p) => p !== undefined)
        .sort(),
    ).toEqual([GHOST, LEGACY]);
    // the failures counted per policy: only the policy of the two failing pipes
    expect(
      active(alerts, 'PipescalerApplyFailing', {})
        .filter((a) => a.labels.pipe === undefined)
        .every((a) => a.labels.policy === 'steady'),
    ).toBe(true);
    // The failed stat counts every failure up to its instant, as the counters do.
    const at = now();
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const expr = substituteVariables(
      dashboard.panels.find((p) => p.title === 'Failed calls (1h)')!.targets![0]!.expr,
      vars('2s'),
    );
    const [stat] = await prom.query(expr, at);
    const [raw] = await prom.query('sum(pipescaler_decision_results_total{job="pipescaler", result="failed"})', at);
    expect(raw!.value).toBeGreaterThan(0);
    expect(stat!.value).toBe(raw!.value);
  }, 60_000);

  it('brings a 429 to PipescalerRateLimited for the key', async () => {
    cloud.setFaults({ scalePipe: { error429: 1 } });
    await waitForEvent(emitter, 'rate-limited', (r) => r.key === 'default', 20_000);
    cloud.setFaults({});
    await untilAlert('PipescalerRateLimited', { key: 'default' });
  }, 30_000);

  it('brings a change that never takes effect to PipescalerChangeUnconfirmed for the pipe, sent twice and no more', async () => {
    // the platform answers 200 and never carries the change out; the limit is 2 s
    cloud.setPropagation({ pipes: { [DEMO.pipes['orders-events']]: 'never' } });
    const sends: number[] = [];
    const onDecision = (d: { pipe: string; result: string }) => {
      if (d.pipe === 'orders-events' && d.result === 'applied') sends.push(Date.now());
    };
    emitter.on('decision', onDecision);
    const policies = {
      ...config.policies,
      steady: policy('steady', { replicas: 5, replicaCpuMillicores: 500, replicaMemoryGb: 2 }),
    };
    const evaluate = { ...config.evaluate, actuation: { expectedMs: 0, maxMs: 2_000, minSamples: 20 } };
    const unconfirmed = waitForEvent(
      emitter,
      'unconfirmed',
      (u) => u.pipe === 'orders-events' && u.unconfirmed,
      20_000,
    );
    try {
      expect(await daemon.reload({ ...config, evaluate, policies })).toBe(true);
      await unconfirmed;
      await untilAlert('PipescalerChangeUnconfirmed', { pipe: 'orders-events' });
      // the re-send's own limit (2 s) and then some: still two sends
      const last = sends.at(-1) ?? 0;
      await until(() => Date.now() > last + 6_000, 10_000, 'past the re-send and its limit');
      expect(sends).toHaveLength(2);
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])?.scaling.replicas).toBe(3);
    } finally {
      emitter.off('decision', onDecision);
      cloud.setPropagation({});
    }
  }, 40_000);

  it('brings scaling answering 500 to PipescalerApiErrors, and the change it holds up to the not-at-desired alert', async () => {
    cloud.setFaults({ scalePipe: { error500: 1 } });
    const policies = {
      ...config.policies,
      steady: policy('steady', { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 }),
    };
    expect(await daemon.reload({ ...config, policies })).toBe(true);
    await waitForEvent(emitter, 'apply:retry', (r) => r.pipe === 'orders-events', 20_000);
    await untilAlert('PipescalerApiErrors', { key: 'default', code: 'API_SERVER_ERROR' });
    await untilAlert('PipescalerPipeNotAtDesiredScaling', { pipe: 'orders-events', field: 'replicas' });
  }, 40_000);

  it('brings the cloud stopped to PipescalerApiUnreachable for the key', async () => {
    await cloud.close();
    await untilAlert('PipescalerApiErrors', { key: 'default', code: 'API_NETWORK' });
    await untilAlert('PipescalerApiUnreachable', { key: 'default' });
  }, 40_000);

  it('returns series for every dashboard expression, variables substituted', async () => {
    await untilGcObserved(async () => (await telemetry.registry.metrics()).includes('nodejs_gc_duration_seconds_sum{'));
    // Let a firing alert reach ALERTS for the annotation, and the GC sample reach a scrape.
    await prom.waitFor('ALERTS{alertstate="firing", job="pipescaler"}', (r) => r.length > 0);
    await prom.waitFor(`nodejs_gc_duration_seconds_count{instance="${instance}"}`, (r) => r.length > 0);
    const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as unknown;
    const exprs = dashboardExpressions(dashboard);
    const empty: string[] = [];
    for (const e of exprs) {
      const m = /^label_values\((.*),\s*(\w+)\)$/.exec(e);
      const expr = m
        ? `count by (${m[2]}) (${substituteVariables(m[1]!, vars('2s'))})`
        : substituteVariables(e, vars('2s'));
      expect(expr, 'a variable is left').not.toContain('$');
      const series = await prom.queryRange(expr, startedAt, now(), 1);
      // metric-policy series exist only for pipes of a metric policy (test/daemon/metric-policy.test.ts)
      if (series.length === 0 && ![...metricNamesIn(e)].every((n) => OPTIONAL.has(n))) empty.push(e);
    }
    expect(exprs.length).toBeGreaterThan(40);
    expect(empty).toEqual([]);
  }, 60_000);
});
