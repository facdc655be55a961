// A key's rate limit and the API timeout follow a reload (Lanes.sync): the key's Worker takes the
// new concurrency and its budget the new limit, and the next request runs with the new timeout
// (only a changed secret used to get a new client).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../../src/daemon/index.js';
import { Lanes } from '../../../src/daemon/lanes/lanes.js';
import type { Config } from '../../../src/config/types.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  demoPipe,
  drained,
  policy,
  testConfig,
  uniquePrefix,
  waitForEvent,
} from '../helpers.js';

const prefix = uniquePrefix('lanes');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe("a reload of a key's rate limit and the API timeout", () => {
  it("takes effect on the key's lane at once", async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    // every scaling answer takes 400 ms
    cloud.setFaults({ scalePipe: { latency: { probability: 1, minMs: 400, maxMs: 400 } } });
    const configWith = (replicas: number, timeoutMs: number, requests: number): Config => {
      const c = testConfig({
        baseUrl: cloud.url,
        prefix,
        pipes: [demoPipe('orders-events', 'p')],
        rateLimit: { requests, perMs: 1_000 },
        policies: { p: policy('p', { replicas, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
      });
      return { ...c, api: { ...c.api, timeoutMs } };
    };
    const emitter = new DaemonEmitter();
    let clock = T0;
    // no concurrency in the worker options: the key's rate limit sets it
    const daemon = createDaemon({
      config: configWith(3, 5_000, 20),
      redis,
      prefix,
      now: () => clock,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    const applyWorker = () => daemon.workers().find((w) => w.name.startsWith('apply'))!;
    const reloads = collect(emitter, 'config:reload');
    try {
      await daemon.start();
      clock = T0;
      await daemon.tick(T0);
      await drained([daemon]);
      expect(cloud.store.pipe(demoPipe('orders-events', 'p').pipeId)!.scaling.replicas).toBe(3);
      expect(applyWorker().concurrency).toBe(20);

      expect(await daemon.reload(configWith(4, 150, 7))).toBe(true);
      expect(reloads.at(-1)!.changes).toMatchObject({
        keysChanged: ['default'],
        settingsChanged: ['api.timeout'],
        policiesChanged: ['p'],
      });
      expect(applyWorker().concurrency).toBe(7);
      // the next change runs with the 150 ms timeout: the 400 ms answer is a timeout now
      const timedOut = waitForEvent(
        emitter,
        'apply:retry',
        (r) => r.pipe === 'orders-events' && r.code === 'API_TIMEOUT',
        20_000,
      );
      clock = T0 + 60_000;
      await daemon.tick(clock);
      await timedOut;
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 60_000);
});

describe('a key renamed in the config', () => {
  it('keeps its queue and gets a client of its new name (metric labels, key checks)', async () => {
    const named: string[] = [];
    const lanes = new Lanes({
      redis,
      prefix,
      baseUrl: 'http://127.0.0.1:1',
      processor: async () => undefined,
      workerOptions: { autorun: false },
      onWorkerError: () => undefined,
      onClient: (_c, keyName) => named.push(keyName),
    });
    const key = { keyId: 'lanes-rename-key', keySecret: 's', rateLimit: { requests: 10, perMs: 10_000 } };
    const settings = { timeoutMs: 1_000 };
    try {
      lanes.sync({ old: key }, settings);
      const queue = lanes.get('old')!.queue;
      lanes.sync({ renamed: key }, settings);
      expect(lanes.get('old')).toBeUndefined();
      expect(lanes.get('renamed')).toMatchObject({ keyName: 'renamed' });
      expect(lanes.get('renamed')!.queue).toBe(queue);
      expect(named).toEqual(['old', 'renamed']);
      lanes.sync({ renamed: key }, settings);
      expect(named).toEqual(['old', 'renamed']);
    } finally {
      await lanes.closeClients();
      await Promise.all([...lanes.workers().map((w) => w.close()), ...lanes.queues().map((q) => q.close())]);
    }
  });
});
