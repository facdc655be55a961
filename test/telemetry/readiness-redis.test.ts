// /readyz follows Redis: 503 naming the redis check while a (separate, test-owned) redis-server is
// down, 200 again once ioredis has reconnected. /healthz stays 200 and /metrics keeps answering,
// with pipescaler_ready 0, even though the BullMQ export cannot reach Redis.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import {
  Registry,
  createMetrics,
  createReadiness,
  queueMetrics,
  startTelemetry,
  type TelemetryServer,
} from '../../src/telemetry/index.js';
import { parseScrape, sampleValue, scrape } from './exposition-parse.js';

// Never the shared Redis on 6379: this test stops and starts its own.
const PORT = 6391;
const PREFIX = `pst-telemetry-ready-${process.pid}`;

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function startRedisServer(): ChildProcess {
  const child = spawn(
    'redis-server',
    ['--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  child.on('error', (err) => console.error(`redis-server on port ${PORT} failed to start: ${err.message}`));
  return child;
}

async function stopRedisServer(child: ChildProcess | undefined): Promise<void> {
  if (child?.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

async function readyz(
  url: string,
): Promise<{ status: number; body: { status: string; failed: string[]; checks: Record<string, string> } }> {
  const res = await fetch(`${url}/readyz`);
  return {
    status: res.status,
    body: (await res.json()) as { status: string; failed: string[]; checks: Record<string, string> },
  };
}

describe('/readyz follows Redis', () => {
  let redisServer: ChildProcess | undefined;
  let redis: Redis;
  let queue: Queue;
  let server: TelemetryServer;
  const emitter = new DaemonEmitter();

  beforeAll(async () => {
    if (spawnSync('redis-server', ['--version']).status !== 0) {
      throw new Error(
        'redis-server is not installed: this test starts its own on port 6391 (apt-get install redis-server)',
      );
    }
    redisServer = startRedisServer();
    redis = new Redis({
      host: '127.0.0.1',
      port: PORT,
      maxRetriesPerRequest: null,
      lazyConnect: true,
      retryStrategy: () => 100,
    });
    redis.on('error', () => {}); // connection errors are the point of this test; 'close' carries them
    // The daemon's wiring of its connection to the readiness check, through its events.
    redis.on('ready', () => emitter.emit('redis:status', { ready: true }));
    redis.on('close', () => emitter.emit('redis:status', { ready: false }));
    redis.connect().catch(() => {}); // the retry strategy keeps trying until the server listens
    await waitFor('the test redis-server to accept connections', async () =>
      redis.status === 'ready' ? true : undefined,
    );

    queue = new Queue('evaluate', {
      connection: { host: '127.0.0.1', port: PORT, retryStrategy: () => 100 },
      prefix: PREFIX,
    });
    queue.on('error', () => {});
    const registry = new Registry();
    createMetrics(registry, { defaultMetrics: false });
    const readiness = createReadiness(emitter, {
      reconcileMs: 600_000,
      configLoaded: true,
      redisReady: redis.status === 'ready',
    });
    emitter.emit('api:contact', { at: Date.now() });
    server = await startTelemetry({
      listen: '127.0.0.1:0',
      registry,
      readiness: readiness.report,
      extraMetrics: queueMetrics(() => [queue]),
      extraMetricsTimeoutMs: 300,
    });
  });

  afterAll(async () => {
    await server?.close();
    await queue?.close().catch(() => {});
    redis?.disconnect();
    await stopRedisServer(redisServer);
  });

  it('is ready while Redis is up', async () => {
    const r = await readyz(server.url);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready', failed: [], checks: { redis: 'ok', config: 'ok', api: 'ok' } });
  });

  it('answers 503 naming redis while Redis is down, and keeps /healthz and /metrics up', async () => {
    await stopRedisServer(redisServer);
    const down = await waitFor('a 503 from /readyz', async () => {
      const r = await readyz(server.url);
      return r.status === 503 ? r : undefined;
    });
    expect(down.body).toEqual({
      status: 'not ready',
      failed: ['redis'],
      checks: { redis: 'failed', config: 'ok', api: 'ok' },
    });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    const started = Date.now();
    const m = await scrape(server.url);
    expect(Date.now() - started).toBeLessThan(5_000); // the BullMQ export is cut off, not waited for
    expect(m.status).toBe(200);
    const s = parseScrape(m.text);
    expect(sampleValue(s, 'pipescaler_ready')).toBe(0);
    expect(sampleValue(s, 'pipescaler_ready_check', { check: 'redis' })).toBe(0);
    expect(sampleValue(s, 'pipescaler_ready_check', { check: 'api' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_extra_metrics_up')).toBe(0);
  });

  it('answers 200 again once Redis is back and the connection is ready', async () => {
    redisServer = startRedisServer();
    const up = await waitFor('a 200 from /readyz', async () => {
      const r = await readyz(server.url);
      return r.status === 200 ? r : undefined;
    });
    expect(up.body.failed).toEqual([]);
    expect(await redis.ping()).toBe('PONG');
    const s = parseScrape((await scrape(server.url)).text);
    expect(sampleValue(s, 'pipescaler_ready')).toBe(1);
  });
});
