// The per-key limiter lives in Redis: two replicas together stay within the platform's limit.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, refOf, type Daemon } from '../../src/daemon/index.js';
import type { PipeConfig } from '../../src/policy/types.js';
import { FAST_WORKERS, REDIS_URL, cleanupPrefix, drained, policy, testConfig, uniquePrefix } from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const N = 15;
const prefix = uniquePrefix('fleetlimit');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('two replicas under one key', () => {
  it("share the key's limit: all applied, no 429, the second window waited for", async () => {
    const cloud = await startCloud({
      fixtures: generateFixtures({ streamPipes: N, rateLimit: { requests: 10, per: '10s' } }),
      port: 0,
    });
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
      reconcileMs: 24 * 3_600_000,
      pipes,
      keys: { default: { keyId: 'bench-key-1-1', keySecret: 'bench-secret-1-1' } },
      rateLimit: { requests: 10, perMs: 10_000 },
      policies: { two: policy('two', { replicas: 2, replicaCpuMillicores: 250, replicaMemoryGb: 1 }) },
    });
    const daemons: Daemon[] = [0, 1].map(() =>
      createDaemon({
        config,
        redis,
        prefix,
        now: () => T0,
        emitter: new DaemonEmitter(),
        schedule: false,
        watch: false,
        workerOptions: FAST_WORKERS,
      }),
    );
    for (const p of pipes) {
      await daemons[0]!.store.write(p.name, {
        kind: 'stream',
        state: 'Running',
        applied: { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 },
        lastReadAt: T0,
        ref: refOf(p),
      });
    }
    const started = Date.now();
    for (const d of daemons) await d.start();
    try {
      await Promise.all(daemons.map((d) => d.tick(T0)));
      await drained(daemons, 40_000);
    } finally {
      for (const d of daemons) await d.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
    expect(pipes.map((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas)).toEqual(Array(N).fill(2));
    expect(cloud.stats().rateLimited).toBe(0);
    expect(cloud.stats().requests.scalePipe).toEqual({ 200: N });
    expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
  }, 60_000);
});
