// A daemon replica's heartbeat: a key of its own with an expiry, written at start and every 10 s,
// deleted at stop; readReplicas() lists the live ones and forgets those whose key expired.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../../src/daemon/index.js';
import { Heartbeat, HEARTBEAT_TTL_MS, readReplicas } from '../../../src/daemon/store/heartbeat.js';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { VERSION } from '../../../src/version.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from '../helpers.js';

const prefix = uniquePrefix('heartbeat');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const keys = redisKeys(prefix);

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('Heartbeat', () => {
  it("writes the replica's key with an expiry of three beats, and deletes it at stop", async () => {
    const beat = new Heartbeat(redis, keys, 'r1', () => ({ pipes: 7, dryRun: true }));
    const before = Date.now();
    await beat.beat();
    const ttl = await redis.pttl(keys.replica('r1'));
    expect(ttl).toBeGreaterThan(HEARTBEAT_TTL_MS - 5_000);
    expect(ttl).toBeLessThanOrEqual(HEARTBEAT_TTL_MS);
    const [alive] = await readReplicas(redis, keys);
    expect(alive).toMatchObject({ id: 'r1', pid: process.pid, version: VERSION, pipes: 7, dryRun: true });
    expect(alive!.at).toBeGreaterThanOrEqual(before);
    await beat.stop();
    expect(await redis.exists(keys.replica('r1'))).toBe(0);
    expect(await readReplicas(redis, keys)).toEqual([]);
  });

  it('lists the live replicas newest beat first and forgets one whose key expired', async () => {
    // b beats a millisecond after a (two beats in the same millisecond would tie)
    const t = Date.now();
    const a = new Heartbeat(
      redis,
      keys,
      'a',
      () => ({ pipes: 1, dryRun: false }),
      () => t,
    );
    const b = new Heartbeat(
      redis,
      keys,
      'b',
      () => ({ pipes: 1, dryRun: false }),
      () => t + 1,
    );
    await a.beat();
    await b.beat();
    expect((await readReplicas(redis, keys)).map((r) => r.id)).toEqual(['b', 'a']);
    // a replica that died: its key expires (here: is removed), its id is forgotten at the next read
    await redis.del(keys.replica('a'));
    expect((await readReplicas(redis, keys)).map((r) => r.id)).toEqual(['b']);
    expect(await redis.smembers(keys.replicas)).toEqual(['b']);
    await b.stop();
  });

  it('skips a replica key whose value is not a beat (not JSON, or another shape)', async () => {
    const c = new Heartbeat(redis, keys, 'c', () => ({ pipes: 2, dryRun: false }));
    await c.beat();
    await redis.sadd(keys.replicas, 'junk', 'shape');
    await redis.set(keys.replica('junk'), 'not json', 'PX', 60_000);
    await redis.set(keys.replica('shape'), JSON.stringify({ id: 'shape', at: 'yesterday' }), 'PX', 60_000);
    expect((await readReplicas(redis, keys)).map((r) => r.id)).toEqual(['c']);
    await c.stop();
    await redis.del(keys.replica('junk'), keys.replica('shape'));
  });
});

describe("the daemon's heartbeat", () => {
  it('is there from start to stop', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes: [demoPipe('orders-events', 'p')],
      policies: { p: policy('p', { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
    });
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      emitter: new DaemonEmitter(),
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await daemon.start();
      await until(async () => (await readReplicas(redis, keys)).length === 1, 10_000, 'the heartbeat');
      expect((await readReplicas(redis, keys))[0]).toMatchObject({ pipes: 1, dryRun: false });
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
    expect(await readReplicas(redis, keys)).toEqual([]);
  });
});
