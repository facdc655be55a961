// Issue 21: "five failing pipes cannot spend a key's whole budget". Five pipes whose every call
// the platform answers 503 (the embedded cloud's per-pipe faults, over HTTP, the real Redis), on
// one key of 10 requests per 10 s (the platform's), ticks every second: the requests they spend
// in their first minute, in real time (the jobs' retries wait BullMQ's real delays: the pipe's
// backoff, backoff.ts). From a 1 s base the six attempts of each pipe's first turn went out
// within 31 s: 30 of the key's 60 units in a minute. The first ten minutes are counted on the
// backoff's own schedule (afterCallFailure and next-step.ts backingOff, ticks every 30 s).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generateFixtures, startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { afterCallFailure } from '../../src/daemon/lifecycle/backoff.js';
import { backingOff } from '../../src/daemon/lifecycle/next-step.js';
import { APPLY_ATTEMPTS } from '../../src/daemon/lanes/queues.js';
import type { PipeRecord } from '../../src/daemon/model/record.js';
import { REDIS_URL, cleanupPrefix, generatedPipes, policy, testConfig, uniquePrefix } from './helpers.js';

const prefix = uniquePrefix('backoff-budget');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const SEC = 1_000;
const MIN = 60 * SEC;
const WINDOW = 10 * SEC;
const PIPES = 5;

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/** The instants one failing pipe calls at over `spanMs`, its jitter at its shortest (the worst
 *  case): each turn's job tries APPLY_ATTEMPTS times, its retries after the backoff's delay; the
 *  next turn is queued by the first tick after its job at which the pipe is not backing off. */
function failingCalls(spanMs: number, tickMs: number, reconcileMs: number): number[] {
  const calls: number[] = [];
  let rec: Pick<PipeRecord, 'failures' | 'retryAt'> = { failures: 0, retryAt: null };
  let jobEnds = 0;
  for (let tick = 0; tick < spanMs; tick += tickMs) {
    if (tick < jobEnds || backingOff(rec as PipeRecord, tick)) continue;
    let at = tick;
    for (let attempt = 1; attempt <= APPLY_ATTEMPTS && at < spanMs; attempt++) {
      calls.push(at);
      const next = afterCallFailure(rec.failures + 1, at, reconcileMs, WINDOW, () => 0);
      rec = next.write;
      if (attempt < APPLY_ATTEMPTS) at += next.delayMs;
    }
    jobEnds = at;
  }
  return calls;
}

describe('five pipes whose calls always fail, on a key of 10 requests per 10 s', () => {
  it('spend at most a quarter of its budget in their first minute (measured), and a few requests a reconcile period after (the schedule)', async () => {
    // the schedule: first minute and first ten minutes, reconcile period 10 min, ticks every second
    const minute = failingCalls(MIN, SEC, 10 * MIN).length * PIPES;
    const tenMinutes = failingCalls(10 * MIN, SEC, 10 * MIN).length * PIPES;
    expect(minute).toBeLessThanOrEqual(15); // of 60 units
    expect(tenMinutes).toBeLessThanOrEqual(35); // of 600 units

    // measured: the daemon, its cron every second, for one minute of real time
    const fixtures = generateFixtures({ streamPipes: PIPES, rateLimit: { requests: 10, per: '10s' } });
    const cloud = await startCloud({ fixtures, port: 0 });
    const pipes = generatedPipes(PIPES, 'two');
    cloud.setFaults({ scalePipe: { error503: 1 } });
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes,
      keys: { default: { keyId: fixtures.apiKeys[0]!.keyId, keySecret: fixtures.apiKeys[0]!.keySecret } },
      rateLimit: { requests: 10, perMs: WINDOW },
      policies: { two: policy('two', { replicas: 2 }) },
    });
    const config = { ...base, evaluate: { ...base.evaluate, cron: '* * * * * *' } };
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      emitter: new DaemonEmitter(),
      watch: false,
      // the daemon's own lock (10 s): a 2 s lock lapsed on a loaded machine and a stalled job's
      // second run made one more request
      workerOptions: { drainDelay: 1 },
    });
    const spent = () => cloud.stats().requests.scalePipe?.[503] ?? 0;
    try {
      const start = Date.now();
      await daemon.start();
      // every pipe's first contact fails within the first window
      await new Promise((r) => setTimeout(r, MIN - (Date.now() - start)));
      const inAMinute = spent();
      console.log(
        `five failing pipes: ${inAMinute} requests in the first minute (of 60 units); schedule: ${minute} in 1 min, ${tenMinutes} in 10 min (of 600)`,
      );
      // each pipe at 0 s, 10-15 s and 30-45 s; its next at 70 s at the soonest
      expect(inAMinute).toBeGreaterThanOrEqual(PIPES * 2);
      expect(inAMinute).toBeLessThanOrEqual(PIPES * 3);
      expect(cloud.stats().rateLimited).toBe(0);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 90_000);
});
