// A small fleet meets its window starts, with no fault: 100 stream pipes on one key at 50 requests
// a second, changes in force 4 s after their answer (evaluate.actuation.expected 4s, firstRead its
// default), ticks every 3 s, two one-off windows. Each scale-up's confirming read is queued for its
// instant and takes a slot the changes leave free, so the lead plan's slots hold: every window
// start confirmed at target by its boundary (before, 114 of 200 were late by 3-15 s, their
// confirmation reads found due at ticks and paced by the read share). The embedded cloud over
// HTTP with its own limiter, the real clock injected.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type StoredVerdict } from '../../src/daemon/index.js';
import type { Config } from '../../src/config/types.js';
import type { PipeConfig } from '../../src/policy/types.js';
import { FAST_WORKERS, REDIS_URL, cleanupPrefix, oneOff, policy, testConfig, uniquePrefix, until } from './helpers.js';

const N = 100;
const RATE = { requests: 50, perMs: 1_000 };
const prefix = uniquePrefix('lead-small-fleet');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('a small fleet at its windows', () => {
  it('100 pipes at 50 per s, 4 s propagation, ticks every 3 s: >= 99 % of 200 window starts met, no 429', async () => {
    const fixtures = generateFixtures({ streamPipes: N, rateLimit: { requests: RATE.requests, per: '1s' } });
    const cloud = await startCloud({ fixtures, port: 0 });
    cloud.setPropagation({ stream: 4_000 });
    const { keyId, keySecret } = fixtures.apiKeys[0]!;
    const pipes: PipeConfig[] = Array.from({ length: N }, (_, i) => ({
      name: `stream-${i + 1}`,
      ...generatedPipeIds(i + 1),
      policy: 'w',
      key: 'default',
      bounds: {},
    }));
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes,
      keys: { default: { keyId, keySecret } },
      rateLimit: RATE,
      policies: { w: policy('w', { replicas: 2 }) },
    });
    const config: Config = {
      ...base,
      evaluate: {
        ...base.evaluate,
        cron: '*/3 * * * * *',
        actuation: { expectedMs: 4_000, maxMs: 600_000, minSamples: 20 },
      },
    };
    const emitter = new DaemonEmitter();
    const verdicts: (StoredVerdict & { pipe: string })[] = [];
    emitter.on('verdict', (v) => verdicts.push(v));
    const sends = new Map<string, number[]>();
    emitter.on('decision', (d) => {
      if (d.result === 'applied' && d.after.replicas === 4)
        sends.set(d.pipe, [...(sends.get(d.pipe) ?? []), Date.now()]);
    });
    const confirms = new Map<string, number[]>();
    emitter.on('confirmed', (c) => confirms.set(c.pipe, [...(confirms.get(c.pipe) ?? []), c.confirmedAt]));
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      emitter,
      now: () => Date.now(),
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    await daemon.start();
    try {
      await until(
        () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
        60_000,
        'every pipe at the baseline',
      );
      // two one-off windows at 4 replicas, 80 s apart: each start's 100 scale-ups lead it by about
      // 200 slots at 45 per s, the 15 s before the confirming read and two ticks
      const T1 = Math.ceil((Date.now() + 35_000) / 1_000) * 1_000;
      const T2 = T1 + 80_000;
      const windows = [
        oneOff('first', T1, T1 + 20_000, { replicas: 4 }),
        oneOff('second', T2, T2 + 20_000, { replicas: 4 }),
      ];
      cloud.resetStats();
      expect(await daemon.reload({ ...config, policies: { w: policy('w', { replicas: 2 }, windows) } })).toBe(true);
      const starts = () => verdicts.filter((v) => v.boundary === T1 || v.boundary === T2);
      await until(() => starts().length >= 2 * N, T2 + 60_000 - Date.now(), 'a verdict for every window start');
      const met = starts().filter((v) => v.verdict === 'met').length;
      const late = starts()
        .filter((v) => v.verdict !== 'met')
        .map(
          (v) =>
            `${v.pipe} ${v.boundary === T1 ? 1 : 2} ${v.verdict}${v.lateMs !== undefined ? ` by ${v.lateMs} ms` : ''} sent ${(sends.get(v.pipe) ?? []).map((t) => t - v.boundary).join('/')} confirmed ${(confirms.get(v.pipe) ?? []).map((t) => t - v.boundary).join('/')}`,
        );
      expect(met, late.join(', ')).toBeGreaterThanOrEqual(0.99 * 2 * N);
      expect(cloud.stats().rateLimited).toBe(0);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 240_000);
});
