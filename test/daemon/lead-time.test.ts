// Lead time in the daemon: with leadTime auto, a window's scale-ups go from each pipe's slot in its
// key's lead plan and are all answered before the window opens; its scale-downs wait for it. A
// small fleet on one key against the embedded cloud's own limiter (10 per 1 s, the platform's
// ratio compressed), the daemon's cron ticking every second and its clock the real one, injected.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { leadPlan, leadPlanSpan } from '../../src/policy/lead-plan.js';
import type { PipeConfig } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { FAST_WORKERS, REDIS_URL, cleanupPrefix, oneOff, policy, testConfig, uniquePrefix, until } from './helpers.js';

const N = 40;
const RATE = { requests: 10, perMs: 1_000 };
const prefix = uniquePrefix('lead');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('leadTime auto', () => {
  it('lands every scale-up by the boundary, and no scale-down before it', async () => {
    const fixtures = generateFixtures({ streamPipes: N, rateLimit: { requests: RATE.requests, per: '1s' } });
    const cloud = await startCloud({ fixtures, port: 0 });
    const { keyId, keySecret } = fixtures.apiKeys[0]!;
    const pipes: PipeConfig[] = Array.from({ length: N }, (_, i) => ({
      name: `stream-${i + 1}`,
      ...generatedPipeIds(i + 1),
      policy: i % 2 === 0 ? 'up' : 'down',
      key: 'default',
      bounds: {},
    }));
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes,
      keys: { default: { keyId, keySecret } },
      rateLimit: RATE,
      policies: { up: policy('up', { replicas: 2 }), down: policy('down', { replicas: 2 }) },
    });
    const config: Config = { ...base, evaluate: { ...base.evaluate, cron: '* * * * * *' } };
    const emitter = new DaemonEmitter();
    const applied = new Map<string, { at: number; replicas: number }[]>();
    emitter.on('decision', (d) => {
      if (d.result !== 'applied') return;
      applied.set(d.pipe, [...(applied.get(d.pipe) ?? []), { at: Date.now(), replicas: d.after.replicas ?? 0 }]);
    });
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      emitter,
      now: () => Date.now(),
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await daemon.start();
      // first contact: every pipe from the 1 replica it runs to the baseline's 2
      await until(
        () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
        30_000,
        'every pipe at the baseline',
      );

      // The boundary: at T the up pipes go to 4, the down pipes to 1.
      const T = Math.ceil((Date.now() + 12_000) / 1_000) * 1_000;
      const next: Config = {
        ...config,
        policies: {
          up: policy('up', { replicas: 2 }, [oneOff('peak', T, T + 3_600_000, { replicas: 4 })]),
          down: policy('down', { replicas: 2 }, [oneOff('quiet', T, T + 3_600_000, { replicas: 1 })]),
        },
      };
      const span = leadPlanSpan(Date.now());
      const plan = leadPlan(next, span.from, span.to);
      const ups = pipes.filter((p) => p.policy === 'up');
      const downs = pipes.filter((p) => p.policy === 'down');
      // 20 changes at 90 % of 10 per s, the last two 1 s ticks before T; only the scale-ups have
      // slots at T (the scale-downs have theirs when their window ends, back up to the baseline)
      expect(ups.every((p) => plan.slots.get(p.name)![0]!.boundary === T)).toBe(true);
      expect(downs.every((p) => plan.slots.get(p.name)![0]!.boundary === T + 3_600_000)).toBe(true);
      cloud.resetStats();
      expect(await daemon.reload(next)).toBe(true);

      await until(() => Date.now() >= T + 500, 30_000, 'the boundary');
      // Every scale-up was answered before T, none before its slot's tick.
      for (const p of ups) {
        const up = applied.get(p.name)!.find((a) => a.replicas === 4);
        expect(up, p.name).toBeDefined();
        expect(up!.at, p.name).toBeLessThan(T);
        expect(up!.at, p.name).toBeGreaterThanOrEqual(plan.slots.get(p.name)![0]!.start - 1_000);
      }
      // No scale-down went before T; all of them go within the key's bound after it.
      const down = (p: PipeConfig) => applied.get(p.name)?.find((a) => a.replicas === 1);
      await until(() => downs.every((p) => down(p) !== undefined), 30_000, 'every scale-down answered');
      for (const p of downs) expect(down(p)!.at, p.name).toBeGreaterThanOrEqual(T);
      expect(downs.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 1)).toBe(true);
      // One change each, no 429: an early change is still one change.
      expect(cloud.stats().requests.scalePipe).toEqual({ 200: N });
      expect(cloud.stats().rateLimited).toBe(0);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 90_000);
});
