// A change whose job outlives its lock (an event-loop stall: the lock is not renewed, BullMQ takes
// the job as stalled and runs it again while the first attempt still waits for its answer). The
// change's intent is in the pipe's record before its request goes out: the second attempt never
// sends it again, the answer is recorded once whichever attempt is left, and no read of the
// daemon's own values is drift. Real BullMQ Workers (a lock of 1 s that is never renewed), the
// embedded cloud over HTTP behind a proxy that forwards the change and holds its answer.
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, refOf } from '../../src/daemon/index.js';
import { HistoryStore } from '../../src/history/index.js';
import { tamperProxy } from './tamper-proxy.js';
import {
  DEMO,
  REDIS_URL,
  cleanupPrefix,
  collect,
  demoPipe,
  drained,
  policy,
  testConfig,
  uniquePrefix,
  until,
  waitForEvent,
} from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const prefixes: string[] = [];

afterAll(async () => {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
});

/** The lock lapses a second after the job starts and is never renewed: a stall of the event loop
 *  as BullMQ sees it. The stalled check runs every 300 ms. */
const STALLING_WORKERS = { stalledInterval: 300, lockDuration: 1_000, lockRenewTime: 3_600_000, drainDelay: 1 };

/** The platform's side: a propagation (the cloud then runs on the daemon's clock), the pipe
 *  changed by hand after the daemon's last read, before its change goes out, and the answer held
 *  until the queues are drained (whatever the second attempt queued has run) rather than only
 *  until that attempt is done. */
interface Platform {
  readonly propagationMs?: number;
  readonly byHand?: number;
  readonly holdUntilDrained?: boolean;
}

/**
 * One pipe at replicas 2 whose policy wants 4. The change's answer is held at the proxy (the
 * cloud has carried it out) until the job was taken as stalled and its second attempt finished;
 * `beforeSecond` runs once the job is stalled (the clock moved on, or not).
 */
async function stallMidChange(
  name: string,
  beforeSecond: (setClock: (at: number) => void) => void,
  platform: Platform = {},
) {
  const prefix = uniquePrefix(name);
  prefixes.push(prefix);
  let clock = T0;
  const cloud = await startCloud({
    fixtures: 'config/cloud.yaml',
    port: 0,
    rateLimit: false,
    ...(platform.propagationMs !== undefined ? { now: () => clock } : {}),
  });
  if (platform.propagationMs !== undefined)
    cloud.setPropagation({ default: platform.propagationMs, reads: 'transient' });
  if (platform.byHand !== undefined) cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas = platform.byHand;
  const proxy = await tamperProxy(cloud.url);
  let arrived!: () => void;
  let release!: () => void;
  const inFlight = new Promise<void>((r) => (arrived = r));
  const released = new Promise<void>((r) => (release = r));
  let held = false;
  proxy.tamper = async (req, upstream) => {
    if (req.method === 'PATCH' && req.body.includes('"replicas":4') && !held) {
      held = true;
      const answer = await upstream();
      arrived();
      await released;
      return answer;
    }
    return upstream();
  };
  const config = testConfig({
    baseUrl: proxy.url,
    prefix,
    reconcileMs: 24 * 3_600_000,
    pipes: [demoPipe('orders-events', 'streams')],
    policies: { streams: policy('streams', { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
  });
  const events = new DaemonEmitter();
  const daemon = createDaemon({
    config,
    redis,
    prefix,
    now: () => clock,
    emitter: events,
    schedule: false,
    watch: false,
    workerOptions: STALLING_WORKERS,
  });
  await daemon.store.write('orders-events', {
    kind: 'stream',
    state: 'Running',
    applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
    lastApplied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
    lastReadAt: T0 - 1,
    ref: refOf(config.pipes[0]!),
  });
  const outcomes = collect(events, 'outcome');
  const drifts = collect(events, 'drift');
  const decisions = collect(events, 'decision');
  const landed = collect(events, 'change:landed');
  await daemon.start();
  let stalledId: string | undefined;
  let second: unknown;
  const secondDone = new Promise<void>((resolve) => {
    for (const w of daemon.workers()) {
      w.on('stalled', (id) => {
        stalledId = id;
        beforeSecond((at) => (clock = at));
      });
      w.on('completed', (job: Job) => {
        if (stalledId === undefined || job.id !== stalledId) return;
        second = job.returnvalue;
        resolve();
      });
    }
  });
  const changes = () => proxy.seen.filter((s) => s.method === 'PATCH' && s.body !== '' && s.body !== '{}');
  try {
    await daemon.tick(T0);
    await inFlight;
    // the first attempt waits for its answer past its lock: the job is stalled, run again, done
    await secondDone;
    if (platform.holdUntilDrained === true) await drained([daemon]);
    release();
    await waitForEvent(events, 'decision', (d) => d.result === 'applied' && d.pipe === 'orders-events', 10_000).catch(
      () => {},
    );
    await drained([daemon]);
    // a later read of the pipe (its reconcile is due): the daemon's own values are no drift
    clock = T0 + 25 * 3_600_000;
    await daemon.tick(clock);
    await drained([daemon]);
    const history = new HistoryStore(redis, prefix);
    await until(
      async () =>
        (await history.read('orders-events')).entries.some(
          (e) => e.outcome === 'applied' || e.outcome === 'landed_late',
        ),
      10_000,
      'the history entry',
    );
    return {
      second,
      changes: changes(),
      outcomes,
      drifts,
      decisions,
      landed,
      rec: await daemon.store.read('orders-events'),
      history: (await history.read('orders-events')).entries,
      platform: cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling,
      pending: cloud.store.pendingChanges(DEMO.pipes['orders-events']),
    };
  } finally {
    release();
    await daemon.stop({ timeoutMs: 2_000 });
    await proxy.close();
    await cloud.close();
  }
}

describe("a stall longer than the job's lock in the middle of a change", () => {
  it('within the request time: the second attempt waits for the first, which records the answer once', async () => {
    const r = await stallMidChange('stall-short', () => {});
    expect(r.second).toEqual({ done: 'nothing', step: 'wait', reason: 'sending' });
    expect(r.changes).toHaveLength(1);
    expect(r.platform.replicas).toBe(4);
    // its audit line names the Idempotency-Key it was sent with
    expect(r.decisions.filter((d) => d.result === 'applied')).toEqual([
      expect.objectContaining({ idempotencyKey: r.changes[0]!.idempotencyKey }),
    ]);
    expect(r.landed).toEqual([]);
    expect(r.outcomes.filter((o) => o.outcome === 'applied')).toHaveLength(1);
    expect(r.history.filter((e) => e.outcome === 'applied')).toHaveLength(1);
    expect(r.outcomes.filter((o) => o.outcome === 'landed_late' || o.outcome === 'unsettled')).toHaveLength(0);
    expect(r.drifts).toEqual([]);
    expect(r.outcomes.filter((o) => o.outcome.startsWith('drift'))).toEqual([]);
    expect(r.rec).toMatchObject({
      unsettled: null,
      confirming: null,
      drifts: 0,
      lastApplied: { replicas: 4 },
      confirmed: { values: { replicas: 4 } },
    });
  }, 40_000);

  it("past the request's time: the second attempt settles it with a read, the late answer is its audit line, one outcome", async () => {
    const r = await stallMidChange('stall-long', (setClock) => setClock(T0 + 60_000));
    expect(r.second).toEqual({ done: 'read', why: 'settle', drift: false });
    expect(r.changes).toHaveLength(1);
    // the read found it carried out: the daemon's own change, landed, never drift
    expect(r.outcomes.filter((o) => o.outcome === 'landed_late')).toHaveLength(1);
    expect(r.platform.replicas).toBe(4);
    // its 200 came after that read: its audit line says the outcome was reported; one change, one outcome
    // both audit lines name its Idempotency-Key: the landed one counts, the 200's says it was reported
    const key = r.changes[0]!.idempotencyKey;
    expect(key).toBeDefined();
    expect(r.landed).toEqual([
      expect.objectContaining({ pipe: 'orders-events', sent: { replicas: 4 }, idempotencyKey: key }),
    ]);
    expect(r.decisions.filter((d) => d.result === 'applied')).toEqual([
      expect.objectContaining({ outcomeReported: 'landed_late', idempotencyKey: key }),
    ]);
    expect(r.outcomes.filter((o) => o.outcome === 'applied')).toHaveLength(0);
    expect(r.history.filter((e) => e.outcome === 'landed_late')).toHaveLength(1);
    expect(r.history.filter((e) => e.outcome === 'applied')).toHaveLength(0);
    expect(r.drifts).toEqual([]);
    expect(r.outcomes.filter((o) => o.outcome.startsWith('drift'))).toEqual([]);
    expect(r.rec).toMatchObject({
      unsettled: null,
      confirming: null,
      drifts: 0,
      lastApplied: { replicas: 4 },
      confirmed: { values: { replicas: 4 } },
    });
  }, 40_000);

  // Found by the model (seed 11, path 287): the pipe was changed by hand (to 3) after the daemon's
  // last read; its change to 4 went out, the cloud took it (in force 90 s later) and the job
  // stalled past the request's time. The second attempt's settle read showed the hand's 3: the
  // daemon took it for a hand change after its own, decided again and sent 4 again while the first
  // was on its way and its first attempt still waited for its answer.
  it("past the request's time, the pipe changed by hand before the change: the settle read shows the hand, the change is on its way, never sent again", async () => {
    const r = await stallMidChange('stall-hand', (setClock) => setClock(T0 + 60_000), {
      propagationMs: 90_000,
      byHand: 3,
      holdUntilDrained: true,
    });
    expect(r.second).toEqual({ done: 'read', why: 'settle', drift: true });
    expect(r.changes).toHaveLength(1);
    expect(r.changes[0]!.body).toBe('{"replicas":4}');
    expect(r.platform.replicas).toBe(4);
    expect(r.pending).toEqual([]);
    // the hand's value is drift once (someone changed the pipe); the daemon's own change never is
    expect(r.drifts).toHaveLength(1);
    expect(r.drifts[0]).toMatchObject({ expected: { replicas: 2 }, actual: { replicas: 3 } });
    // the first attempt's 200, recorded (the read did not find the change in force): one outcome
    expect(r.outcomes.filter((o) => o.outcome === 'applied')).toHaveLength(1);
    expect(r.outcomes.filter((o) => o.outcome === 'landed_late')).toHaveLength(0);
    // its audit line and history entry name what it set, not the pipe as the 200 showed it (the
    // hand's 3: the change was still on its way)
    expect(r.decisions.filter((d) => d.result === 'applied')).toEqual([
      expect.objectContaining({ after: expect.objectContaining({ replicas: 4 }) }),
    ]);
    expect(r.history.find((e) => e.outcome === 'applied')).toMatchObject({ after: { replicas: 4 } });
    expect(r.rec).toMatchObject({
      unsettled: null,
      confirming: null,
      drifts: 1,
      lastApplied: { replicas: 4 },
      confirmed: { values: { replicas: 4 } },
    });
  }, 40_000);
});
