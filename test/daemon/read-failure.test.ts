// Issue 21: never silent. A read that fails on every attempt (a first contact, a reconcile read:
// 503s, against the embedded cloud over HTTP, the real Redis, the daemon's clock injected) is
// reported failed once per run of failures: one `decision` failed naming the read (the audit line
// "pipe read failed", pipescaler_pipe_failing, PipescalerApplyFailing), not again while the reads
// keep failing, and cleared when a read answers (read:recovered). The key's window is 100 ms, so
// the jobs' retries (from one window, doubling: real time) take a few seconds.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { REPORT_AT } from '../../src/daemon/work/turn-failure.js';
import { APPLY_ATTEMPTS } from '../../src/daemon/lanes/queues.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  demoPipe,
  drained,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from './helpers.js';

const prefix = uniquePrefix('read-failure');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const ORDERS = DEMO.pipes['orders-events'];
const NIGHTLY = DEMO.pipes['nightly-s3'];

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('a read that fails on every attempt', () => {
  it('is reported failed once per run of failures (first contact and reconcile alike), and cleared by a read that answers', async () => {
    let clock = T0;
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false, now: () => clock });
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes: [demoPipe('orders-events', 'base'), demoPipe('nightly-s3', 'base-objects')],
      policies: {
        base: policy('base', { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }),
        'base-objects': policy('base-objects', { concurrency: 2 }),
      },
      reconcileMs: 2 * MIN,
      rateLimit: { requests: 100, perMs: 100 },
    });
    const emitter = new DaemonEmitter();
    const decisions = collect(emitter, 'decision');
    const recovered = collect(emitter, 'read:recovered');
    const outcomes = collect(emitter, 'outcome');
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      now: () => clock,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    const tick = async (at: number) => {
      clock = at;
      await daemon.tick(at);
      await drained([daemon], 30_000);
    };
    const failed = () => decisions.filter((d) => d.result === 'failed');
    try {
      // nightly-s3 cannot be read from the start; orders-events is read, then its reads fail
      cloud.setFaults({ scalePipe: { error503: 1, pipes: [NIGHTLY] } });
      await daemon.start();
      await tick(T0);
      expect(failed()).toMatchObject([
        { pipe: 'nightly-s3', result: 'failed', reason: 'API_SERVER_ERROR', read: 'first_contact' },
      ]);
      // nightly-s3 answers now; orders-events' reads fail
      cloud.setFaults({ scalePipe: { error503: 1, pipes: [ORDERS] } });
      await tick(T0 + 3 * MIN);
      expect(failed().map((d) => `${d.pipe} ${d.read}`)).toEqual([
        'nightly-s3 first_contact',
        'orders-events reconcile',
      ]);
      expect(recovered.map((r) => r.pipe)).toEqual(['nightly-s3']);
      expect((await daemon.store.read('orders-events')).failures).toBe(APPLY_ATTEMPTS);
      expect(REPORT_AT).toBeLessThan(APPLY_ATTEMPTS);
      expect(outcomes.filter((o) => o.outcome === 'failed').map((o) => o.pipe)).toEqual([
        'nightly-s3',
        'orders-events',
      ]);

      // a later turn fails again: the same run of failures, not reported again; its retry (6.4 s
      // later: the window doubled six times) answers and clears it
      clock = T0 + 30 * MIN;
      await daemon.tick(clock);
      const orders = async () => (await daemon.store.read('orders-events')).failures;
      await until(async () => (await orders()) > APPLY_ATTEMPTS, 20_000, 'the next failure');
      cloud.setFaults({});
      await drained([daemon], 30_000);
      expect(failed()).toHaveLength(2);
      expect(recovered.map((r) => r.pipe)).toEqual(['nightly-s3', 'orders-events']);
      expect(await orders()).toBe(0);
      expect(cloud.store.pipe(ORDERS)?.scaling.replicas).toBe(2);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 90_000);
});
