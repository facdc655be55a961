// A daemon dies in the middle of an apply (its Redis connection cut and its workers closed by
// force while a proxy in front of the cloud still holds the request): the job's lock expires, another daemon's
// stalled check puts it back, and the pipe converges.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, refOf } from '../../src/daemon/index.js';
import { tamperProxy } from './tamper-proxy.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  drained,
  policy,
  testConfig,
  uniquePrefix,
  waitForEvent,
} from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const prefix = uniquePrefix('stalled');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('a worker killed mid-apply', () => {
  it('has its job recovered by another daemon, and the pipe converges', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    // The proxy holds the first change until the doomed daemon is dead, then lets it through.
    const proxy = await tamperProxy(cloud.url);
    let arrived!: () => void;
    let release!: () => void;
    const inFlight = new Promise<void>((r) => (arrived = r));
    const released = new Promise<void>((r) => (release = r));
    let held = false;
    proxy.tamper = async (req, upstream) => {
      if (req.method === 'PATCH' && req.body.includes('"replicas":4') && !held) {
        held = true;
        arrived();
        await released;
      }
      return upstream();
    };
    const config = testConfig({
      baseUrl: proxy.url,
      prefix,
      reconcileMs: 24 * 3_600_000,
      pipes: [demoPipe('orders-events', 'streams')],
      policies: { streams: policy('streams', { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
    });
    const doomedRedis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    doomedRedis.on('error', () => {});
    const doomedEvents = new DaemonEmitter();
    const doomed = createDaemon({
      config,
      redis: doomedRedis,
      prefix,
      now: () => T0,
      emitter: doomedEvents,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    await doomed.store.write('orders-events', {
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      lastReadAt: T0,
      ref: refOf(config.pipes[0]!),
    });
    await doomed.start();
    await doomed.tick(T0);
    await inFlight;
    // "kill -9": no more Redis for it (no lock renewal, no completion), workers gone by force.
    doomedRedis.disconnect();
    await Promise.all(doomed.workers().map((w) => w.close(true)));
    release();
    const rescuerEvents = new DaemonEmitter();
    const rescuer = createDaemon({
      config,
      redis,
      prefix,
      now: () => T0,
      emitter: rescuerEvents,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    const applied = waitForEvent(rescuerEvents, 'decision', (d) => d.result === 'applied', 20_000);
    await rescuer.start();
    const stalled: string[] = [];
    for (const w of rescuer.workers()) w.on('stalled', (id) => stalled.push(id));
    try {
      const d = await applied;
      expect(d).toMatchObject({ pipe: 'orders-events', after: { replicas: 4 } });
      expect(stalled).toHaveLength(1);
      await drained([rescuer]);
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(4);
      const status = await rescuer.status();
      expect(status.pipes[0]!.applied).toMatchObject({ replicas: 4 });
    } finally {
      await rescuer.stop({ timeoutMs: 2_000 });
      await doomed.stop({ timeoutMs: 100 });
      await proxy.close();
      await cloud.close();
    }
  }, 40_000);
});
