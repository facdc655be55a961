// Issue 21: a pipe whose calls keep failing backs off (src/daemon/lifecycle/backoff.ts, next-step.ts
// backingOff), so five failing pipes cannot spend their key's budget. Ten pipes on one key, five of
// which the platform answers 503 every time (the cloud's per-pipe faults), the daemon on its own
// cron (every second, real time: the retries' delays are BullMQ's, in real time). The healthy
// pipes are changed at once; each failing pipe spends its job's attempts (its key's window of 1 s, then 2 s, 4 s... apart,
// stretched by up to half: 31-46 s)
// and then nothing while its backoff lasts, however many ticks come. Asserts counts and order,
// not timings.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generateFixtures, startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../../src/daemon/index.js';
import { APPLY_ATTEMPTS } from '../../../src/daemon/lanes/queues.js';
import type { PipeConfig } from '../../../src/policy/index.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  generatedPipes,
  collect,
  policy,
  testConfig,
  uniquePrefix,
  until,
  waitForEvent,
} from '../helpers.js';

const prefix = uniquePrefix('backoff');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('pipes whose calls keep failing', () => {
  it("back off: five failing pipes spend their job's attempts and then nothing for a while; the healthy pipes are changed at once", async () => {
    const N = 10;
    const FAILING = 5;
    const fixtures = generateFixtures({ streamPipes: N, rateLimit: { requests: 10, per: '1s' } });
    const cloud = await startCloud({ fixtures, port: 0 });
    const pipes: PipeConfig[] = generatedPipes(N, 'two');
    const failing = pipes.slice(0, FAILING);
    const healthy = pipes.slice(FAILING);
    cloud.setFaults({ scalePipe: { error503: 1, pipes: failing.map((p) => p.pipeId) } });
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes,
      keys: { default: { keyId: fixtures.apiKeys[0]!.keyId, keySecret: fixtures.apiKeys[0]!.keySecret } },
      rateLimit: { requests: 10, perMs: 1_000 },
      policies: { two: policy('two', { replicas: 2 }) },
    });
    const config = { ...base, evaluate: { ...base.evaluate, cron: '* * * * * *' } };
    const emitter = new DaemonEmitter();
    const backoffs = collect(emitter, 'backoff');
    const ticks = collect(emitter, 'tick');
    const evaluations = collect(emitter, 'evaluation');
    const daemon = createDaemon({ config, redis, prefix, emitter, watch: false, workerOptions: FAST_WORKERS });
    const spentByFailing = () => cloud.stats().requests.scalePipe?.[503] ?? 0;
    try {
      await daemon.start();
      // the healthy pipes: read and changed while the failing ones are still in their first job
      await until(
        () => healthy.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
        20_000,
        'healthy pipes at 2',
      );

      // each failing pipe's job spends its attempts, then ends
      const failures = async () => Promise.all(failing.map(async (p) => (await daemon.store.read(p.name)).failures));
      await until(
        async () => (await failures()).every((n) => n >= APPLY_ATTEMPTS),
        80_000,
        'every failing pipe through its attempts',
      );
      await until(
        async () =>
          (await daemon
            .queues()
            .find((q) => q.name.startsWith('apply-'))!
            .getActiveCount()) === 0,
        10_000,
        'no turn in flight',
      );
      expect(spentByFailing()).toBe(FAILING * APPLY_ATTEMPTS);

      // ticks keep coming, every second; the failing pipes' next attempts wait for their backoff
      // (32 s at least after 6 failures in a row): no request for them
      const after = ticks.length;
      const evaluated = evaluations.length;
      await waitForEvent(emitter, 'tick', () => ticks.length >= after + 4, 15_000);
      await until(() => evaluations.length >= evaluated + 3 * N, 15_000, 'the evaluations of three ticks');
      expect(spentByFailing()).toBe(FAILING * APPLY_ATTEMPTS);
      for (const p of failing) {
        const rec = await daemon.store.read(p.name);
        expect(rec.failures, p.name).toBe(APPLY_ATTEMPTS);
        expect(rec.retryAt, p.name).toBeGreaterThan(Date.now());
      }
      // once per change of state: one backoff event per failing pipe, none for the healthy ones
      expect(backoffs.map((b) => `${b.pipe} ${b.backingOff}`).sort()).toEqual(
        failing.map((p) => `${p.name} true`).sort(),
      );
      // what the healthy pipes spent: a read and a change each, nothing more
      expect(cloud.stats().requests.scalePipe?.[200]).toBe(2 * healthy.length);
      expect(cloud.stats().rateLimited).toBe(0);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 120_000);
});
