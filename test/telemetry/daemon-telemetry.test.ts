// startDaemonTelemetry: the one call the daemon makes. Its events reach the metrics, the audit log
// and /readyz; its queues' BullMQ metrics are appended; each API client is bound on demand; close
// lets go of everything.
import { TEST_REDIS_URL } from '../test-redis.js';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClientEmitter } from '../../src/api/index.js';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import type { Config } from '../../src/config/types.js';
import {
  createLogger,
  startDaemonTelemetry,
  type DaemonTelemetry,
  type TelemetryConfigView,
} from '../../src/telemetry/index.js';
import { parseScrape, sampleValue, scrape } from './exposition-parse.js';
import { emitDaemonRun } from './run-events.js';

const PREFIX = `pst-telemetry-daemon-${process.pid}-${Date.now().toString(36)}`;

/** The loaded Config is what the daemon passes: it must fit (a compile-time check). */
export const configFits = (config: Config): TelemetryConfigView => config;

describe('startDaemonTelemetry', () => {
  const emitter = new DaemonEmitter();
  const lines: Record<string, unknown>[] = [];
  let config: TelemetryConfigView = {
    pipes: [
      { name: 'orders-events', policy: 'weekday-business-hours' },
      { name: 'nightly-s3', policy: 'nightly' },
      { name: 'users-cdc', policy: 'weekday-business-hours' },
    ],
    evaluate: { reconcileMs: 600_000 },
    telemetry: { listen: '127.0.0.1:0' },
  };
  let redis: Redis;
  let queue: Queue;
  let telemetry: DaemonTelemetry;

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    queue = new Queue('evaluate', { connection: redis, prefix: PREFIX });
    await queue.add('evaluate', { pipe: 'orders-events' });
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n'))
          if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    telemetry = await startDaemonTelemetry({
      emitter,
      logger: createLogger({ level: 'info', pretty: false, destination }),
      config: () => config,
      queues: () => [queue],
      version: '0.1.0',
    });
  });

  afterAll(async () => {
    await telemetry?.close();
    await queue.obliterate({ force: true });
    await queue.close();
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('listens where the config says and says so in the log', () => {
    expect(telemetry.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'telemetry listening (/metrics, /healthz, /readyz)', url: telemetry.url }),
    );
  });

  it('starts with the config in force counted as loaded and every configured pipe and result at 0 (issues 10.9, 12.1)', async () => {
    const s = parseScrape((await scrape(telemetry.url)).text);
    // The first load is a successful one: PipescalerConfigReloadFailed must not fire after a start.
    expect(sampleValue(s, 'pipescaler_config_last_reload_success')).toBe(1);
    expect(sampleValue(s, 'pipescaler_config_reloads_total', { result: 'failure' })).toBe(0);
    // per policy by default (telemetry.perPipeDetail: false)
    for (const policy of ['weekday-business-hours', 'nightly']) {
      for (const result of ['applied', 'failed', 'skipped', 'dry_run', 'none']) {
        expect(sampleValue(s, 'pipescaler_decision_results_total', { policy, result }), `${policy} ${result}`).toBe(0);
      }
    }
    expect(s.lines.filter((l) => l.startsWith('pipescaler_decision_results_total{')).join('\n')).not.toContain('pipe=');
  });

  it('binds a client under its key: its error series start at 0, its last success at the bind', async () => {
    const events = new ApiClientEmitter();
    const before = Date.now() / 1000;
    const unbind = telemetry.bindClient(events, 'other-org');
    let s = parseScrape((await scrape(telemetry.url)).text);
    expect(
      sampleValue(s, 'pipescaler_api_errors_total', {
        key: 'other-org',
        operation: 'scalePipe',
        code: 'API_NOT_FOUND',
      }),
    ).toBe(0);
    expect(
      sampleValue(s, 'pipescaler_api_last_success_timestamp_seconds', { key: 'other-org' }),
    ).toBeGreaterThanOrEqual(Math.floor(before));
    events.emit('request', {
      operation: 'scalePipe',
      method: 'PATCH',
      status: null,
      code: 'API_NETWORK',
      durationMs: 3,
      attempt: 1,
    });
    s = parseScrape((await scrape(telemetry.url)).text);
    expect(
      sampleValue(s, 'pipescaler_api_errors_total', { key: 'other-org', operation: 'scalePipe', code: 'API_NETWORK' }),
    ).toBe(1);
    expect(
      sampleValue(s, 'pipescaler_api_last_failure_timestamp_seconds', { key: 'other-org' }),
    ).toBeGreaterThanOrEqual(Math.floor(before));
    unbind();
  });

  it('is not ready until Redis is ready and the API has answered, then ready', async () => {
    const before = await fetch(`${telemetry.url}/readyz`);
    expect(before.status).toBe(503);
    expect(((await before.json()) as { failed: string[] }).failed).toEqual(['redis', 'api']);
    emitter.emit('redis:status', { ready: true });
    emitter.emit('api:contact', { at: Date.now() });
    expect((await fetch(`${telemetry.url}/readyz`)).status).toBe(200);
  });

  it("turns the daemon's events into metrics and audit lines, with the queue metrics appended", async () => {
    emitDaemonRun(emitter);
    const s = parseScrape((await scrape(telemetry.url)).text);
    expect(sampleValue(s, 'pipescaler_decisions_total', { policy: 'weekday-business-hours', result: 'applied' })).toBe(
      1,
    );
    expect(sampleValue(s, 'bullmq_job_count', { queue: 'evaluate', state: 'waiting' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_build_info', { version: '0.1.0' })).toBe(1);
    expect(
      sampleValue(s, 'pipescaler_decision_results_total', { policy: 'weekday-business-hours', result: 'applied' }),
    ).toBe(1);
    expect(lines.filter((l) => l.audit === true).map((l) => l.msg)).toContain('scaling applied');
  });

  it('drops a pipe removed by a reload', async () => {
    config = { ...config, pipes: [{ name: 'orders-events' }] };
    emitter.emit('config:reload', { result: 'success' });
    const text = (await scrape(telemetry.url)).text;
    expect(text).not.toMatch(/pipescaler_desired_scaling\{pipe="nightly-s3"/);
    expect(text).toMatch(/pipescaler_desired_scaling\{pipe="orders-events"/);
  });

  it('binds each API client on demand', async () => {
    const events = new ApiClientEmitter();
    telemetry.bindClient(events);
    events.emit('request', { operation: 'scalePipe', method: 'PATCH', status: 200, durationMs: 12, attempt: 1 });
    const s = parseScrape((await scrape(telemetry.url)).text);
    expect(
      sampleValue(s, 'pipescaler_api_request_duration_seconds_count', { operation: 'scalePipe', status: '200' }),
    ).toBe(1);
  });

  it('lets go of the emitter and the port on close', async () => {
    const events = new ApiClientEmitter();
    telemetry.bindClient(events);
    await telemetry.close();
    for (const name of ['decision', 'evaluation', 'redis:status', 'api:contact', 'config:reload'] as const) {
      expect(emitter.listenerCount(name), name).toBe(0);
    }
    expect(events.listenerCount('request')).toBe(0);
    await expect(fetch(`${telemetry.url}/healthz`)).rejects.toThrow();
  });
});
