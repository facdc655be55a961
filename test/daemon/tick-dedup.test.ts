// Issue 10 item 2: one replica enqueues each tick (a per-tick SET NX in Redis), so finished
// evaluations no longer have to be kept an hour to drop a slower replica's duplicate: Redis keeps
// few of them, and memory follows the number of pipes, not time x pipes.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import { evaluateJobOptions, EVALUATE_KEEP_COUNT, type EvaluateJob } from '../../src/daemon/lanes/queues.js';
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
} from './helpers.js';

const prefix = uniquePrefix('tickdedup');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('tick deduplication', () => {
  it('finished evaluations are kept by count and briefly, not an hour per pipe per tick', () => {
    const o = evaluateJobOptions('p-1');
    expect(o.removeOnComplete).toMatchObject({ count: EVALUATE_KEEP_COUNT });
    expect(o.removeOnFail).toMatchObject({ count: EVALUATE_KEEP_COUNT });
    expect(EVALUATE_KEEP_COUNT).toBeLessThanOrEqual(1_000);
    expect((o.removeOnComplete as { age: number }).age).toBeLessThanOrEqual(300);
  });

  it("a second replica ticking the same instant enqueues nothing, even once the first tick's jobs are gone", async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes: [demoPipe('orders-events', 'streams'), demoPipe('clickstream', 'streams')],
      policies: { streams: policy('streams', { replicas: 2 }) },
    });
    const daemons: Daemon[] = [];
    const emitters = [new DaemonEmitter(), new DaemonEmitter()];
    try {
      for (const emitter of emitters) {
        const d = createDaemon({
          config,
          redis,
          prefix,
          now: () => T0 + 1_000,
          emitter,
          schedule: false,
          watch: false,
          workerOptions: FAST_WORKERS,
        });
        await d.start();
        daemons.push(d);
      }
      const ticks = emitters.map((e) => collect(e, 'tick'));
      await daemons[0]!.tick(T0);
      await drained(daemons);
      // What count/age retention does in the end: the first tick's finished jobs are removed.
      const evaluate = daemons[0]!.queues()[0]!;
      await evaluate.clean(0, 10_000, 'completed');
      const seen = collect(emitters[1]!, 'evaluation');
      const seenFirst = collect(emitters[0]!, 'evaluation');
      await daemons[1]!.tick(T0);
      await drained(daemons);
      expect(seen.length + seenFirst.length).toBe(0);
      expect(ticks[0]!.length).toBe(1);
      expect(ticks[1]!.length).toBe(0);
      // The tick's marker expires by itself.
      const ttl = await redis.pttl(`${prefix}:ps:tick:${T0 / 1000}`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(10 * 60_000);
      // The next tick is enqueued once.
      await daemons[1]!.tick(T0 + 30_000);
      await daemons[0]!.tick(T0 + 30_000);
      await drained(daemons);
      expect(new Set([...seen, ...seenFirst].map((e) => e.pipe)).size).toBe(2);
      expect(ticks[0]!.length + ticks[1]!.length).toBe(2);
    } finally {
      for (const d of daemons) await d.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  });
  it('evaluations that fell behind: a tick adds none for a pipe whose last one still waits; the waiting one runs, then the next tick adds again', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const config = testConfig({
      baseUrl: cloud.url,
      prefix: `${prefix}-behind`,
      pipes: [demoPipe('orders-events', 'streams'), demoPipe('clickstream', 'streams')],
      policies: { streams: policy('streams', { replicas: 2 }) },
    });
    const emitter = new DaemonEmitter();
    const d = createDaemon({
      config,
      redis,
      prefix: `${prefix}-behind`,
      now: () => T0 + 1_000,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await d.start();
      const evaluate = d.queues()[0]!;
      expect(evaluate.name).toBe('evaluate');
      // The evaluate worker takes nothing: three ticks come while the first one's evaluations wait.
      await evaluate.pause();
      await d.tick(T0);
      await d.tick(T0 + 30_000);
      await d.tick(T0 + 60_000);
      const waiting = async () =>
        Object.values(await evaluate.getJobCounts('waiting', 'prioritized', 'delayed')).reduce((a, b) => a + b, 0);
      expect(await waiting()).toBe(2);
      // The tick's own evaluations (not the ones a first contact's answer adds at the same instant).
      const done = async () =>
        (await evaluate.getJobs(['completed']))
          .filter((j) => !j.id?.endsWith('-answer'))
          .map((j) => [(j.data as EvaluateJob).pipe, (j.data as EvaluateJob).tickAt] as const)
          .sort();
      await evaluate.resume();
      await drained([d]);
      // The waiting ones ran (at their tick: the first contact, a decision for each pipe)...
      expect(await done()).toEqual([
        ['clickstream', T0],
        ['orders-events', T0],
      ]);
      expect(cloud.stats().requests.scalePipe?.[200]).toBeGreaterThan(0);
      // ...and once they are done, the next tick adds its own again.
      await d.tick(T0 + 90_000);
      await drained([d]);
      expect((await done()).filter(([, at]) => at === T0 + 90_000)).toHaveLength(2);
    } finally {
      await d.stop({ timeoutMs: 2_000 });
      await cloud.close();
      await cleanupPrefix(redis, `${prefix}-behind`);
    }
  }, 30_000);
});
