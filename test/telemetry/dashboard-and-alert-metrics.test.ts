// Every metric the Grafana dashboard and the alert rules read is in /metrics after a short run:
// the daemon's and the client's events drive the bindings, a real BullMQ queue on the real Redis
// supplies the bullmq_* names, and the scrape goes over HTTP.
import { TEST_REDIS_URL } from '../test-redis.js';
import { EventEmitter } from 'node:events';
import { execFileSync, spawnSync } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import {
  Registry,
  bindClientEvents,
  bindConfirmationEvents,
  bindDaemonEvents,
  bindNotifyEvents,
  createConfirmationMetrics,
  createMetrics,
  createNotifyMetrics,
  createLogger,
  queueMetrics,
  startTelemetry,
  type TelemetryServer,
} from '../../src/telemetry/index.js';
import { bindEarlyCapacityEvents, createEarlyCapacityMetrics } from '../../src/telemetry/early-capacity-metrics.js';
import { PROMTOOL_BIN } from '../prometheus.js';
import { requireTool } from '../require-tool.js';
import { parseScrape, scrape, type Scrape } from './exposition-parse.js';
import { dashboardMetricNames, missing, ruleMetricNames, untilGcObserved } from './metric-coverage.js';
import { emitClientRun, emitDaemonRun } from './run-events.js';

const PREFIX = `pst-telemetry-cov-${process.pid}-${Date.now().toString(36)}`;
const hasPromtool = requireTool(PROMTOOL_BIN, 'prometheus');
const dashboardNames = dashboardMetricNames();
const ruleNames = ruleMetricNames();

describe('metrics used by the dashboard and the alert rules', () => {
  let redis: Redis;
  let queues: Queue[];
  let server: TelemetryServer;
  let scraped: Scrape;
  let text: string;

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queues = [
      new Queue('evaluate', { connection: redis, prefix: PREFIX }),
      new Queue('apply-default', { connection: redis, prefix: PREFIX }),
    ];
    await queues[0]!.add('evaluate', { pipe: 'orders-events' }, { jobId: 'orders-events-1795420800' });
    await queues[1]!.add('change', { pipe: 'orders-events' }, { delay: 60_000 });

    const registry = new Registry();
    const metrics = createMetrics(registry, { version: '0.1.0' });
    const emitter = new DaemonEmitter();
    const clientEvents = new EventEmitter();
    bindDaemonEvents(emitter, metrics);
    // the configured sinks' dead-letter counters start at 0
    bindNotifyEvents(emitter, createNotifyMetrics(registry), () => ['ops']);
    bindClientEvents(clientEvents, metrics);
    bindConfirmationEvents(emitter, createConfirmationMetrics(registry), createLogger({ level: 'silent' }));
    bindEarlyCapacityEvents(emitter, createEarlyCapacityMetrics(registry), undefined, () => ['orders-events']);
    server = await startTelemetry({
      listen: '127.0.0.1:0',
      registry,
      readiness: () => ({ redis: true, config: true, api: true }),
      extraMetrics: queueMetrics(() => queues),
    });
    emitDaemonRun(emitter);
    emitClientRun(clientEvents);
    await untilGcObserved(async () => (await registry.metrics()).includes('nodejs_gc_duration_seconds_sum{'));
    const res = await scrape(server.url);
    expect(res.status).toBe(200);
    expect(res.contentType).toMatch(/^text\/plain/);
    text = res.text;
    scraped = parseScrape(text);
  });

  afterAll(async () => {
    await server?.close();
    for (const q of queues ?? []) {
      await q.obliterate({ force: true });
      await q.close();
    }
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('finds the metric names in the PromQL (the extraction itself works)', () => {
    expect(dashboardNames).toContain('pipescaler_api_request_duration_seconds_bucket');
    expect(dashboardNames).toContain('pipescaler_desired_scaling');
    expect(dashboardNames).toContain('bullmq_job_count');
    expect(dashboardNames).toContain('pipescaler_actuation_seconds_bucket');
    expect(dashboardNames).toContain('pipescaler_pipe_actuation_seconds');
    expect(dashboardNames).toContain('pipescaler_evaluations_total'); // the $pipe template query
    expect(dashboardNames).not.toContain('le');
    expect(dashboardNames).not.toContain('pipe');
    for (const name of [
      'pipescaler_decision_results_total',
      'pipescaler_desired_scaling',
      'pipescaler_applied_scaling',
      'pipescaler_api_errors_total',
      'pipescaler_api_last_success_timestamp_seconds',
      'pipescaler_api_last_failure_timestamp_seconds',
      'pipescaler_rate_limit_pauses_total',
      'pipescaler_ready',
      'pipescaler_last_evaluation_timestamp_seconds',
      'pipescaler_parked',
      'pipescaler_config_last_reload_success',
      'pipescaler_pipe_unconfirmed',
    ])
      expect(ruleNames).toContain(name);
  });

  it('has a sample of every metric the dashboard reads', () => {
    expect(missing(dashboardNames, scraped)).toEqual([]);
  });

  it('has a sample of every metric the alert rules read', () => {
    expect(missing(ruleNames, scraped)).toEqual([]);
  });

  it("appends BullMQ's export with one HELP and TYPE per family", () => {
    expect(text).toContain('bullmq_job_count{queue="evaluate", state="waiting"} 1');
    expect(text).toContain('bullmq_job_count{queue="apply-default", state="delayed"} 1');
    expect(text.match(/^# TYPE bullmq_job_count gauge$/gm)).toHaveLength(1);
    expect(text).toContain('pipescaler_extra_metrics_up 1');
  });

  it('keeps labels bounded: unknown reasons and operations become "other"', () => {
    expect(text).toContain('reason="other"');
    expect(text).toContain('operation="other"');
    expect(text).not.toContain('/v1/organizations');
  });

  it.skipIf(!hasPromtool)('passes promtool check metrics for every pipescaler_ family', () => {
    // promtool lints names we do not own too (bullmq_job_count, nodejs_*_total): only ours must be clean.
    const run = spawnSync(PROMTOOL_BIN, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const report = `${run.stdout}${run.stderr}`;
    expect(report).not.toMatch(/error/i);
    expect(report.split('\n').filter((l) => l.includes('pipescaler_'))).toEqual([]);
    expect(execFileSync(PROMTOOL_BIN, ['--version'], { encoding: 'utf8' })).toMatch(/promtool/);
  });
});
