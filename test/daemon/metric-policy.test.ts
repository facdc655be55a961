// Metric-driven scaling end to end: a gauge exporter the test sets, a real Prometheus scraping it
// every second, and the daemon against the embedded cloud over HTTP with the real Redis. The
// clock is fake only for the window; Prometheus and the exporter run in real time, and every
// wait is a bounded poll on Prometheus or on drained queues. The same Prometheus scrapes the
// daemon's /metrics: the dashboard's metric panel (value and bounds per pipe) is asked through it,
// and the metric-policy counters and gauges are read from the daemon's registry.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import type { Decision, Policy } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { createLogger, startDaemonTelemetry, type DaemonTelemetry } from '../../src/telemetry/index.js';
import { startGaugeExporter, type GaugeExporter } from '../gauge-exporter.js';
import { PROMETHEUS_BIN, startPrometheus, type PrometheusServer } from '../prometheus.js';
import { freePort } from '../redis-servers.js';
import { parseScrape, sampleValue } from '../telemetry/exposition-parse.js';
import { substituteVariables } from '../telemetry/promql-names.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  demoPipe,
  drained,
  testConfig,
  uniquePrefix,
} from './helpers.js';
import { requireTool } from '../require-tool.js';

const hasPrometheus = requireTool(PROMETHEUS_BIN, 'prometheus');

const prefix = uniquePrefix('metric');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const LAG = 'kafka_consumergroup_lag';

let cloud: EmbeddedCloud;
let prom: PrometheusServer;
let exporter: GaugeExporter;
let daemon: Daemon;
let telemetry: DaemonTelemetry;
let config: Config;
let instance = '';
const emitter = new DaemonEmitter();
let clock = T0;

const lagPolicy: Policy = {
  name: 'orders-by-lag',
  baseline: { replicas: { min: 1, max: 4 } },
  windows: [
    {
      kind: 'oneOff',
      name: 'business-hours',
      from: T0,
      to: T0 + 60 * MIN,
      priority: 0,
      target: { replicas: { min: 3, max: 8 } },
    },
  ],
  behavior: {
    scaleUp: { maxStep: {}, cooldownMs: 0 },
    scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 2 * MIN },
  },
  metric: {
    query: `sum by (consumergroup) (${LAG})`,
    match: { consumergroup: '{{ .labels.consumerGroup }}' },
    targetPer: { replicas: 100 },
    onError: { kind: 'hold' },
    staleAfterMs: 2 * MIN,
    tolerance: 0.1,
  },
};

const replicas = (pipe: keyof typeof DEMO.pipes) => cloud.store.pipe(DEMO.pipes[pipe])!.scaling.replicas;

/** Set the exporter's lag and wait (bounded) until Prometheus answers with it. */
async function setLag(orders: number, clicks = 150): Promise<void> {
  exporter.set(LAG, { consumergroup: 'cg-orders', topic: 'orders' }, orders);
  exporter.set(LAG, { consumergroup: 'cg-clicks', topic: 'clicks' }, clicks);
  await prom.waitFor(
    `sum by (consumergroup) (${LAG})`,
    (r) =>
      r.find((s) => s.metric.consumergroup === 'cg-orders')?.value === orders &&
      r.find((s) => s.metric.consumergroup === 'cg-clicks')?.value === clicks,
    20_000,
  );
}

async function tickAt(at: number): Promise<void> {
  clock = at;
  await daemon.tick(at);
  await drained([daemon], 30_000);
}

beforeAll(async () => {
  exporter = await startGaugeExporter();
  instance = `127.0.0.1:${await freePort()}`;
  prom = await startPrometheus({
    targets: [
      { job: 'lag-exporter', targets: [exporter.target] },
      { job: 'pipescaler', targets: [instance] },
    ],
  });
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  config = {
    ...testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes: [
        { ...demoPipe('orders-events', 'orders-by-lag'), labels: { consumerGroup: 'cg-orders' } },
        { ...demoPipe('clickstream', 'orders-by-lag'), labels: { consumerGroup: 'cg-clicks' } },
      ],
      policies: { 'orders-by-lag': lagPolicy },
      reconcileMs: 24 * 60 * MIN,
    }),
    metrics: { prometheus: { url: prom.url, timeoutMs: 2_000, headers: {} } },
  };
  // the panels below read each pipe's metric, bounds and unavailable count: per-pipe detail
  config = { ...config, telemetry: { ...config.telemetry, perPipeDetail: true } };
  daemon = createDaemon({
    config,
    redis,
    prefix,
    now: () => clock,
    emitter,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  telemetry = await startDaemonTelemetry({
    emitter,
    logger: createLogger({ level: 'silent' }),
    config: () => config,
    queues: () => daemon.queues(),
    listen: instance,
    redisReady: true,
  });
  await daemon.start();
}, 60_000);

afterAll(async () => {
  await daemon?.stop({ timeoutMs: 2_000 });
  await telemetry?.close();
  await cloud?.close();
  await prom?.stop();
  await exporter?.close();
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/** The dashboard's metric-policy panel queries, variables as Grafana gives them for this daemon. */
function metricPanel(): { value: string; bounds: string } {
  const dashboard = JSON.parse(readFileSync('config/grafana/dashboards/pipescaler.json', 'utf8')) as {
    panels: { title: string; targets?: { refId: string; expr: string }[] }[];
  };
  const panel = dashboard.panels.find((p) => p.title.startsWith('Metric policies'))!;
  const vars = {
    __rate_interval: '10s',
    __interval: '1s',
    __range: '5m',
    job: 'pipescaler',
    instance,
    policy: '.*',
    pipe: '.*',
    DS_PROMETHEUS: 'prometheus',
  };
  const expr = (ref: string) => substituteVariables(panel.targets!.find((t) => t.refId === ref)!.expr, vars);
  return { value: expr('A'), bounds: expr('B') };
}

/** A query of the dashboard's "Failures and retries by policy" panel (per pipe under detail), over the last 5 minutes. */
function failuresPanel(ref: string): string {
  const dashboard = JSON.parse(readFileSync('config/grafana/dashboards/pipescaler.json', 'utf8')) as {
    panels: { title: string; targets?: { refId: string; expr: string }[] }[];
  };
  const panel = dashboard.panels.find((p) => p.title === 'Failures and retries by policy')!;
  const vars = {
    __rate_interval: '5m',
    __interval: '5m',
    __range: '5m',
    job: 'pipescaler',
    instance,
    policy: '.*',
    pipe: '.*',
    DS_PROMETHEUS: 'prometheus',
  };
  return substituteVariables(panel.targets!.find((t) => t.refId === ref)!.expr, vars);
}

/** Until Prometheus, through the panel, shows each pipe's value and bounds as given. */
async function panelShows(want: Record<string, { value: number; min: number; max: number }>): Promise<void> {
  const { value, bounds } = metricPanel();
  for (const [pipe, w] of Object.entries(want)) {
    await prom.waitFor(value, (r) => r.find((s) => s.metric.pipe === pipe)?.value === w.value, 20_000);
    await prom.waitFor(
      bounds,
      (r) =>
        r.find((s) => s.metric.pipe === pipe && s.metric.bound === 'min')?.value === w.min &&
        r.find((s) => s.metric.pipe === pipe && s.metric.bound === 'max')?.value === w.max,
      20_000,
    );
  }
}

/** A sample of the daemon's own exposition (what Prometheus scrapes), read from its registry. */
async function own(name: string, labels: Record<string, string>): Promise<number | undefined> {
  return sampleValue(parseScrape(await telemetry.registry.metrics()), name, labels);
}

describe.skipIf(!hasPrometheus)('a lag-driven policy against a real Prometheus', () => {
  it('tracks the lag inside the window, narrows to the baseline after it, holds through an outage, resumes after', async () => {
    const queries = collect(emitter, 'metric:query');
    const evaluations = collect(emitter, 'evaluation');
    const last = (pipe: string): Decision => evaluations.filter((e) => e.pipe === pipe).at(-1)!.decision;

    // Lag rises: 250 -> 3 replicas (the window's min is 3 too), then 650 -> 7, then far above -> the window's max 8.
    await setLag(250);
    await tickAt(T0);
    expect(replicas('orders-events')).toBe(3);
    expect(replicas('clickstream')).toBe(3); // 150 -> 2, raised to the window's min
    await setLag(650);
    await tickAt(T0 + MIN);
    expect(replicas('orders-events')).toBe(7);
    expect(last('orders-events').metric).toEqual({
      field: 'replicas',
      value: 650,
      bounds: { min: 3, max: 8 },
      recommended: 7,
    });
    // The dashboard's panel shows each pipe's metric and the window's bounds; no error, a fresh value.
    await panelShows({ 'orders-events': { value: 650, min: 3, max: 8 }, clickstream: { value: 150, min: 3, max: 8 } });
    const policy = { policy: 'orders-by-lag' };
    expect(await own('pipescaler_metric_errors_total', policy)).toBe(0);
    expect(await own('pipescaler_metric_last_good_age_seconds', policy)).toBe(0);
    await setLag(50_000);
    await tickAt(T0 + 2 * MIN);
    expect(replicas('orders-events')).toBe(8);

    // Lag falls: stabilization (2 min) holds 8 first, then the pipe falls to the window's min.
    await setLag(0);
    await tickAt(T0 + 3 * MIN);
    expect(replicas('orders-events')).toBe(8);
    expect(last('orders-events').reasons.map((r) => r.code)).toContain('stabilization');
    await tickAt(T0 + 6 * MIN);
    expect(replicas('orders-events')).toBe(3);

    // Within the tolerance nothing moves: 7 x 100 = 700, 740 is within 10%.
    await setLag(700);
    await tickAt(T0 + 10 * MIN);
    expect(replicas('orders-events')).toBe(7);
    await setLag(740);
    await tickAt(T0 + 11 * MIN);
    expect(replicas('orders-events')).toBe(7);
    expect(last('orders-events').reasons.map((r) => r.code)).toContain('tolerance');

    // The window ends: the baseline's bounds (1..4) take over.
    await tickAt(T0 + 61 * MIN);
    expect(replicas('orders-events')).toBe(4);
    expect(last('orders-events').metric?.bounds).toEqual({ min: 1, max: 4 });
    await panelShows({ 'orders-events': { value: 740, min: 1, max: 4 } });

    // Prometheus stops: hold with metric_unavailable, nothing scaled down (the lag would say 1).
    exporter.set(LAG, { consumergroup: 'cg-orders', topic: 'orders' }, 0);
    await prom.halt();
    await tickAt(T0 + 70 * MIN);
    expect(replicas('orders-events')).toBe(4);
    expect(replicas('clickstream')).toBe(2);
    const held = last('orders-events');
    expect(held.action).toBe('none');
    expect(held.reasons.find((r) => r.code === 'metric_unavailable')?.message).toMatch(/Prometheus unreachable/);
    expect(queries.at(-1)).toMatchObject({ policy: 'orders-by-lag', error: expect.stringMatching(/unreachable/) });
    // The failed query is counted, the pipe has no value while it holds within the bounds, and the
    // last good result is as old as the ticks since (61 -> 70 min).
    expect(await own('pipescaler_metric_errors_total', policy)).toBe(1);
    expect(await own('pipescaler_metric_value', { pipe: 'orders-events' })).toBeUndefined();
    expect(await own('pipescaler_metric_bounds', { pipe: 'orders-events', bound: 'max' })).toBe(4);
    expect(await own('pipescaler_metric_last_good_age_seconds', policy)).toBe(9 * 60);

    // Prometheus is back: tracking resumes (lag 0 -> the baseline's min 1).
    await prom.restart();
    await setLag(0);
    await tickAt(T0 + 80 * MIN);
    expect(replicas('orders-events')).toBe(1);
    expect(last('orders-events').reasons.map((r) => r.code)).not.toContain('metric_unavailable');
    await panelShows({ 'orders-events': { value: 0, min: 1, max: 4 } });
    expect(await own('pipescaler_metric_errors_total', policy)).toBe(1);
    expect(await own('pipescaler_metric_last_good_age_seconds', policy)).toBe(0);

    // One query per policy per tick, whatever the number of pipes (2 here; first contact included).
    const ticks = new Set(evaluations.map((e) => e.tickAt)).size;
    expect(queries.length).toBe(ticks);
    expect(await own('pipescaler_metric_queries_total', policy)).toBe(ticks);
  }, 180_000);

  it("holds a pipe whose series stopped moving (judged by the sample's own time), and counts and shows a pipe whose match finds no sample", async () => {
    const evaluations = collect(emitter, 'evaluation');
    const last = (pipe: string): Decision => evaluations.filter((e) => e.pipe === pipe).at(-1)!.decision;
    const STALE_MS = 15_000;
    const unavailable = (pipe: string) => own('pipescaler_metric_unavailable_total', { pipe });
    const [ordersBefore, clicksBefore] = [await unavailable('orders-events'), await unavailable('clickstream')];
    expect(ordersBefore).toBe(1); // the Prometheus outage of the test before
    // orders-events now follows a series that comes with its own time, as a pushed or federated
    // one does (a series of its own: one that switches between the two ways goes stale itself).
    config = {
      ...config,
      pipes: [
        ...config.pipes.map((p) => (p.name === 'orders-events' ? { ...p, labels: { consumerGroup: 'cg-pushed' } } : p)),
        { ...demoPipe('payments-msk', 'orders-by-lag'), labels: { consumerGroup: 'cg-missing' } },
      ],
      policies: { 'orders-by-lag': { ...lagPolicy, metric: { ...lagPolicy.metric!, staleAfterMs: STALE_MS } } },
    };
    expect(await daemon.reload(config)).toBe(true);
    exporter.remove(LAG, { consumergroup: 'cg-orders', topic: 'orders' });
    const pushed = { consumergroup: 'cg-pushed', topic: 'orders' };
    const pushedLag = (v: number) =>
      prom.waitFor(
        `sum by (consumergroup) (${LAG})`,
        (r) => r.find((x) => x.metric.consumergroup === 'cg-pushed')?.value === v,
        20_000,
      );
    exporter.set(LAG, pushed, 350, Date.now());
    await pushedLag(350);
    await tickAt(T0 + 90 * MIN);
    expect(replicas('orders-events')).toBe(4);
    // Its last update says 0, then it stops moving: Prometheus (2.42 ignores lookback_delta) keeps
    // answering 0 for its 5-minute lookback. Once the sample is older than staleAfter, the pipe
    // holds with metric_unavailable instead of falling to 1.
    exporter.set(LAG, pushed, 0, Date.now());
    await pushedLag(0);
    await prom.waitFor(
      `time() - timestamp(${LAG}{consumergroup="cg-pushed"}) > ${STALE_MS / 1000 + 1}`,
      (r) => r.length === 1,
      60_000,
    );
    await tickAt(T0 + 100 * MIN);
    expect(replicas('orders-events')).toBe(4);
    const held = last('orders-events');
    expect(held.action).toBe('none');
    expect(held.reasons.find((r) => r.code === 'metric_unavailable')?.message).toMatch(/old \(staleAfter 15s\)/);
    // clickstream's series moves on: it is tracked as before (150 -> 2).
    expect(last('clickstream').reasons.map((r) => r.code)).not.toContain('metric_unavailable');
    expect(replicas('clickstream')).toBe(2);

    // payments-msk's match finds no sample: metric_unavailable with that cause, held at what it runs,
    // counted per pipe (the query itself did not fail), in status and on the dashboard.
    expect(last('payments-msk').reasons.find((r) => r.code === 'metric_unavailable')?.message).toMatch(
      /no sample matches \{consumergroup="cg-missing"\}/,
    );
    expect(replicas('payments-msk')).toBe(2);
    expect(await unavailable('payments-msk')).toBeGreaterThanOrEqual(1);
    expect(await unavailable('orders-events')).toBe(ordersBefore! + 1);
    expect(await unavailable('clickstream')).toBe(clicksBefore);
    expect(await own('pipescaler_metric_errors_total', { policy: 'orders-by-lag' })).toBe(1); // the outage's, not these
    const status = (await daemon.status()).pipes;
    expect(status.find((p) => p.pipe === 'payments-msk')?.reason).toBe('metric_unavailable');
    expect(status.find((p) => p.pipe === 'orders-events')?.reason).toBe('metric_unavailable');
    await prom.waitFor(
      failuresPanel('C'),
      (r) => (r.find((x) => x.metric.pipe === 'payments-msk')?.value ?? 0) >= 1,
      20_000,
    );
  }, 180_000);
});
