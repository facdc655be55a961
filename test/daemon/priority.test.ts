// Under a tight limit, scale-ups go ahead of scale-downs that were waiting before them.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, refOf } from '../../src/daemon/index.js';
import type { PipeConfig } from '../../src/policy/types.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  drained,
  policy,
  testConfig,
  uniquePrefix,
} from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const prefix = uniquePrefix('priority');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('apply order', () => {
  it('sends scale-ups before the scale-downs queued ahead of them', async () => {
    const cloud = await startCloud({ fixtures: generateFixtures({ streamPipes: 6, rateLimit: false }), port: 0 });
    const pipes: PipeConfig[] = Array.from({ length: 6 }, (_, i) => ({
      name: `stream-${i + 1}`,
      ...generatedPipeIds(i + 1),
      policy: 'three',
      key: 'default',
      bounds: {},
    }));
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 24 * 3_600_000,
      pipes,
      keys: { default: { keyId: 'bench-key-1-1', keySecret: 'bench-secret-1-1' } },
      rateLimit: { requests: 1, perMs: 400 },
      policies: { three: policy('three', { replicas: 3, replicaCpuMillicores: 250, replicaMemoryGb: 1 }) },
    });
    const emitter = new DaemonEmitter();
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      now: () => T0,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    // The first three run 5 replicas (they go down), the last three 1 (they go up); the config
    // lists the downs first, so their jobs are enqueued first.
    for (const [i, p] of pipes.entries()) {
      const replicas = i < 3 ? 5 : 1;
      cloud.store.pipe(p.pipeId)!.scaling.replicas = replicas;
      await daemon.store.write(p.name, {
        kind: 'stream',
        state: 'Running',
        applied: { replicas, replicaCpuMillicores: 250, replicaMemoryGb: 1 },
        lastReadAt: T0,
        ref: refOf(p),
      });
    }
    const applied = collect(emitter, 'decision');
    await daemon.start();
    try {
      await daemon.tick(T0);
      await drained([daemon], 20_000);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
    const order = applied.filter((d) => d.result === 'applied').map((d) => d.direction);
    expect(order.filter((d) => d === 'up')).toHaveLength(3);
    expect(order.filter((d) => d === 'down')).toHaveLength(3);
    // At most the job already taken when the others arrived runs out of turn.
    expect(order.slice(0, 4).filter((d) => d === 'up').length).toBeGreaterThanOrEqual(3);
  }, 30_000);
});
