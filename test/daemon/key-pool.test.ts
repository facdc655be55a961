// A key pool on the daemon: two replicas sharing one Redis prefix spread a pool's pipes over its
// keys, each key with its own shared budget, against the embedded cloud's real rate limit (no
// 429); a reload that adds a key to the pool moves only the pipes the new key now serves, and the
// turns those pipes had waiting on their old key's queue move with them.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import { applyQueueName, type ApplyJob } from '../../src/daemon/lanes/queues.js';
import { keyPlans } from '../../src/policy/key-budget.js';
import { assignPools } from '../../src/policy/key-pool.js';
import type { PipeConfig } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { Registry, bindDaemonEvents, createMetrics } from '../../src/telemetry/index.js';
import { parseScrape, sampleValue } from '../telemetry/exposition-parse.js';
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
} from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const N = 60;
const RATE = { requests: 10, perMs: 1_000 };
const prefix = uniquePrefix('key-pool');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe("a pool of two keys, two replicas, the cloud's own limiter", () => {
  it("spreads the pipes over the pool's keys with no 429, and a third key takes over only its share on reload", async () => {
    const fixtures = generateFixtures({
      streamPipes: N,
      keysPerOrganization: 3,
      rateLimit: { requests: RATE.requests, per: '1s' },
    });
    const cloud = await startCloud({ fixtures, port: 0 });
    const credentials = fixtures.apiKeys.map((k) => ({ keyId: k.keyId, keySecret: k.keySecret }));
    const pipes: PipeConfig[] = Array.from({ length: N }, (_, i) => ({
      name: `stream-${i + 1}`,
      ...generatedPipeIds(i + 1),
      policy: 'scale',
      key: 'batch',
      bounds: {},
    }));
    const configOf = (poolKeys: number, replicas: number): Config =>
      assignPools(
        testConfig({
          baseUrl: cloud.url,
          prefix,
          pipes,
          rateLimit: RATE,
          reconcileMs: 5_000,
          keys: Object.fromEntries(
            credentials.slice(0, poolKeys).map((k, i) => [`k${i + 1}`, { ...k, pool: 'batch' }]),
          ),
          policies: { scale: policy('scale', { replicas }) },
        }),
      );
    let clock = T0;
    const emitters = [new DaemonEmitter(), new DaemonEmitter()];
    const registry = new Registry();
    bindDaemonEvents(emitters[0]!, createMetrics(registry, { defaultMetrics: false }));
    const changes = emitters.map((e) => collect(e, 'apply:start'));
    const requests = new Map<string, number>();
    const daemons: Daemon[] = emitters.map((emitter) =>
      createDaemon({
        config: configOf(2, 2),
        redis,
        prefix,
        now: () => clock,
        emitter,
        schedule: false,
        watch: false,
        workerOptions: FAST_WORKERS,
        // scalePipe requests per key (a change also lists the organization's services now and then), and every 429
        onClient: (client, key) =>
          client.events.on('request', ({ status, operation }) => {
            if (status === 429) requests.set('429', (requests.get('429') ?? 0) + 1);
            if (operation === 'scalePipe') requests.set(key, (requests.get(key) ?? 0) + 1);
          }),
      }),
    );
    const keyOfPipe = (c: Config) => new Map(c.pipes.map((p) => [p.name, p.key]));
    const changedWith = () => new Map(changes.flat().map((c) => [c.pipe, c.key]));
    const periods = async () => {
      const s = parseScrape(await registry.metrics());
      return Object.fromEntries(
        ['k1', 'k2', 'k3'].map((k) => [k, sampleValue(s, 'pipescaler_reconcile_period_seconds', { key: k })]),
      );
    };
    try {
      await Promise.all(daemons.map((d) => d.start()));
      // Every pipe of the pool on one of its two keys, about half each; each key's plan counts its own.
      const two = keyOfPipe(configOf(2, 2));
      const count = (m: Map<string, string>, k: string) => [...m.values()].filter((v) => v === k).length;
      expect(count(two, 'k1') + count(two, 'k2')).toBe(N);
      expect(Math.min(count(two, 'k1'), count(two, 'k2'))).toBeGreaterThan(N / 4);
      const plans = keyPlans(configOf(2, 2));
      expect(plans.map((p) => [p.key, p.pipes])).toEqual([
        ['k1', count(two, 'k1')],
        ['k2', count(two, 'k2')],
      ]);
      // The reconcile period of each key of the pool: its own pipes at a quarter of its own rate.
      expect(await periods()).toEqual({
        k1: Math.max(5, count(two, 'k1') / 2.5),
        k2: Math.max(5, count(two, 'k2') / 2.5),
        k3: undefined,
      });

      await daemons[0]!.tick(T0);
      await until(
        () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
        30_000,
        'every pipe at 2',
      );
      await until(() => changedWith().size === N, 10_000, 'every answer handled');
      // Each pipe was read, then changed, both with the key the pool gave it.
      expect(changedWith()).toEqual(two);
      expect(cloud.stats().requests.scalePipe).toEqual({ 200: 2 * N });
      expect(requests.get('k1')).toBe(2 * count(two, 'k1'));
      expect(requests.get('k2')).toBe(2 * count(two, 'k2'));
      // Both replicas sent some: the budget of each key is shared, not split.
      expect(changes.every((c) => c.length > 0)).toBe(true);

      // The next change is decided while the pool's queues hold it; then a reload adds k3. The turns
      // waiting on k1 and k2 for pipes k3 now serves move to k3's queue.
      const held = await Promise.all(
        daemons[0]!
          .queues()
          .filter((q) => q.name !== 'evaluate')
          .map(async (q) => {
            await q.pause();
            return q;
          }),
      );
      for (const c of changes) c.length = 0;
      requests.clear();
      clock = T0 + 60_000;
      await Promise.all(daemons.map((d) => d.reload(configOf(2, 3))));
      await daemons[0]!.tick(clock);
      const waiting = async () =>
        (await Promise.all(held.map((q) => q.getJobCounts('waiting', 'prioritized')))).reduce(
          (n, c) => n + c.waiting! + c.prioritized!,
          0,
        );
      await until(async () => (await waiting()) === N, 20_000, "every change waiting on the pool's queues");
      const three = keyOfPipe(configOf(3, 3));
      await Promise.all(daemons.map((d) => d.reload(configOf(3, 3))));
      expect(await periods()).toEqual({
        k1: Math.max(5, count(three, 'k1') / 2.5),
        k2: Math.max(5, count(three, 'k2') / 2.5),
        k3: Math.max(5, count(three, 'k3') / 2.5),
      });
      await Promise.all(held.map((q) => q.resume()));
      await until(
        () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 3),
        30_000,
        'every pipe at 3',
      );
      await until(() => changedWith().size === N, 10_000, 'every answer handled');
      await drained(daemons);

      // Adding a third key moved only the pipes it now serves (about a third), all of them to k3.
      const moved = pipes.filter((p) => two.get(p.name) !== three.get(p.name));
      expect(moved.every((p) => three.get(p.name) === 'k3')).toBe(true);
      expect(moved.length).toBeGreaterThan(N / 6);
      expect(moved.length).toBeLessThan(N / 2);
      expect(changedWith()).toEqual(three);
      expect(requests.get('k3')).toBe(moved.length);
      // ...from k3's own queue: a turn left on the old key's queue is handed over, not run there.
      const k3 = daemons[0]!.queues().find((q) => q.name === applyQueueName(credentials[2]!.keyId))!;
      const onK3 = (await k3.getCompleted(0, 2 * N)).map((j) => (j.data as ApplyJob).pipe);
      expect([...new Set(onK3)].sort()).toEqual(moved.map((p) => p.name).sort());
      const done = await Promise.all(held.map((q) => q.getCompleted(0, 2 * N)));
      expect(
        done
          .flat()
          .filter((j) => (j.returnvalue as { done?: string } | null)?.done === 'key_moved')
          .map((j) => (j.data as ApplyJob).pipe)
          .sort(),
      ).toEqual(moved.map((p) => p.name).sort());
      expect(held.map((q) => q.name).sort()).toEqual(
        credentials
          .slice(0, 2)
          .map((k) => applyQueueName(k.keyId))
          .sort(),
      );
      expect(cloud.stats().rateLimited).toBe(0);
      expect(requests.get('429')).toBeUndefined();
      // Each pipe: its first read, its first change, the change to 3.
      expect(cloud.stats().requests.scalePipe).toEqual({ 200: 3 * N });
    } finally {
      await Promise.all(daemons.map((d) => d.stop({ timeoutMs: 2_000 })));
      await cloud.close();
    }
  }, 90_000);
});
