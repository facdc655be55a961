// Issue 10 item 6: stop ends within its grace period plus one second whatever is in flight. A
// request the platform holds 25 s (the cloud's fault injection) used to hold stop in pool.close()
// for the whole request. Past the grace, the lanes' own Pools are destroyed and the request is
// cut: a change cut so may still be carried out by the platform, so it is not sent again blindly;
// the pipe's next turn is a read that settles it, done at the next start.
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import { STOP_AFTER_GRACE_MS } from '../../src/daemon/runtime/shutdown.js';
import { applyQueueName } from '../../src/daemon/lanes/queues.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from './helpers.js';

const prefix = uniquePrefix('stopgrace');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('stop under a request held by the platform', () => {
  it("ends within grace + 1 s, and the pipe's unfinished turn is back in the queue and done at the next start", async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    let clock = T0;
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 24 * 60 * MIN,
      pipes: [demoPipe('orders-events', 'streams')],
      policies: {
        streams: policy('streams', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
          oneOff('peak', T0 + 10 * MIN, T0 + 60 * MIN, { replicas: 6 }),
        ]),
      },
    });
    const make = (emitter: DaemonEmitter): Daemon =>
      createDaemon({
        config,
        redis,
        prefix,
        now: () => clock,
        emitter,
        schedule: false,
        watch: false,
        workerOptions: FAST_WORKERS,
      });
    const replicas = () => cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas;
    const queue = new Queue(applyQueueName(DEMO.keyId), { connection: redis, prefix });
    let second: Daemon | undefined;
    try {
      const emitter = new DaemonEmitter();
      const first = make(emitter);
      await first.start();
      await first.tick(T0);
      await drained([first]);
      expect(replicas()).toBe(3);

      cloud.setFaults({ scalePipe: { latency: { probability: 1, minMs: 25_000, maxMs: 25_000 } } });
      clock = T0 + 10 * MIN;
      await first.tick(clock);
      // a request of the turn (the change, or the read before it) is held by the platform
      await until(() => (cloud.stats().faults.latency ?? 0) >= 1, 20_000, 'a request held by the cloud');
      const graceMs = 2_000;
      const t0 = performance.now();
      await first.stop({ timeoutMs: graceMs });
      const took = performance.now() - t0;
      expect(took).toBeLessThan(graceMs + STOP_AFTER_GRACE_MS);
      expect(STOP_AFTER_GRACE_MS).toBeLessThanOrEqual(1_000);

      // nothing is lost nor stuck active: the pipe's next turn waits for a worker (the read that
      // settles a cut change, or the retry of a cut read, delayed by its backoff)
      const counts = await queue.getJobCounts('active', 'delayed', 'wait', 'prioritized', 'failed');
      expect(counts.active).toBe(0);
      expect(counts.failed).toBe(0);
      expect((counts.delayed ?? 0) + (counts.wait ?? 0) + (counts.prioritized ?? 0)).toBe(1);
      expect(replicas()).toBe(3);

      cloud.setFaults({});
      second = make(new DaemonEmitter());
      await second.start();
      await drained([second], 20_000);
      // the cut change is read first; not shown yet, it is on its way (it may still land) until its
      // limit (evaluate.actuation.max, 10 min), then sent again: past it, at target either way
      clock += 11 * MIN;
      await second.tick(clock);
      await drained([second], 20_000);
      expect(replicas()).toBe(6);
    } finally {
      await second?.stop({ timeoutMs: 2_000 });
      await queue.close();
      await cloud.close();
    }
  }, 45_000);
});
