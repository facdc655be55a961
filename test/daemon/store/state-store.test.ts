// The pipe record in Redis: snapshot() reads the record and the pause that applies in one command.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import { stateOfMarker } from '../../../src/daemon/store/redis-guard.js';
import { sameJson } from '../../../src/daemon/model/record-fields.js';
import type { ScalingValues } from '../../../src/api/index.js';
import { pipeByName } from '../../../src/daemon/model/pipe-index.js';
import { KeyBudget } from '../../../src/daemon/lanes/budget.js';
import { cleanupPrefix, REDIS_URL, uniquePrefix } from '../helpers.js';
import type { Config } from '../../../src/config/types.js';
import { changedFrom, parseRecord, refOf, type PipeIdentity } from '../../../src/daemon/model/record.js';

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
  it('go by digest (EVALSHA) once loaded on the connection, not as their text with every call', async () => {
    // A client of its own (a fresh connection); what it wrote is each command's name once answered:
    // ioredis writes a script's first call on a connection as EVAL (which loads it), later ones as EVALSHA.
    const client = new Redis(REDIS_URL);
    // A Set: a command queued before the connection is ready goes through sendCommand again.
    const sent = new Set<Parameters<typeof client.sendCommand>[0]>();
    const send = client.sendCommand.bind(client);
    client.sendCommand = (command, ...rest) => {
      sent.add(command);
      return send(command, ...rest);
    };
    const scripts = () => [...sent].map((c) => c.name).filter((n) => n.startsWith('eval'));
    try {
      const own = new StateStore(client, prefix);
      const budget = new KeyBudget(client, `${prefix}:budget:lua`, { requests: 10, perMs: 10_000 });
      const round = async () => {
        await own.snapshot('lua');
        await own.writeDecision('lua', 1_000, { desired: { replicas: 2 } });
        const { at } = await budget.take();
        await budget.observe(at, { remaining: 5, resetSeconds: 3 });
      };
      await round();
      expect(scripts()).toEqual(['eval', 'eval', 'eval', 'eval']);
      await round();
      expect(scripts().slice(4)).toEqual(['evalsha', 'evalsha', 'evalsha', 'evalsha']);
      // A second store on the same client defines nothing again: still the digest.
      await new StateStore(client, prefix).snapshot('lua');
      expect(scripts().slice(8)).toEqual(['evalsha']);
    } finally {
      client.disconnect();
    }
  });
});

describe('StateStore.snapshot', () => {
  it('an unknown pipe is the empty record, not paused', async () => {
    const { rec, pause } = await store.snapshot('never-seen');
    expect(rec).toMatchObject({
      kind: null,
      applied: {},
      desired: null,
      recommendations: [],
      lastError: null,
      drifts: 0,
    });
    expect(pause).toBeNull();
  });

  it('reads back what write() and increment() stored, and ignores fields it does not know', async () => {
    await store.write('p1', { kind: 'stream', applied: { replicas: 2 }, desired: { replicas: 3 }, lastReadAt: 1_000 });
    await store.increment('p1', 'drifts');
    await redis.hset(store.keys.pipe('p1'), 'stranger', '"x"');
    const { rec } = await store.snapshot('p1');
    expect(rec).toMatchObject({
      kind: 'stream',
      applied: { replicas: 2 },
      desired: { replicas: 3 },
      lastReadAt: 1_000,
      drifts: 1,
    });
    expect(rec).not.toHaveProperty('stranger');
    expect(await store.read('p1')).toEqual(rec);
  });

  it('a field that does not parse is dropped and named, and the pipe is read again', async () => {
    const invalid: [string, readonly string[]][] = [];
    const checked = new StateStore(redis, prefix, (pipe, fields) => invalid.push([pipe, fields]));
    await checked.write('p-bad', { kind: 'stream', applied: { replicas: 2 }, lastReadAt: 1_000 });
    // another version's shape, a hand edit, and a value out of its enum
    await redis.hset(checked.keys.pipe('p-bad'), {
      recommendations: '{"at":1}',
      lastChange: 'not json',
      state: '"Sleeping"',
      applied: '{"replicas":"3"}',
    });
    const { rec } = await checked.snapshot('p-bad');
    expect(rec).toMatchObject({
      kind: 'stream',
      lastReadAt: 1_000,
      applied: {},
      recommendations: [],
      lastChange: {},
      state: null,
      readDue: true,
    });
    expect(invalid).toEqual([['p-bad', expect.arrayContaining(['recommendations', 'lastChange', 'state', 'applied'])]]);
    expect(invalid[0]![1]).toHaveLength(4);
    expect(await checked.read('p-bad')).toEqual(rec);
  });

  it('an unreadable pause flag still pauses, saying so', async () => {
    const p = ids('p-pause');
    await redis.set(store.keys.pause(refOf(p)), '{"why":1}');
    expect((await store.snapshot(p.name, p)).pause).toEqual({
      reason: 'unreadable pause flag in Redis',
      scope: 'pipe',
    });
    await redis.del(store.keys.pause(refOf(p)));
  });

  it("a pipe's own pause wins over the fleet-wide one, which applies otherwise", async () => {
    const [p2, p3] = [ids('p2'), ids('p3')];
    await store.operator.setPause(null, { reason: 'freeze' });
    await store.operator.setPause(p2, { reason: 'own', until: Date.now() + 60_000 });
    expect((await store.snapshot(p2.name, p2)).pause).toMatchObject({ reason: 'own', scope: 'pipe' });
    expect((await store.snapshot(p3.name, p3)).pause).toEqual({ reason: 'freeze', scope: 'all' });
    expect(await store.operator.pause(p3)).toEqual({ reason: 'freeze', scope: 'all' });
    // says what it lifted: the fleet's pause and the pipes' own
    expect(await store.operator.clearPause(null, [p2, p3])).toEqual({ all: true, pipes: ['p2'] });
    expect((await store.snapshot(p2.name, p2)).pause).toBeNull();
    expect(await store.operator.clearPause(null, [p2, p3])).toEqual({ all: false, pipes: [] });
    await store.operator.setPause(p3, { reason: 'own' });
    expect(await store.operator.clearPause(p3)).toEqual({ all: false, pipes: ['p3'] });
    expect(await store.operator.clearPause(p3)).toEqual({ all: false, pipes: [] });
  });
});

/** A pipe identity of its own per name (the ids are what operator state is keyed by). */
function ids(name: string): PipeIdentity {
  const n = Buffer.from(name).toString('hex').slice(-12).padStart(12, '0');
  return {
    name,
    organizationId: '00000000-0000-4000-8000-000000000001',
    serviceId: '00000000-0000-4000-8000-000000000002',
    pipeId: `00000000-0000-4000-8000-${n}`,
  };
}

describe('StateStore.writeDecision', () => {
  const decision = (at: number, desired: ScalingValues) => ({
    at,
    action: 'none' as const,
    direction: 'none' as const,
    windows: [],
    desired,
    changes: {},
    reasons: [{ code: 'baseline' as const, message: 'no window is active' }],
  });
  /** The fields the pipe's hash holds. */
  const written = async (pipe: string): Promise<string[]> =>
    Object.keys(await redis.hgetall(store.keys.pipe(pipe))).sort();

  it('writes a decision that repeats the last one as its instant alone; the last decision reads as made then', async () => {
    const fields = (at: number) => ({
      lastDecision: decision(at, { replicas: 2 }),
      desired: { replicas: 2 },
      ref: 'o/s/p',
    });
    expect(await store.writeDecision('steady', 1_000, fields(1_000))).toBe(true);
    const first = await store.read('steady');
    expect(await written('steady')).toEqual(['decidedAt', 'decisions', 'desired', 'lastDecision', 'ref']);
    // the next tick decides the same: only decidedAt changes in Redis
    await redis.hdel(store.keys.pipe('steady'), 'desired', 'ref');
    const base = { ...first, desired: { replicas: 2 }, ref: 'o/s/p' };
    expect(await store.writeDecision('steady', 2_000, fields(2_000), base)).toBe(true);
    expect(await written('steady')).toEqual(['decidedAt', 'decisions', 'lastDecision']);
    expect(await redis.hget(store.keys.pipe('steady'), 'lastDecision')).toContain('"at":1000');
    const rec = await store.read('steady');
    expect(rec.decidedAt).toBe(2_000);
    expect(rec.lastDecision).toEqual(decision(2_000, { replicas: 2 }));
    // a decision that differs is written whole where it differs
    expect(await store.writeDecision('steady', 3_000, { ...fields(3_000), desired: { replicas: 3 } }, rec)).toBe(true);
    expect((await store.read('steady')).desired).toEqual({ replicas: 3 });
  });

  it('writes the whole decision when another was stored since its base, and refuses an older tick', async () => {
    const fields = (at: number, replicas: number) => ({
      lastDecision: decision(at, { replicas }),
      desired: { replicas },
    });
    await store.writeDecision('raced', 1_000, fields(1_000, 2));
    const base = await store.read('raced');
    // another replica's evaluation of a later tick, between this one's snapshot and its write
    await store.writeDecision('raced', 2_000, fields(2_000, 5));
    // this one (tick 3) decided what its base held: its difference would be empty, the whole is written
    expect(await store.writeDecision('raced', 3_000, fields(3_000, 2), base)).toBe(true);
    expect(await store.read('raced')).toMatchObject({ decidedAt: 3_000, desired: { replicas: 2 } });
    expect((await store.read('raced')).lastDecision?.desired).toEqual({ replicas: 2 });
    // another decision of the base's own tick (an evaluation right after an answer) counts too
    const same = await store.read('raced');
    await store.writeDecision('raced', 3_000, fields(3_000, 6));
    expect(await store.writeDecision('raced', 4_000, fields(4_000, 2), same)).toBe(true);
    expect(await store.read('raced')).toMatchObject({ decidedAt: 4_000, desired: { replicas: 2 } });
    // an older tick is refused, with or without a base
    expect(await store.writeDecision('raced', 3_500, fields(3_500, 7), await store.read('raced'))).toBe(false);
    expect(await store.writeDecision('raced', 3_500, fields(3_500, 7))).toBe(false);
    expect((await store.read('raced')).desired).toEqual({ replicas: 2 });
  });

  it("refuses a decision (and a verdict) made in a state Redis lost since: the snapshot's marker gone or another loss's; the end of a hold is the same state", async () => {
    const since = 1_795_000_000_000;
    const fresh = JSON.stringify({ since });
    await redis.set(store.keys.marker, fresh);
    const snap = await store.snapshot('marked');
    expect(snap.marker).toBe(fresh);
    const state = stateOfMarker(fresh);
    expect(state).toBe(`${since}/`);
    const d = (at: number) => ({ desired: { replicas: at / 1_000 } });
    expect(await store.writeDecision('marked', 1_000, d(1_000), undefined, state)).toBe(true);
    // the marker gone: Redis lost the state, no tick noticed yet
    await redis.del(store.keys.marker);
    expect(await store.writeDecision('marked', 2_000, d(2_000), undefined, state)).toBe('state_lost');
    const due = { boundary: 5_000, windows: ['w'], target: { replicas: 2 }, deadline: 9_000 };
    expect(await store.verdict('marked', 'open', due, state)).toBe(false);
    // written again by the replica that noticed: another state
    const lost = JSON.stringify({ since: since + 30_000, lostAt: since + 30_000 });
    await redis.set(store.keys.marker, lost);
    expect(await store.writeDecision('marked', 2_000, d(2_000), undefined, state)).toBe('state_lost');
    expect((await store.read('marked')).desired).toEqual({ replicas: 1 });
    // the hold's end (rebuiltAt) keeps the state the loss began
    const after = stateOfMarker(lost);
    await redis.set(store.keys.marker, JSON.stringify({ ...JSON.parse(lost), rebuiltAt: since + 90_000 }));
    expect(stateOfMarker((await redis.get(store.keys.marker))!)).toBe(after);
    expect(await store.writeDecision('marked', 3_000, d(3_000), undefined, after)).toBe(true);
    expect(await store.verdict('marked', 'open', due, after)).toBe(true);
    // unchecked without a state
    await redis.del(store.keys.marker);
    expect(await store.writeDecision('marked', 4_000, d(4_000))).toBe(true);
  });

  it('starts the count of decisions over when it is not a whole number it can count on', async () => {
    for (const [i, bad] of ['inf', '1e400', '9007199254740993', 'abc', '-3', '2.5'].entries()) {
      const pipe = `counted-${i}`;
      await redis.hset(store.keys.pipe(pipe), 'decisions', bad);
      expect((await store.snapshot(pipe)).invalid).toEqual(['decisions']);
      expect(await store.writeDecision(pipe, 1_000, { desired: { replicas: 2 } })).toBe(true);
      const after = await store.snapshot(pipe);
      expect([bad, after.invalid]).toEqual([bad, []]);
      expect(after.rec.decisions).toBeGreaterThan(0);
    }
  });

  it('changedFrom compares JSON values, and the last decision without its instant', () => {
    const base = {
      ...parseRecord({}).rec,
      desired: { replicas: 2, replicaCpuMillicores: 250 },
      lastDecision: decision(1, {}),
    };
    expect(changedFrom(base, { desired: { replicaCpuMillicores: 250, replicas: 2 } })).toEqual({});
    expect(changedFrom(base, { desired: { replicas: 3 } })).toEqual({ desired: { replicas: 3 } });
    expect(changedFrom(base, { lastDecision: decision(9, {}), wantedSince: null })).toEqual({});
    expect(changedFrom(base, { lastDecision: { ...decision(9, {}), dryRun: true } })).toMatchObject({
      lastDecision: { dryRun: true },
    });
    expect(changedFrom(base, { desired: null, readDue: true })).toEqual({ desired: null, readDue: true });
    // as JSON.stringify writes them: an undefined member is absent, an undefined element null
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson([undefined, 1], [null, 1])).toBe(true);
    expect(sameJson([1], { 0: 1 })).toBe(false);
  });
});

describe('StateStore.writeIfIntent', () => {
  const intent = (id: string) => ({ sent: { replicas: 4 }, at: 1_000, code: 'in_flight', id, until: 6_000 });

  it("writes only while the record's unsettled change is the intent named ('' none): once per intent", async () => {
    const pipe = 'intent-cas';
    // no unsettled change (absent, null, or one stored before intents had ids): ''
    expect(await store.writeIfIntent(pipe, 'a', { readDue: true })).toBe(false);
    expect(await store.writeIfIntent(pipe, '', { unsettled: intent('a') })).toBe(true);
    // a second attempt that started from the same record finds it taken
    expect(await store.writeIfIntent(pipe, '', { unsettled: intent('b') })).toBe(false);
    expect(await store.writeIfIntent(pipe, 'b', { unsettled: null, lastReadAt: 2_000 })).toBe(false);
    expect((await store.read(pipe)).unsettled).toMatchObject({ id: 'a' });
    // its answer, recorded by the attempt that holds it
    expect(await store.writeIfIntent(pipe, 'a', { unsettled: null, lastReadAt: 2_000 })).toBe(true);
    expect(await store.read(pipe)).toMatchObject({ unsettled: null, lastReadAt: 2_000 });
    // and never again
    expect(await store.writeIfIntent(pipe, 'a', { lastReadAt: 3_000 })).toBe(false);
    await store.write(pipe, { unsettled: { sent: { replicas: 4 }, at: 1_000, code: 'API_TIMEOUT' } });
    expect(await store.writeIfIntent(pipe, '', { lastReadAt: 4_000 })).toBe(true);
  });
});

describe('pipeByName', () => {
  it('finds a pipe by name in each config it is given, including one loaded after the first', () => {
    const a = {
      pipes: [
        { name: 'x', policy: 'p1' },
        { name: 'y', policy: 'p1' },
      ],
    } as unknown as Config;
    const b = { pipes: [{ name: 'x', policy: 'p2' }] } as unknown as Config;
    expect(pipeByName(a, 'y')?.policy).toBe('p1');
    expect(pipeByName(b, 'x')?.policy).toBe('p2');
    expect(pipeByName(b, 'y')).toBeUndefined();
    expect(pipeByName(a, 'x')?.policy).toBe('p1');
  });
});
