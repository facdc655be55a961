// resetDemoState: a start on the embedded cloud wipes its prefix's state only when the marker says
// it is the embedded demo's and no replica is alive on it; a real deployment's state is never
// touched. Real Redis, one prefix per case.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/daemon/model/logger.js';
import { DemoConflict, resetDemoState } from '../../../src/daemon/store/demo-state.js';
import { DaemonEmitter } from '../../../src/daemon/model/events.js';
import { Heartbeat } from '../../../src/daemon/store/heartbeat.js';
import { RedisGuard } from '../../../src/daemon/store/redis-guard.js';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../helpers.js';

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const prefixes: string[] = [];

afterAll(async () => {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
});

/** A prefix holding a previous run's state: a pipe record, a BullMQ key, and the marker its guard wrote. */
async function previousRun(demo: boolean): Promise<{ prefix: string; keys: ReturnType<typeof redisKeys> }> {
  const prefix = uniquePrefix('demo-state');
  prefixes.push(prefix);
  const keys = redisKeys(prefix);
  await new RedisGuard(redis, keys, new DaemonEmitter(), silentLogger, () => 1, demo).start();
  await redis.hset(keys.pipe('clickstream'), { applied: '{"replicas":6}' });
  await redis.set(`${prefix}:evaluate:meta`, 'x');
  return { prefix, keys };
}

const count = async (prefix: string) => (await redis.keys(`${prefix}:*`)).length;

describe('resetDemoState', () => {
  it("wipes a stopped demo's keys, ours and BullMQ's", async () => {
    const { prefix, keys } = await previousRun(true);
    expect(await resetDemoState(redis, prefix, keys, silentLogger)).toBe('wiped');
    expect(await count(prefix)).toBe(0);
  });

  it("never touches state its marker does not call the demo's (a real deployment's)", async () => {
    const { prefix, keys } = await previousRun(false);
    const before = await count(prefix);
    expect(await resetDemoState(redis, prefix, keys, silentLogger)).toBe('kept:not_demo');
    expect(await count(prefix)).toBe(before);
    expect(await redis.hget(keys.pipe('clickstream'), 'applied')).toBe('{"replicas":6}');
  });

  it('keeps a demo another replica is running', async () => {
    const { prefix, keys } = await previousRun(true);
    const beat = new Heartbeat(redis, keys, 'other-replica', () => ({ pipes: 1, dryRun: false }));
    beat.start();
    try {
      await expect.poll(() => redis.exists(keys.replica('other-replica'))).toBe(1);
      expect(await resetDemoState(redis, prefix, keys, silentLogger)).toBe('kept:alive');
      expect(await redis.hget(keys.pipe('clickstream'), 'applied')).toBe('{"replicas":6}');
    } finally {
      await beat.stop();
    }
  });

  it('refuses a second embedded demo on the prefix of one that runs, naming it', async () => {
    const { prefix, keys } = await previousRun(true);
    const beat = new Heartbeat(redis, keys, 'running-demo', () => ({
      pipes: 10,
      dryRun: false,
      embedded: { url: 'http://127.0.0.1:40001', adminToken: 't' },
    }));
    beat.start();
    try {
      await expect.poll(() => redis.exists(keys.replica('running-demo'))).toBe(1);
      await expect(resetDemoState(redis, prefix, keys, silentLogger)).rejects.toThrow(
        new RegExp(
          `^another embedded demo is running on the Redis prefix "${prefix}" \\(pid ${process.pid} on .*its cloud at http://127\\.0\\.0\\.1:40001\\)`,
        ),
      );
      await expect(resetDemoState(redis, prefix, keys, silentLogger)).rejects.toBeInstanceOf(DemoConflict);
      expect(await redis.hget(keys.pipe('clickstream'), 'applied')).toBe('{"replicas":6}');
    } finally {
      await beat.stop();
    }
  });

  it('has nothing to do on a prefix never used', async () => {
    const prefix = uniquePrefix('demo-state');
    expect(await resetDemoState(redis, prefix, redisKeys(prefix), silentLogger)).toBe('fresh');
  });
});
