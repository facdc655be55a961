// The key's request budget in Redis (budget.ts): a window's units, the read share, what answers
// teach it (remaining, reset, 429), two daemon replicas on two keys against the cloud's real
// limiter with no 429, and on the daemon: reads never exceed their share while changes go first,
// and a waiting scale-down is sent within the bound validate reports.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../../src/cloud/index.js';
import type { ApplyJob } from '../../../src/daemon/lanes/queues.js';
import { KeyBudget } from '../../../src/daemon/lanes/budget.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../../src/daemon/index.js';
import { describeKeyPlan, keyPlans } from '../../../src/policy/key-budget.js';
import type { PipeConfig } from '../../../src/policy/types.js';
import type { Config } from '../../../src/config/types.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  drained,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from '../helpers.js';
import { tamperProxy } from '../tamper-proxy.js';

const prefix = uniquePrefix('budget');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
let n = 0;
const fresh = (limit = { requests: 10, perMs: 10_000 }) => new KeyBudget(redis, `${prefix}:ps:budget:k${n++}`, limit);
/** A key whose last window ended long ago: known, so its next take opens a window. */
const known = async (b: KeyBudget) => {
  await redis.hset(b.key, 'end', 0);
};
const takes = async (b: KeyBudget, count: number, kind: 'change' | 'read' = 'change') => {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await b.take(kind)).waitMs);
  return out;
};

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe("one key's budget", () => {
  it("a key nothing is known of (new, or Redis lost it) gets nothing for a window and a margin, then the window's units, then the wait", async () => {
    const clock = { now: Date.parse('2026-11-23T10:00:00Z') };
    const b = new KeyBudget(redis, `${prefix}:ps:budget:k${n++}`, { requests: 10, perMs: 10_000 }, () => clock.now);
    // the platform may still count a window of requests sent before; any such window is over, and
    // every request sent before has reached it, a window and a margin (100 ms) later
    expect((await b.take()).waitMs).toBe(10_000 + 100 + 100);
    clock.now += 10_000 + 100 + 99;
    expect((await b.take()).waitMs).toBe(1);
    clock.now += 1;
    const got = await takes(b, 11);
    expect(got.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(got[10]).toBe(10_000 + 100);
  });

  it('answers of units taken before the hash went say nothing of the window: none is kept, a 429 neither', async () => {
    const b = fresh();
    await b.observe(Date.now() - 500, { remaining: 9, resetSeconds: 9 });
    await b.observe(Date.now() - 400, { remaining: 0, resetSeconds: 2 }, true);
    expect(await b.view()).toBeNull();
  });

  it("gives the window's units, then says how long to wait", async () => {
    const b = fresh();
    await known(b);
    const got = await takes(b, 11);
    expect(got.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(got[10]).toBeGreaterThan(9_000);
    expect(got[10]).toBeLessThanOrEqual(10_000 + 100);
  });

  it('reads take at most their share (2.5 of 10 per window on average); changes still go', async () => {
    const b = fresh();
    await known(b);
    const reads = await takes(b, 5, 'read');
    expect(reads.filter((w) => w === 0)).toHaveLength(3);
    expect(reads.slice(3).every((w) => w < 0)).toBe(true); // negative: only reads wait
    expect(await takes(b, 7)).toEqual(Array(7).fill(0));
    expect((await b.take()).waitMs).toBeGreaterThan(0);
  });

  it('reads earn their share by time, not per window opened: the wait says when the next credit comes', async () => {
    const b = fresh({ requests: 10, perMs: 400 });
    await known(b);
    expect(await takes(b, 3, 'read')).toEqual([0, 0, 0]); // a full share to start with: 2.5 + 1
    const wait = -(await b.take('read')).waitMs;
    // half a credit left: the other half comes in 0.5 / 2.5 of a window (80 ms)
    expect(wait).toBeGreaterThan(40);
    expect(wait).toBeLessThanOrEqual(80);
    const t0 = Date.now();
    await until(async () => (await b.take('read')).waitMs === 0, 5_000, 'a read credit');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(wait - 40);
    // in a few windows of nothing but reads, about 2.5 per window: the share of the time, whatever
    // the windows the reads opened
    let reads = 0;
    const t1 = Date.now();
    while (Date.now() - t1 < 2_000) {
      const w = (await b.take('read')).waitMs;
      if (w === 0) reads++;
      else await new Promise((r) => setTimeout(r, Math.abs(w))); // the wait the budget names
    }
    expect(reads / ((Date.now() - t1) / 400)).toBeGreaterThan(2.2);
    expect(reads / ((Date.now() - t1) / 400)).toBeLessThan(2.5 + (1.5 * 400) / (Date.now() - t1) + 0.1);
  });

  it("follows the platform's answers: remaining lowers what is left, reset moves the window; an older window's answer is ignored", async () => {
    const b = fresh();
    await known(b);
    const { at } = await b.take();
    await b.take();
    // An answer of a unit taken before this window opened (a late answer of the last one): not ours.
    await b.observe(at - 1, { remaining: 9, resetSeconds: 0 });
    expect((await b.view())!.left).toBe(8);
    await b.observe(at, { remaining: 3, resetSeconds: 4 });
    expect((await b.view())!.left).toBe(3);
    expect(await takes(b, 3)).toEqual([0, 0, 0]);
    const { waitMs: wait } = await b.take();
    expect(wait).toBeGreaterThan(3_500);
    expect(wait).toBeLessThanOrEqual(4_200);
  });

  it("a full window's next unit comes the Reset's resolution (10 ms) after its reported end", async () => {
    const b = fresh({ requests: 10, perMs: 1_000 });
    await known(b);
    const { at } = await b.take();
    await takes(b, 9);
    await b.observe(at, { remaining: 0, resetSeconds: 0.5 });
    const { waitMs: wait } = await b.take();
    expect(wait).toBeGreaterThan(500 + 10 - 40);
    expect(wait).toBeLessThanOrEqual(500 + 10);
  });

  it('a 429 empties the window until its reset (bounded: an epoch time is not believed)', async () => {
    const b = fresh();
    await known(b);
    const { at } = await b.take();
    await b.observe(at, { remaining: 0, resetSeconds: 1795345850 }, true);
    const { waitMs: wait } = await b.take();
    expect(wait).toBeGreaterThan(9_000);
    expect(wait).toBeLessThanOrEqual(10_200);
  });
});

describe("two replicas, two keys, the cloud's own limiter", () => {
  const N = 60;
  const daemons: Daemon[] = [];

  afterAll(async () => {
    await Promise.all(daemons.map((d) => d.stop({ timeoutMs: 2_000 })));
  });

  it('every pipe is read once, then changed once, and the cloud answers no 429', async () => {
    const fixtures = generateFixtures({
      streamPipes: N,
      keysPerOrganization: 2,
      rateLimit: { requests: 10, per: '1s' },
    });
    const cloud = await startCloud({ fixtures, port: 0 });
    try {
      const keys = Object.fromEntries(
        fixtures.apiKeys.slice(0, 2).map((k, i) => [`k${i + 1}`, { keyId: k.keyId, keySecret: k.keySecret }]),
      );
      const pipes: PipeConfig[] = Array.from({ length: N }, (_, i) => ({
        name: `stream-${i + 1}`,
        ...generatedPipeIds(i + 1),
        policy: 'two',
        key: i % 2 === 0 ? 'k1' : 'k2',
        bounds: {},
      }));
      const config = testConfig({
        baseUrl: cloud.url,
        prefix,
        pipes,
        keys,
        rateLimit: { requests: 10, perMs: 1_000 },
        policies: { two: policy('two', { replicas: 2 }) },
      });
      const emitters = [new DaemonEmitter(), new DaemonEmitter()];
      for (const emitter of emitters) {
        daemons.push(
          createDaemon({
            config,
            redis,
            prefix,
            now: () => Date.parse('2026-11-23T10:00:00Z'),
            emitter,
            schedule: false,
            watch: false,
            workerOptions: FAST_WORKERS,
          }),
        );
      }
      await Promise.all(daemons.map((d) => d.start()));
      const applied = emitters.map((e) => collect(e, 'decision'));
      await daemons[0]!.tick(Date.parse('2026-11-23T10:00:00Z'));
      await until(
        () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
        30_000,
        'every pipe at 2',
      );
      expect(cloud.stats().rateLimited).toBe(0);
      expect(cloud.stats().requests.scalePipe).toEqual({ 200: 2 * N });
      // Both replicas did work: the budget is shared, not split.
      expect(applied.every((a) => a.some((d) => d.result === 'applied'))).toBe(true);
    } finally {
      await Promise.all(daemons.map((d) => d.stop({ timeoutMs: 2_000 })));
      await cloud.close();
    }
  }, 60_000);
});

describe("reads within the key's share", () => {
  const prefix = uniquePrefix('budget-reads');
  afterAll(async () => {
    await cleanupPrefix(redis, prefix);
  });

  it("a key whose period the share stretched reads every pipe once per period, in turn, at the share's pace and no faster", async () => {
    const N = 20;
    const RATE = { requests: 10, perMs: 1_000 };
    const fixtures = generateFixtures({ streamPipes: N, rateLimit: { requests: RATE.requests, per: '1s' } });
    const cloud = await startCloud({ fixtures, port: 0 });
    const { keyId, keySecret } = fixtures.apiKeys[0]!;
    const pipes: PipeConfig[] = Array.from({ length: N }, (_, i) => ({
      name: `stream-${i + 1}`,
      ...generatedPipeIds(i + 1),
      policy: 'same',
      key: 'default',
      bounds: {},
    }));
    // 20 pipes at 25 % of 10 per s: one read each every 8 s, although evaluate.reconcile asks 2 s
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes,
      keys: { default: { keyId, keySecret } },
      rateLimit: RATE,
      reconcileMs: 2_000,
      policies: { same: policy('same', { replicas: 1 }) },
    });
    const periodMs = 8_000;
    const daemon = createDaemon({
      config: { ...base, evaluate: { ...base.evaluate, cron: '* * * * * *', readShare: 0.25 } },
      redis,
      prefix,
      now: () => Date.now(),
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    const lastRead = async () => Promise.all(pipes.map(async (p) => (await daemon.store.read(p.name)).lastReadAt));
    try {
      await daemon.start();
      await until(async () => (await lastRead()).every((t) => t !== null), 20_000, 'every pipe met');
      cloud.resetStats();
      const reads = new Map<string, number[]>(pipes.map((p) => [p.name, []]));
      const t0 = Date.now();
      // three periods, the reads seen in each pipe's lastReadAt (a read's answer instant)
      await until(
        async () => {
          (await lastRead()).forEach((t, i) => {
            const seen = reads.get(pipes[i]!.name)!;
            if (t !== null && t > t0 && t !== seen.at(-1)) seen.push(t);
          });
          return Date.now() - t0 > 3 * periodMs + 2_000;
        },
        60_000,
        'three periods',
      );
      const elapsed = Date.now() - t0;
      let longest = 0;
      for (const seen of reads.values()) {
        expect(seen.length).toBeGreaterThanOrEqual(3);
        for (let i = 1; i < seen.length; i++) longest = Math.max(longest, seen[i]! - seen[i - 1]!);
      }
      // once per period (and a tick: a read comes due at one, and half a second for a turn waiting
      // for a worker on a loaded machine: 9.3 s was seen at load average 17), and not more often
      // than the share
      expect(longest).toBeLessThanOrEqual(periodMs + 1_500);
      const sent = cloud.stats().requests.scalePipe?.[200] ?? 0;
      expect(sent / ((elapsed / 1_000) * RATE.requests)).toBeLessThanOrEqual(0.25 + 0.03);
      expect(cloud.stats().rateLimited).toBe(0);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 90_000);
});

/** One key at 20 per 1 s (the cloud's own limiter): every pipe first at 2 replicas, then at T1 (a
 *  minute later, every reconcile read due) `up` pipes go to 3, `down` pipes to 1 and the rest stay:
 *  each PATCH of T1 as the cloud's side saw it, in the order it arrived. */
async function boundary(groups: { steady: number; up: number; down: number }) {
  const RATE = { requests: 20, perMs: 1_000 };
  const T0 = Date.parse('2026-11-23T10:00:00Z');
  const total = groups.steady + groups.up + groups.down;
  const fixtures = generateFixtures({ streamPipes: total, rateLimit: { requests: RATE.requests, per: '1s' } });
  const cloud = await startCloud({ fixtures, port: 0 });
  const proxy = await tamperProxy(cloud.url);
  const group = (i: number) => (i < groups.up ? 'up' : i < groups.up + groups.down ? 'down' : 'steady');
  const pipes: PipeConfig[] = Array.from({ length: total }, (_, i) => ({
    name: `${group(i)}-${i + 1}`,
    ...generatedPipeIds(i + 1),
    policy: group(i),
    key: 'default',
    bounds: {},
  }));
  const configAt = (up: number, down: number): Config =>
    testConfig({
      baseUrl: proxy.url,
      prefix: uniquePrefix('budget-boundary'),
      pipes,
      rateLimit: RATE,
      reconcileMs: 1_000,
      keys: { default: { keyId: fixtures.apiKeys[0]!.keyId, keySecret: fixtures.apiKeys[0]!.keySecret } },
      policies: {
        steady: policy('steady', { replicas: 2 }),
        up: policy('up', { replicas: up }),
        down: policy('down', { replicas: down }),
      },
    });
  const first = configAt(2, 2);
  const bPrefix = first.redis.prefix;
  let clock = T0;
  const daemon = createDaemon({
    config: first,
    redis,
    prefix: bPrefix,
    now: () => clock,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  const sent: { at: number; pipe: string; read: boolean; status?: number }[] = [];
  let recording = false;
  proxy.tamper = async (req, upstream) => {
    const pipe = req.method === 'PATCH' ? pipes.find((p) => req.url.includes(p.pipeId)) : undefined;
    const entry = recording && pipe ? { at: performance.now(), pipe: pipe.name, read: req.body === '{}' } : null;
    if (entry) sent.push(entry);
    const answer = await upstream();
    if (entry) Object.assign(entry, { status: answer.status });
    return answer;
  };
  try {
    await daemon.start();
    await daemon.tick(T0);
    await until(
      () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
      20_000,
      'every pipe at 2',
    );
    await drained([daemon]);
    const config = configAt(3, 1);
    expect(await daemon.reload(config)).toBe(true);
    clock = T0 + 60_000;
    recording = true;
    const start = performance.now();
    await daemon.tick(clock);
    const wanted = (p: PipeConfig) => (p.policy === 'up' ? 3 : p.policy === 'down' ? 1 : 2);
    await until(
      () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === wanted(p)),
      30_000,
      'every change',
    );
    await drained([daemon], 30_000);
    return { sent: sent.map((e) => ({ ...e, at: e.at - start })), config, rateLimited: cloud.stats().rateLimited };
  } finally {
    await daemon.stop({ timeoutMs: 2_000 });
    await proxy.close();
    await cloud.close();
    await cleanupPrefix(redis, bPrefix);
  }
}

describe("the daemon spends a key's budget on changes first", () => {
  it("reads never exceed their share (a quarter of the key's rate); the changes go first, each one a read too", async () => {
    const { sent, config, rateLimited } = await boundary({ steady: 30, up: 10, down: 0 });
    expect(rateLimited).toBe(0);
    const reads = sent.filter((e) => e.read);
    const changes = sent.filter((e) => !e.read);
    // Every steady pipe read once; a pipe that changed is not read: its change's answer was its read.
    expect(reads.map((e) => e.pipe).sort()).toEqual(
      config.pipes
        .filter((p) => p.policy === 'steady')
        .map((p) => p.name)
        .sort(),
    );
    expect(changes).toHaveLength(10);
    expect(sent.every((e) => e.status === 200)).toBe(true);
    // Reads earn share x limit = 5 per window of 1 s (and a little more), at most 6 in store: in
    // any stretch of t seconds at most 6 + 5 x (floor(t) + 1) of them, the window open when it
    // starts and each one that opens in it (30 ms for the clocks of Redis and this process).
    const share = 0.25 * 20;
    for (let i = 0; i < reads.length; i++) {
      for (let j = i; j < reads.length; j++) {
        const t = reads[j]!.at - reads[i]!.at;
        expect(j - i + 1, `reads ${i + 1}..${j + 1} within ${Math.round(t)} ms`).toBeLessThanOrEqual(
          share + 1 + share * (Math.floor((t + 30) / 1_000) + 1),
        );
      }
    }
    // 30 reads at 5 per s: not before 3.8 s (11 may go in the first 1 s)
    expect(reads.at(-1)!.at - reads[0]!.at).toBeGreaterThan(((30 - 2 * share - 1) / share) * 1_000 - 100);
    // The changes went first: all 10 sent before the reads were a third done.
    expect(Math.max(...changes.map((e) => e.at))).toBeLessThan(reads[10]!.at);
  }, 90_000);

  it('no starvation: every waiting scale-down is sent within the bound validate reports, before the reads end', async () => {
    const { sent, config, rateLimited } = await boundary({ steady: 20, up: 20, down: 20 });
    expect(rateLimited).toBe(0);
    const [plan] = keyPlans(config);
    // 60 pipes / (0.75 x 20 per s): what `validate` prints for the key
    expect(plan!.scaleDownBoundMs).toBe(4_000);
    expect(describeKeyPlan(plan!)).toContain('a waiting scale-down is sent within 4 s');
    const downs = sent.filter((e) => e.pipe.startsWith('down-'));
    expect(downs).toHaveLength(20);
    expect(downs.every((e) => !e.read && e.status === 200)).toBe(true);
    expect(Math.max(...downs.map((e) => e.at))).toBeLessThan(plan!.scaleDownBoundMs);
    const reads = sent.filter((e) => e.read);
    expect(reads).toHaveLength(20);
    expect(Math.max(...downs.map((e) => e.at))).toBeLessThan(reads.at(-1)!.at);
  }, 90_000);
});

describe('the services list before a change', () => {
  const prefix = uniquePrefix('budget-list');
  afterAll(async () => {
    await cleanupPrefix(redis, prefix);
  });

  it('the turn that reads the list sends its change too: one turn per pipe, not a second one at the back of the queue', async () => {
    const N = 4;
    const fixtures = generateFixtures({ streamPipes: N, rateLimit: false });
    const cloud = await startCloud({ fixtures, port: 0 });
    const { keyId, keySecret } = fixtures.apiKeys[0]!;
    const pipes: PipeConfig[] = Array.from({ length: N }, (_, i) => ({
      name: `stream-${i + 1}`,
      ...generatedPipeIds(i + 1),
      policy: 'two',
      key: 'default',
      bounds: {},
    }));
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes,
      keys: { default: { keyId, keySecret } },
      policies: { two: policy('two', { replicas: 2 }) },
    });
    const at = Date.parse('2026-11-23T10:00:00Z');
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      now: () => at,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await daemon.start();
      await daemon.tick(at);
      await until(
        () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
        30_000,
        'every pipe at 2',
      );
      await drained([daemon]);
      expect(Object.values(cloud.stats().requests.listServices ?? {}).reduce((a, b) => a + b, 0)).toBe(1);
      // Each pipe: its first read, then its change, the services list read once by the turn of a change.
      expect(cloud.stats().requests.scalePipe).toEqual({ 200: 2 * N });
      const lane = daemon.queues().find((q) => q.name.startsWith('apply-'))!;
      const turns = await lane.getJobs(['completed', 'failed', 'waiting', 'prioritized', 'delayed', 'active']);
      const done = (want: string) =>
        turns
          .filter((j) => (j.returnvalue as { done?: string } | null)?.done === want)
          .map((j) => (j.data as ApplyJob).pipe)
          .sort();
      expect(done('change')).toEqual(pipes.map((p) => p.name).sort());
      expect(done('read')).toEqual(pipes.map((p) => p.name).sort());
      expect(turns).toHaveLength(2 * N);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 60_000);
});
