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
import { enqueueTurn } from '../../src/daemon/lanes/enqueue.js';
import { Lanes } from '../../src/daemon/lanes/lanes.js';
import { APPLY_ATTEMPTS } from '../../src/daemon/lanes/queues.js';
import { silentLogger } from '../../src/daemon/model/logger.js';
import type { PipeRecord } from '../../src/daemon/model/record.js';
import { REDIS_URL, cleanupPrefix, generatedPipes, policy, testConfig, uniquePrefix } from './helpers.js';
import { tamperProxy } from './tamper-proxy.js';

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
    // each pipe's calls, in ms since the start: which pipe made a call too many, and when
    const proxy = await tamperProxy(cloud.url);
    const calls = new Map<string, number[]>();
    let start = Date.now();
    proxy.tamper = (req, upstream) => {
      const pipe = /\/pipes\/([^/]+)\/scaling$/.exec(req.url)?.[1];
      if (pipe) calls.set(pipe, [...(calls.get(pipe) ?? []), Date.now() - start]);
      return upstream();
    };
    const pipes = generatedPipes(PIPES, 'two');
    cloud.setFaults({ scalePipe: { error503: 1 } });
    const base = testConfig({
      baseUrl: proxy.url,
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
      start = Date.now();
      await daemon.start();
      // every pipe's first contact fails within the first window
      await new Promise((r) => setTimeout(r, MIN - (Date.now() - start)));
      const inAMinute = spent();
      const perPipe = [...calls.values()].map((at) => at.filter((ms) => ms < MIN));
      console.log(
        `five failing pipes: ${inAMinute} requests in the first minute (of 60 units); schedule: ${minute} in 1 min, ${tenMinutes} in 10 min (of 600); each pipe's, in ms: ${JSON.stringify(perPipe)}`,
      );
      // each pipe at 0 s, 10-15 s and 30-45 s; its next at 70 s at the soonest
      expect(inAMinute, JSON.stringify(perPipe)).toBeGreaterThanOrEqual(PIPES * 2);
      expect(inAMinute, JSON.stringify(perPipe)).toBeLessThanOrEqual(PIPES * 3);
      expect(cloud.stats().rateLimited).toBe(0);
      for (const at of perPipe) expect(at.length, JSON.stringify(perPipe)).toBeLessThanOrEqual(3);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await proxy.close();
      await cloud.close();
    }
  }, 90_000);

  // What the measure above caught once in eight runs (16 requests): a pipe's retry went out at once
  // after its backoff had just been renewed, its fourth call in the first minute. An evaluation
  // queues a turn only when the pipe is not backing off, but it may have read the record just
  // before the pipe's retry failed again; its turn, deduplicated onto that retry (delayed by the
  // new backoff), promoted it.
  it("a turn queued onto the pipe's retry while that waits out its backoff leaves it waiting", async () => {
    const lanes = new Lanes({
      redis,
      prefix,
      baseUrl: 'http://127.0.0.1:9',
      // every call fails: the retry waits the pipe's backoff, as work/turn-failure.ts chooses it
      processor: async () => {
        throw Object.assign(new Error('API_SERVER_ERROR'), { retryDelayMs: 60_000 });
      },
      workerOptions: { drainDelay: 1 },
      onWorkerError: () => {},
    });
    lanes.sync(
      { default: { keyId: 'backoff-hold', keySecret: 'x', rateLimit: { requests: 10, perMs: WINDOW } } },
      { timeoutMs: 1_000 },
    );
    const lane = lanes.get('default')!;
    const [pipe] = generatedPipes(1, 'two');
    try {
      const failed = new Promise<void>((resolve) => lanes.workers()[0]!.once('failed', () => resolve()));
      await enqueueTurn(lane, silentLogger, pipe!, 'none', Date.now(), 'first_contact');
      await failed;
      const [retry] = await lane.queue.getJobs(['delayed']);
      expect(retry?.attemptsMade).toBe(1);
      // nothing takes the job from here on: where it is shows whether the turn moved it
      await Promise.all(lanes.workers().map((w) => w.close()));
      // the evaluation's turn, a change (it goes before a read: its priority is raised)
      await enqueueTurn(lane, silentLogger, pipe!, 'up', Date.now(), 'change');
      expect(await lane.queue.getJobCountByTypes('wait', 'prioritized', 'active')).toBe(0);
      expect(await retry!.getState()).toBe('delayed');
    } finally {
      await Promise.all(lanes.workers().map((w) => w.close()));
      await lanes.closeClients();
      await Promise.all(lanes.queues().map(async (q) => q.obliterate({ force: true }).then(() => q.close())));
    }
  });
});
