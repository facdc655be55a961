// Every metric the Grafana dashboard and the alert rules read has a sample in /metrics after a
// short REAL run: the shipped config, a daemon in-process against the embedded cloud over HTTP,
// wired to telemetry as `pipescaler run` wires it, with real errors along the way (500 and 429 on
// scalePipe, a drift, a refused reload, a pause, a pipe parked by a key the platform refuses).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { configSecrets, createLogger, startDaemonTelemetry, type DaemonTelemetry } from '../../src/telemetry/index.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  drained,
  uniquePrefix,
  waitForEvent,
  pipeOf,
} from '../daemon/helpers.js';
import { parseScrape, sampleValue, scrape, type Scrape } from './exposition-parse.js';
import { dashboardMetricNames, missing, ruleMetricNames, untilGcObserved } from './metric-coverage.js';

const prefix = uniquePrefix('runmetrics');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-runmetrics-'));
/** Monday 10:00 in Berlin: business-hours is on, so the stream pipes scale up in steps. */
const T0 = Date.parse('2026-11-23T09:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
const FAST = { requests: 1_000, perMs: 1_000 };
/** The pipe whose key the platform does not know: it fails auth at every tick until parked. */
const BROKEN_PIPE = 'legacy-events';

describe('a short real run against the embedded cloud', () => {
  let cloud: EmbeddedCloud;
  let daemon: Daemon;
  let telemetry: DaemonTelemetry;
  let emitter: DaemonEmitter;
  let clock = T0;
  let scraped: Scrape;
  let text: string;
  let appliedAtLastTick: string[] = [];
  let applyStartsAtLastTick: string[] = [];

  const tick = async (at: number) => {
    clock = at;
    await daemon.tick(at);
    await drained([daemon], 30_000);
  };

  beforeAll(async () => {
    // A short platform window, so the injected 429 holds the key's queue for a second, not ten.
    cloud = await startCloud({
      fixtures: 'config/cloud.yaml',
      port: 0,
      rateLimit: { requests: 1_000, perMs: 1_000 },
      random: () => 0,
    });
    const shipped = loadConfig('config/pipescaler.yaml', {});
    const keys: Config['api']['keys'] = {
      default: { keyId: DEMO.keyId, keySecret: DEMO.keySecret, rateLimit: FAST },
      broken: { keyId: 'pipescaler-unknown-key', keySecret: 'not-the-secret', rateLimit: FAST },
    };
    let config: Config = {
      ...shipped,
      api: { ...shipped.api, keys },
      redis: { ...shipped.redis, prefix },
      telemetry: { ...shipped.telemetry, logLevel: 'silent' },
      pipes: shipped.pipes.map((p) => (p.name === BROKEN_PIPE ? { ...p, key: 'broken' } : p)),
      // a sink, so its dead-letter series (PipescalerNotifySinkFailing) exists; its batches are due
      // after the run
      notify: {
        coalesceMs: 3_600_000,
        sinks: [
          {
            name: 'ops',
            type: 'webhook',
            url: 'http://127.0.0.1:9/hook',
            secret: 'notify-secret',
            events: null,
            pipes: null,
            severity: 'info',
            timeoutMs: 1_000,
            attempts: 1,
            backoffMs: 1_000,
          },
        ],
      },
    };
    const configPath = join(dir, 'pipescaler.yaml');
    writeFileSync(configPath, 'pipes: [\n'); // what a reload reads: refused

    // As src/cli/commands/daemon.ts run() does it.
    const logger = createLogger({ level: 'silent', secrets: () => configSecrets(config) });
    emitter = new DaemonEmitter();
    emitter.on('config:reload', (r) => {
      if (r.result === 'success') config = daemon.config();
    });
    telemetry = await startDaemonTelemetry({
      emitter,
      logger,
      config: () => config,
      queues: () => daemon.queues(),
      listen: '127.0.0.1:0',
    });
    daemon = createDaemon({
      config,
      configPath,
      watch: false,
      redis,
      prefix,
      emitter,
      logger,
      now: () => clock,
      schedule: false,
      api: { baseUrl: cloud.url, keys },
      workerOptions: FAST_WORKERS,
      onClient: (client) => telemetry.bindClient(client.events),
    });
    await daemon.start();

    const parked = waitForEvent(emitter, 'parked', (p) => p.pipe === BROKEN_PIPE, 60_000);

    // First contact: every pipe is read.
    await tick(T0);

    // A 500 on scalePipe: the apply job is retried by BullMQ, then goes through. Every change was
    // applied at first contact, so make the daemon believe clickstream still runs its fixture's
    // scaling: the next tick applies the baseline again.
    await daemon.store.write('clickstream', {
      applied: { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 },
    });
    cloud.setFaults({ scalePipe: { error500: 1 } });
    const retried = waitForEvent(emitter, 'apply:retry', () => true, 20_000);
    await daemon.tick((clock = T0 + 30 * SEC));
    await retried;
    cloud.setFaults({});
    await drained([daemon], 30_000);

    // A 429: the key's queue waits for the platform's window, then the job goes through.
    cloud.setFaults({ scalePipe: { error429: 1 } });
    const limited = waitForEvent(emitter, 'rate-limited', () => true, 20_000);
    await daemon.tick((clock = T0 + 2 * MIN));
    await limited;
    cloud.setFaults({});
    await drained([daemon], 30_000);

    // A pause through the shared state, as `pipescaler pause` sets it.
    await daemon.store.operator.setPause(pipeOf(daemon, 'nightly-s3'), { reason: 'maintenance' });
    const paused = waitForEvent(emitter, 'paused', (p) => p.pipe === 'nightly-s3' && p.paused);
    await tick(T0 + 3 * MIN);
    await paused;

    // Someone scales a pipe by hand; the reconcile read past the interval finds it.
    cloud.store.pipe(DEMO.pipes.clickstream)!.scaling.replicas = 1;
    const drift = waitForEvent(emitter, 'drift', (d) => d.pipe === 'clickstream', 30_000);
    await tick(T0 + 3 * MIN + shipped.evaluate.reconcileMs);
    await drift;
    await parked;

    // A broken file is refused; the running config stays.
    const refused = waitForEvent(emitter, 'config:reload');
    expect(await daemon.reload()).toBe(false);
    expect((await refused).result).toBe('failure');

    // A tick with no read due: the applied gauges still come from the shared state at evaluation.
    const applied = collect(emitter, 'applied');
    const applyStarts = collect(emitter, 'apply:start');
    await tick(T0 + 4 * MIN + shipped.evaluate.reconcileMs);
    appliedAtLastTick = applied.map((a) => a.pipe);
    applyStartsAtLastTick = applyStarts.map((a) => a.pipe);

    await untilGcObserved(async () => (await telemetry.registry.metrics()).includes('nodejs_gc_duration_seconds_sum{'));
    const res = await scrape(telemetry.url);
    expect(res.status).toBe(200);
    text = res.text;
    scraped = parseScrape(text);
  }, 120_000);

  afterAll(async () => {
    await daemon?.stop({ timeoutMs: 5_000 });
    await telemetry?.close();
    await cloud?.close();
    rmSync(dir, { recursive: true, force: true });
    await cleanupPrefix(redis, prefix);
    redis.disconnect();
  });

  it('has a sample of every metric the dashboard reads', () => {
    expect(missing(dashboardMetricNames(), scraped)).toEqual([]);
  });

  it('has a sample of every metric the alert rules read', () => {
    expect(missing(ruleMetricNames(), scraped)).toEqual([]);
  });

  it("counts the run's real errors", () => {
    expect(sampleValue(scraped, 'pipescaler_api_errors_total', { code: 'API_SERVER_ERROR' })).toBeGreaterThan(0);
    expect(sampleValue(scraped, 'pipescaler_api_rate_limited_total')).toBeGreaterThan(0);
    // kept per policy and per key without telemetry.perPipeDetail
    expect(sampleValue(scraped, 'pipescaler_drift_total', { policy: 'clickstream-launch' })).toBeGreaterThan(0);
    expect(sampleValue(scraped, 'pipescaler_parked', { key: 'broken' })).toBe(1);
    expect(scraped.lines.filter((l) => l.startsWith('pipescaler_parked{') && l.includes('pipe='))).toEqual([]);
    expect(sampleValue(scraped, 'pipescaler_paused', { pipe: 'nightly-s3' })).toBe(1);
    expect(sampleValue(scraped, 'pipescaler_config_last_reload_success')).toBe(0);
    expect(sampleValue(scraped, 'bullmq_job_failed_total', { queue: 'apply-pipescaler-unknown-key' })).toBeGreaterThan(
      0,
    );
    expect(sampleValue(scraped, 'bullmq_job_completed_total', { queue: 'apply-pipescaler-demo-key' })).toBeGreaterThan(
      0,
    );
  });

  it('reports applied scaling at every evaluation, not only where an apply or read ran', () => {
    expect(applyStartsAtLastTick).not.toContain('nightly-s3'); // paused: nothing sent
    expect(appliedAtLastTick).toEqual(
      expect.arrayContaining(['orders-events', 'payments-msk', 'clickstream', 'nightly-s3']),
    );
    expect(appliedAtLastTick).not.toContain(BROKEN_PIPE); // parked: never read, nothing known
  });

  it('never exposes a secret', () => {
    expect(text).not.toContain(DEMO.keySecret);
    expect(text).not.toContain('not-the-secret');
  });
});
