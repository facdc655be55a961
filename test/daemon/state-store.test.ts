// The pipe record in Redis: snapshot() reads the record and the pause that applies in one command.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/daemon/state-store.js';
import { pipeByName } from '../../src/daemon/context.js';
import { cleanupPrefix, REDIS_URL, uniquePrefix } from './helpers.js';
import type { Config } from '../../src/policy/types.js';

const prefix = uniquePrefix('state-store');
let redis: Redis;
let store: StateStore;

beforeAll(() => {
  redis = new Redis(REDIS_URL);
  store = new StateStore(redis, prefix);
});

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  await redis.quit();
});

describe('StateStore.snapshot', () => {
  it('an unknown pipe is the empty record, not paused', async () => {
    const { rec, pause } = await store.snapshot('never-seen');
    expect(rec).toMatchObject({ kind: null, applied: {}, desired: null, recommendations: [], lastError: null, drifts: 0 });
    expect(pause).toBeNull();
  });

  it('reads back what write() and increment() stored, and ignores fields it does not know', async () => {
    await store.write('p1', { kind: 'stream', applied: { replicas: 2 }, desired: { replicas: 3 }, lastReadAt: 1_000 });
    await store.increment('p1', 'drifts');
    await redis.hset(store.keys.pipe('p1'), 'stranger', '"x"');
    const { rec } = await store.snapshot('p1');
    expect(rec).toMatchObject({ kind: 'stream', applied: { replicas: 2 }, desired: { replicas: 3 }, lastReadAt: 1_000, drifts: 1 });
    expect(rec).not.toHaveProperty('stranger');
    expect(await store.read('p1')).toEqual(rec);
  });

  it('a pipe\'s own pause wins over the fleet-wide one, which applies otherwise', async () => {
    await store.setPause(null, { reason: 'freeze' });
    await store.setPause('p2', { reason: 'own', until: Date.now() + 60_000 });
    expect((await store.snapshot('p2')).pause).toMatchObject({ reason: 'own', scope: 'pipe' });
    expect((await store.snapshot('p3')).pause).toEqual({ reason: 'freeze', scope: 'all' });
    expect(await store.pause('p3')).toEqual({ reason: 'freeze', scope: 'all' });
    await store.clearPause(null, ['p2']);
    expect((await store.snapshot('p2')).pause).toBeNull();
  });
});

describe('pipeByName', () => {
  it('finds a pipe by name in each config it is given, including one loaded after the first', () => {
    const a = { pipes: [{ name: 'x', policy: 'p1' }, { name: 'y', policy: 'p1' }] } as unknown as Config;
    const b = { pipes: [{ name: 'x', policy: 'p2' }] } as unknown as Config;
    expect(pipeByName(a, 'y')?.policy).toBe('p1');
    expect(pipeByName(b, 'x')?.policy).toBe('p2');
    expect(pipeByName(b, 'y')).toBeUndefined();
    expect(pipeByName(a, 'x')?.policy).toBe('p1');
  });
});
