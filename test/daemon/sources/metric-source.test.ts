// One Prometheus query per metric policy per tick across replicas: two MetricSources (two daemon
// replicas: their own Redis connections and emitters, one prefix) read every pipe of a policy at
// the same tick, all at once; a real Prometheus counts the queries it served. The first reader
// queries and stores the vector under the tick, every other one (here or on the other replica)
// reads it; a failed query is shared the same way.
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../../src/daemon/model/events.js';
import { MetricSource, metricVariant } from '../../../src/daemon/sources/metric-source.js';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { readingProblem } from '../../../src/policy/metric.js';
import type { MetricReading, PipeConfig, Policy } from '../../../src/policy/types.js';
import type { Config } from '../../../src/config/types.js';
import { startGaugeExporter, type GaugeExporter } from '../../gauge-exporter.js';
import { PROMETHEUS_BIN, startPrometheus, type PrometheusServer } from '../../prometheus.js';
import { REDIS_URL, cleanupPrefix, collect, demoPipe, testConfig, uniquePrefix } from '../helpers.js';
import { requireTool } from '../../require-tool.js';

const hasPrometheus = requireTool(PROMETHEUS_BIN, 'prometheus');

const prefix = uniquePrefix('metricsrc');
const LAG = 'kafka_consumergroup_lag';
const T = Date.parse('2026-11-23T10:00:00Z');
const PIPES = 8;

const lag: Policy = {
  name: 'by-lag',
  baseline: { replicas: { min: 1, max: 10 } },
  windows: [],
  behavior: { scaleUp: { maxStep: {}, cooldownMs: 0 }, scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 0 } },
  metric: {
    query: `sum by (consumergroup) (${LAG})`,
    match: { consumergroup: '{{ .labels.consumerGroup }}' },
    targetPer: { replicas: 100 },
    onError: { kind: 'hold' },
    staleAfterMs: 120_000,
    tolerance: 0.1,
  },
};
const pipes: PipeConfig[] = Array.from({ length: PIPES }, (_, i) => ({
  ...demoPipe('orders-events', 'by-lag'),
  name: `p${i}`,
  labels: { consumerGroup: `cg-${i}` },
}));

let exporter: GaugeExporter;
let prom: PrometheusServer;
let config: Config;
const replicas: { redis: Redis; emitter: DaemonEmitter; source: MetricSource }[] = [];

/** /api/v1/query requests Prometheus has served, from its own /metrics. */
async function served(): Promise<number> {
  const text = await (await fetch(`${prom.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('prometheus_http_requests_total{') && l.includes('handler="/api/v1/query"'))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}

/** Every pipe read at `tick`, alternating replicas, all at once. */
function readAll(tick: number): Promise<MetricReading[]> {
  return Promise.all(pipes.map((p, i) => replicas[i % 2]!.source.reading(lag, p, tick)));
}

beforeAll(async () => {
  exporter = await startGaugeExporter();
  for (let i = 0; i < PIPES; i++) exporter.set(LAG, { consumergroup: `cg-${i}`, topic: 'orders' }, 100 * (i + 1));
  prom = await startPrometheus({ targets: [{ job: 'lag', targets: [exporter.target] }] });
  await prom.waitFor(`count(${LAG})`, (r) => r[0]?.value === PIPES, 20_000);
  config = {
    ...testConfig({ baseUrl: 'http://127.0.0.1:1', prefix, pipes, policies: { 'by-lag': lag } }),
    metrics: { prometheus: { url: prom.url, timeoutMs: 2_000, headers: {} } },
  };
  for (let r = 0; r < 2; r++) {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const emitter = new DaemonEmitter();
    replicas.push({
      redis,
      emitter,
      source: new MetricSource({ redis, prefix, emitter, now: () => T, config: () => config }),
    });
  }
}, 60_000);

afterAll(async () => {
  for (const r of replicas) await r.source.close();
  await prom?.stop();
  await exporter?.close();
  if (replicas[0]) await cleanupPrefix(replicas[0].redis, prefix);
  for (const r of replicas) r.redis.disconnect();
});

describe.skipIf(!hasPrometheus)('MetricSource across replicas', () => {
  it('queries Prometheus once per policy and tick; every pipe on either replica gets its own sample', async () => {
    const events = replicas.map((r) => collect(r.emitter, 'metric:query'));
    const before = await served();
    const first = await readAll(T);
    // Each sample dated by its own time: scraped within the last seconds before the query at T.
    expect(first).toEqual(pipes.map((_, i) => ({ value: 100 * (i + 1), at: expect.any(Number) })));
    for (const r of first) expect(T - (r as { at: number }).at).toBeLessThan(15_000);
    expect((await served()) - before).toBe(1);
    expect(events.flat()).toHaveLength(1);

    // A reader that comes later for the same tick reads the stored vector: no query.
    expect(await replicas[1]!.source.reading(lag, pipes[3]!, T)).toEqual(first[3]);
    // The next tick is a new query, once again for both replicas.
    await readAll(T + 30_000);
    expect((await served()) - before).toBe(2);
    expect(events.flat()).toHaveLength(2);
  });

  it("prefetch starts the tick's query before any evaluation asks; the readings that follow use it", async () => {
    const tick = T + 90_000;
    const before = await served();
    const queried = once(replicas[0]!.emitter, 'metric:query');
    const schedule: Policy = { ...lag, name: 'schedule-only', metric: undefined };
    replicas[0]!.source.prefetch([lag, schedule], tick);
    await queried;
    expect((await served()) - before).toBe(1);
    const readings = await readAll(tick);
    expect(readings).toEqual(pipes.map((_, i) => ({ value: 100 * (i + 1), at: expect.any(Number) })));
    expect((await served()) - before).toBe(1);
  });

  it("a stopping replica lets its prefetch store the tick's result before it closes, and takes no new lock", async () => {
    const tick = T + 150_000;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const stopping = new MetricSource({
      redis,
      prefix,
      emitter: new DaemonEmitter(),
      now: () => T,
      config: () => config,
    });
    try {
      const before = await served();
      stopping.prefetch([lag], tick);
      await stopping.close();
      // The other replica reads what the closed one stored: no second query.
      expect(await replicas[1]!.source.reading(lag, pipes[2]!, tick)).toEqual({ value: 300, at: expect.any(Number) });
      expect((await served()) - before).toBe(1);
      expect(await stopping.reading(lag, pipes[2]!, tick + 30_000)).toEqual({ error: 'the daemon is stopping' });
    } finally {
      redis.disconnect();
    }
  });

  it("a reload that changes the query between the tick and its evaluations reads the new query's result", async () => {
    const tick = T + 180_000;
    const before = await served();
    replicas[0]!.source.prefetch([lag], tick);
    // the prefetch is not awaited by its caller: a reading of the same tick waits for it (no query
    // of its own), so the old query has been served before the new one is asked
    await replicas[0]!.source.reading(lag, pipes[0]!, tick);
    const doubled: Policy = { ...lag, metric: { ...lag.metric!, query: `2 * ${lag.metric!.query}` } };
    // Another shape of query (arithmetic) is sent as it is, so its samples carry no own time.
    expect(await replicas[1]!.source.reading(doubled, pipes[1]!, tick)).toEqual({ value: 400, at: T });
    expect((await served()) - before).toBe(2);
  });

  it('takes a shared result in Redis that does not fit its shape as an error of the tick, never as values', async () => {
    const tick = T + 120_000;
    const before = await served();
    await replicas[0]!.redis.set(
      redisKeys(prefix).metricTick('by-lag', tick, metricVariant(lag.metric!)),
      JSON.stringify({ at: tick, samples: [[{}, 'x', 'late']] }),
      'PX',
      60_000,
    );
    const readings = await readAll(tick);
    for (const r of readings) expect(r).toEqual({ error: 'the result stored in Redis for this tick is unreadable' });
    expect((await served()) - before).toBe(0);
  });

  it('shares a failed query the same way: one attempt, the error for every pipe', async () => {
    const events = replicas.map((r) => collect(r.emitter, 'metric:query'));
    await prom.halt();
    const readings = await readAll(T + 60_000);
    await prom.restart();
    expect(events.flat()).toHaveLength(1);
    expect(events.flat()[0]).toMatchObject({
      policy: 'by-lag',
      error: expect.stringMatching(/Prometheus unreachable/),
    });
    for (const r of readings) expect(r).toEqual({ error: events.flat()[0]!.error });
  }, 60_000);

  it('dates each sample by its own time in the same query: one that stopped moving is stale, an aggregation as old as its oldest input', async () => {
    // Samples with their own times (as federated or pushed ones): Prometheus keeps a series whose
    // time stops moving answerable for its 5-minute lookback, and 2.42 ignores lookback_delta.
    const OLD = 'pipescaler_test_stamped_lag';
    const at = Date.now();
    exporter.set(OLD, { consumergroup: 'cg-old', partition: '0' }, 500, at - 40_000);
    exporter.set(OLD, { consumergroup: 'cg-old', partition: '1' }, 100, at);
    exporter.set(OLD, { consumergroup: 'cg-new', partition: '0' }, 300, at);
    await prom.waitFor(`count(${OLD})`, (r) => r[0]?.value === 3, 20_000);
    const spec = { ...lag.metric!, query: `sum by (consumergroup) (${OLD})`, staleAfterMs: 20_000 };
    const stamped: Policy = { ...lag, name: 'stamped', metric: spec };
    const pipe = (cg: string): PipeConfig => ({
      ...pipes[0]!,
      name: cg,
      policy: 'stamped',
      labels: { consumerGroup: cg },
    });
    const before = await served();
    const [old, fresh] = await Promise.all([
      replicas[0]!.source.reading(stamped, pipe('cg-old'), T),
      replicas[1]!.source.reading(stamped, pipe('cg-new'), T),
    ]);
    expect((await served()) - before).toBe(1);
    // cg-old sums a sample 40 s old: as old as that (on the daemon's clock, whose now is T here: T minus the age).
    expect(old).toMatchObject({ value: 600 });
    const oldAge = T - (old as { at: number }).at;
    expect(oldAge).toBeGreaterThanOrEqual(40_000);
    expect(oldAge).toBeLessThan(40_000 + 20_000);
    expect(readingProblem(old, spec, T)).toMatch(/old \(staleAfter 20s\)/);
    expect(fresh).toMatchObject({ value: 300 });
    expect(readingProblem(fresh, spec, T)).toBeNull();
    // A query of another shape goes as it is, and its samples carry the query's time: the 40 s old
    // sample is fresh by that measure (Prometheus' own lookback is all there is then).
    const scaled: Policy = { ...lag, name: 'scaled', metric: { ...spec, query: `${OLD}{partition="0"} * 1` } };
    expect(await replicas[0]!.source.reading(scaled, pipe('cg-old'), T)).toEqual({ value: 500, at: T });
  }, 60_000);

  it("judges a sample's age at its tick, however late the tick is evaluated: the query's lag is not taken off its age", async () => {
    const LATE = 'pipescaler_test_late_lag';
    exporter.set(LATE, { consumergroup: 'cg-late' }, 0, Date.now() - 40_000);
    await prom.waitFor(`count(${LATE})`, (r) => r[0]?.value === 1, 20_000);
    const spec = { ...lag.metric!, query: LATE, staleAfterMs: 30_000 };
    const late: Policy = { ...lag, name: 'late', metric: spec };
    const pipe: PipeConfig = { ...pipes[0]!, name: 'late', policy: 'late', labels: { consumerGroup: 'cg-late' } };
    // The tick was 35 s ago (a backlog; evaluations run up to 5 min late): the sample, 40 s old when
    // queried, must not pass for 5 s old and drive a scale-down to 0.
    const tick = T - 35_000;
    const reading = await replicas[0]!.source.reading(late, pipe, tick);
    expect(reading).toMatchObject({ value: 0 });
    expect(tick - (reading as { at: number }).at).toBeGreaterThanOrEqual(40_000);
    expect(readingProblem(reading, spec, tick)).toMatch(/old \(staleAfter 30s\)/);
  }, 60_000);
});
