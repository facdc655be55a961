// The pipe record in Redis: snapshot() reads the record and the pause that applies in one command.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/daemon/state-store.js';
import { pipeByName } from '../../src/daemon/context.js';
import { KeyBudget } from '../../src/daemon/budget.js';
import { cleanupPrefix, REDIS_URL, uniquePrefix, until } from './helpers.js';
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

describe('Lua scripts', () => {
  it('go by digest (EVALSHA) once registered on the client, not as their text with every call', async () => {
    const monitor = await new Redis(REDIS_URL).monitor();
    const sent: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      const command = args[0]!.toLowerCase();
      if (command.startsWith('eval') && args.some((a) => a.includes(prefix))) sent.push(command);
    });
    try {
      const budget = new KeyBudget(redis, `${prefix}:budget:lua`, { requests: 10, perMs: 10_000 });
      const round = async () => {
        await store.snapshot('lua');
        await store.writeDecision('lua', 1_000, { desired: { replicas: 2 } });
        await budget.take();
        await budget.observe({ remaining: 5, resetSeconds: 3 });
      };
      // ioredis sends a script's text once per connection (EVAL, which loads it), then its digest.
      await round();
      await until(() => sent.length >= 4, 10_000, 'the first round in MONITOR');
      const first = sent.length;
      await round();
      await until(() => sent.length >= first + 4, 10_000, 'the second round in MONITOR');
      expect(sent.slice(first)).toEqual(['evalsha', 'evalsha', 'evalsha', 'evalsha']);
      // A second store on the same client defines nothing again and still goes by digest.
      await new StateStore(redis, prefix).snapshot('lua');
      await until(() => sent.length >= first + 5, 10_000, 'the second store in MONITOR');
      expect(sent.at(-1)).toBe('evalsha');
    } finally {
      monitor.disconnect();
    }
  });
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

  it('a field that does not parse is dropped and named, and the pipe is read again', async () => {
    const invalid: [string, readonly string[]][] = [];
    const checked = new StateStore(redis, prefix, (pipe, fields) => invalid.push([pipe, fields]));
    await checked.write('p-bad', { kind: 'stream', applied: { replicas: 2 }, lastReadAt: 1_000 });
    // another version's shape, a hand edit, and a value out of its enum
    await redis.hset(checked.keys.pipe('p-bad'), {
      recommendations: '{"at":1}', lastChange: 'not json', state: '"Sleeping"', applied: '{"replicas":"3"}',
    });
    const { rec } = await checked.snapshot('p-bad');
    expect(rec).toMatchObject({ kind: 'stream', lastReadAt: 1_000, applied: {}, recommendations: [], lastChange: {}, state: null, readDue: true });
    expect(invalid).toEqual([['p-bad', expect.arrayContaining(['recommendations', 'lastChange', 'state', 'applied'])]]);
    expect(invalid[0]![1]).toHaveLength(4);
    expect(await checked.read('p-bad')).toEqual(rec);
  });

  it('an unreadable pause flag still pauses, saying so', async () => {
    await redis.set(store.keys.pause('p-pause'), '{"why":1}');
    expect((await store.snapshot('p-pause')).pause).toEqual({ reason: 'unreadable pause flag in Redis', scope: 'pipe' });
    await redis.del(store.keys.pause('p-pause'));
  });

  it('a pipe\'s own pause wins over the fleet-wide one, which applies otherwise', async () => {
    await store.setPause(null, { reason: 'freeze' });
    await store.setPause('p2', { reason: 'own', until: Date.now() + 60_000 });
    expect((await store.snapshot('p2')).pause).toMatchObject({ reason: 'own', scope: 'pipe' });
    expect((await store.snapshot('p3')).pause).toEqual({ reason: 'freeze', scope: 'all' });
    expect(await store.pause('p3')).toEqual({ reason: 'freeze', scope: 'all' });
    // says what it lifted: the fleet's pause and the pipes' own
    expect(await store.clearPause(null, ['p2', 'p3'])).toEqual({ all: true, pipes: ['p2'] });
    expect((await store.snapshot('p2')).pause).toBeNull();
    expect(await store.clearPause(null, ['p2', 'p3'])).toEqual({ all: false, pipes: [] });
    await store.setPause('p3', { reason: 'own' });
    expect(await store.clearPause('p3')).toEqual({ all: false, pipes: ['p3'] });
    expect(await store.clearPause('p3')).toEqual({ all: false, pipes: [] });
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
