// 30 pipes change at one boundary under a limit of the platform's shape (10 requests per window
// per key, the window 5 s here instead of 10 s, so the test takes half a minute; the pacing margin
// is 1% of the window, so far shorter windows leave too little for a loaded machine): all are
// applied with no 429 in steady operation; a 429 the cloud injects pauses the key's queue until
// the window resets, loses nothing and spends no attempt.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedCloud, generatedPipeIds, generateFixtures, startCloud } from '../../src/cloud/index.js';
import type { ApplyJob } from '../../src/daemon/lanes/queues.js';
import { createDaemon, DaemonEmitter, refOf, type Daemon } from '../../src/daemon/index.js';
import type { PipeConfig } from '../../src/policy/types.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  waitForEvent,
} from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const N = 30;
const prefix = uniquePrefix('ratelimit');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
let cloud: EmbeddedCloud;
let daemon: Daemon;
const emitter = new DaemonEmitter();
let clock = T0;

// generateFixtures' layout: one organization, one service, pipes stream-1..stream-N.
const pipes: PipeConfig[] = Array.from({ length: N }, (_, i) => ({
  name: `stream-${i + 1}`,
  ...generatedPipeIds(i + 1),
  policy: 'boundary',
  key: 'default',
  bounds: {},
}));

beforeAll(async () => {
  cloud = await startCloud({
    fixtures: generateFixtures({ streamPipes: N, rateLimit: { requests: 10, per: '5s' } }),
    port: 0,
  });
  const config = testConfig({
    baseUrl: cloud.url,
    prefix,
    reconcileMs: 24 * 60 * MIN,
    keys: { default: { keyId: 'bench-key-1-1', keySecret: 'bench-secret-1-1' } },
    rateLimit: { requests: 10, perMs: 5_000 },
    pipes,
    policies: {
      boundary: policy('boundary', { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 }, [
        oneOff('up', T0 + 10 * MIN, T0 + 20 * MIN, { replicas: 3 }),
      ]),
    },
  });
  daemon = createDaemon({
    config,
    redis,
    prefix,
    now: () => clock,
    emitter,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  // The daemon has met these pipes before (first contact is its own 30 requests of budget).
  for (const p of pipes) {
    await daemon.store.write(p.name, {
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 },
      lastReadAt: T0,
      ref: refOf(p),
    });
  }
  await daemon.start();
});

afterAll(async () => {
  await daemon?.stop({ timeoutMs: 2_000 });
  await cloud?.close();
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

const replicasInCloud = () => pipes.map((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas);

describe('30 pipes at one boundary under 10 requests per 5 s', () => {
  it('applies all of them with no 429', async () => {
    const retries = collect(emitter, 'apply:retry');
    clock = T0 + 10 * MIN;
    await daemon.tick(clock);
    await drained([daemon], 60_000);
    expect(replicasInCloud()).toEqual(Array(N).fill(3));
    expect(cloud.stats().rateLimited).toBe(0);
    expect(cloud.stats().requests.scalePipe).toEqual({ 200: N });
    expect(retries).toHaveLength(0);
  }, 60_000);

  it('honors an injected 429: the queue waits for the reset, nothing is lost, no attempt is spent', async () => {
    const retries = collect(emitter, 'apply:retry');
    const failed = collect(emitter, 'decision');
    cloud.setFaults({ scalePipe: { error429: 1 } });
    const limited = waitForEvent(emitter, 'rate-limited', () => true, 30_000);
    clock = T0 + 20 * MIN;
    await daemon.tick(clock);
    const hit = await limited;
    cloud.setFaults({});
    expect(hit.resetMs).toBeGreaterThan(0);
    await drained([daemon], 60_000);
    expect(replicasInCloud()).toEqual(Array(N).fill(1));
    expect(cloud.stats().rateLimited).toBe(1);
    expect(retries).toHaveLength(0);
    expect(failed.filter((d) => d.result === 'failed')).toHaveLength(0);
    // Every apply job finished on its first attempt: the 429 put one back without counting it.
    const [queue] = daemon.queues().filter((q) => q.name.startsWith('apply-'));
    const done = await queue!.getJobs(['completed'], 0, -1);
    const downs = done.filter((j) => (j.data as ApplyJob).tickAt === clock);
    expect(downs).toHaveLength(N);
    expect(downs.every((j) => j.attemptsMade <= 1)).toBe(true);
  }, 90_000);
});
