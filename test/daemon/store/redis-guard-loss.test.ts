// The span of a Redis state loss (redis-guard.ts lastLoss): from the replica that found the marker
// gone to the first one that found every pipe read again, which says so in the marker. Another
// replica holds until it checks for itself; one started afterwards knows the span and does not hold
// again. Window verdicts around the loss are judged by that span (verdicts.ts). Real Redis, one
// prefix, the clock injected.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/daemon/model/logger.js';
import { DaemonEmitter } from '../../../src/daemon/model/events.js';
import { RedisGuard } from '../../../src/daemon/store/redis-guard.js';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../helpers.js';

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const prefix = uniquePrefix('guard-loss');
const keys = redisKeys(prefix);

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('the span of a Redis state loss', () => {
  it('from the loss to every pipe read again, in the marker for every replica, one started later too', async () => {
    let clock = 1_000;
    const guard = () => new RedisGuard(redis, keys, new DaemonEmitter(), silentLogger, () => clock);
    const store = new StateStore(redis, prefix);
    const a = guard();
    await a.start();
    expect(a.lastLoss()).toBeNull();

    // the state is gone; replica a notices at its tick, b (started after) from the marker
    await redis.del(keys.marker);
    clock = 2_000;
    await a.check(['p']);
    expect(a.held()).toBe('data_lost');
    expect(a.lastLoss()).toEqual({ from: 2_000, to: null });
    clock = 2_500;
    const b = guard();
    await b.start();
    expect(b.held()).toBe('data_lost');
    expect(b.lastLoss()).toEqual({ from: 2_000, to: null });

    // the pipe read again: a's next tick ends the hold and writes when into the marker
    await store.write('p', { lastReadAt: 3_000 });
    clock = 3_500;
    await a.check(['p']);
    expect(a.held()).toBeNull();
    expect(a.lastLoss()).toEqual({ from: 2_000, to: 3_500 });
    expect(JSON.parse((await redis.get(keys.marker))!)).toMatchObject({ lostAt: 2_000, rebuiltAt: 3_500 });

    // b still held until it checks for itself; the span is a's
    clock = 4_000;
    await b.check(['p']);
    expect(b.held()).toBeNull();
    expect(b.lastLoss()).toEqual({ from: 2_000, to: 3_500 });
    expect(JSON.parse((await redis.get(keys.marker))!)).toMatchObject({ lostAt: 2_000, rebuiltAt: 3_500 });

    // a replica started afterwards does not hold for a loss already over, and knows its span
    clock = 9_000;
    const c = guard();
    await c.start();
    expect(c.held()).toBeNull();
    expect(c.lastLoss()).toEqual({ from: 2_000, to: 3_500 });

    // a new loss starts a new span
    await redis.del(keys.marker);
    clock = 10_000;
    await c.check(['p']);
    expect(c.lastLoss()).toEqual({ from: 10_000, to: null });
  });
});
