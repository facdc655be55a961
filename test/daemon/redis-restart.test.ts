// Redis goes away mid-run and comes back (a separate redis-server of this test's own, never the
// shared one): the daemon stays up, reports not ready, reconnects, and converges.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import {
  DEMO,
  FAST_WORKERS,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  waitForEvent,
} from './helpers.js';

const PORT = 6390;
const URL = `redis://127.0.0.1:${PORT}`;
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
let server: ChildProcess | null = null;

async function startRedis(): Promise<void> {
  server = spawn('redis-server', ['--port', String(PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server on ${PORT} did not start: ${out}`)), 10_000);
    server!.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      if (/ready to accept connections/i.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    server!.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${out}`)));
  });
}

async function stopRedis(): Promise<void> {
  if (server?.exitCode !== null) return;
  const exited = once(server, 'exit');
  server.kill('SIGKILL');
  await exited;
  server = null;
}

afterAll(async () => {
  await stopRedis();
});

describe('Redis stopped and started again mid-run', () => {
  it('the daemon survives, reports readiness, reconnects and converges', async () => {
    await startRedis();
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    let clock = T0;
    const prefix = uniquePrefix('restart');
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 24 * 60 * MIN,
      pipes: [demoPipe('orders-events', 'streams')],
      policies: {
        streams: policy('streams', { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
          oneOff('peak', T0 + 10 * MIN, T0 + 20 * MIN, { replicas: 7 }),
        ]),
      },
    });
    const emitter = new DaemonEmitter();
    const statuses: boolean[] = [];
    emitter.on('redis:status', (s) => statuses.push(s.ready));
    const daemon = createDaemon({
      config,
      redisUrl: URL,
      prefix,
      now: () => clock,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    await daemon.start();
    try {
      await daemon.tick(T0);
      await drained([daemon]);
      expect(daemon.ready()).toBe(true);

      const down = waitForEvent(emitter, 'redis:status', (s) => !s.ready);
      await stopRedis();
      await down;
      expect(daemon.ready()).toBe(false);

      // A tick during the outage waits for Redis instead of failing or crashing.
      clock = T0 + 10 * MIN;
      const pendingTick = daemon.tick(clock);
      const up = waitForEvent(emitter, 'redis:status', (s) => s.ready);
      await startRedis();
      await up;
      await pendingTick;
      await drained([daemon], 30_000);
      // The new Redis is empty: the daemon sees its state lost (redis-guard.ts) and holds scaling
      // while it meets the pipe again; the next tick ends where the window says.
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(2);
      clock += 30_000;
      await daemon.tick(clock);
      await drained([daemon], 30_000);
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(7);
      expect(daemon.ready()).toBe(true);
      expect(statuses).toEqual([true, false, true]);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 60_000);
});
