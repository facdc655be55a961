// A daemon dies in the middle of an apply, between its change's send and the record of its answer
// (its Redis connection cut and its workers closed by force while a proxy in front of the cloud,
// which has carried the change out, holds the answer): the job's lock expires, another daemon's
// stalled check puts it back, and that daemon finds the change's intent in the pipe's record: it
// never sends the change again, a read settles it (the daemon's own change, landed: no drift).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, refOf } from '../../src/daemon/index.js';
import { tamperProxy } from './tamper-proxy.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  drained,
  collect,
  policy,
  testConfig,
  uniquePrefix,
  waitForEvent,
} from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const basePrefix = uniquePrefix('stalled');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  for (const name of ['late', 'early']) await cleanupPrefix(redis, `${basePrefix}-${name}`);
  redis.disconnect();
});

/** The doomed daemon sends the change at T0 (its request's time runs out at T0 + 5 s); the other
 *  starts at `rescueAt` and ticks at `tickAt`. */
async function killedMidApply(name: string, rescueAt: number, tickAt: number) {
  {
    const prefix = `${basePrefix}-${name}`;
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    // The proxy lets the first change through to the cloud and holds its answer: the doomed
    // daemon never learns it was answered.
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
    const doomedRedis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    doomedRedis.on('error', () => {});
    const doomedEvents = new DaemonEmitter();
    const doomed = createDaemon({
      config,
      redis: doomedRedis,
      prefix,
      now: () => T0,
      emitter: doomedEvents,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    await doomed.store.write('orders-events', {
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      lastApplied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      lastReadAt: T0 - 1,
      ref: refOf(config.pipes[0]!),
    });
    await doomed.start();
    await doomed.tick(T0);
    await inFlight;
    // "kill -9": no more Redis for it (no lock renewal, no completion), workers gone by force.
    doomedRedis.disconnect();
    await Promise.all(doomed.workers().map((w) => w.close(true)));
    const rescuerEvents = new DaemonEmitter();
    let clock = rescueAt;
    const rescuer = createDaemon({
      config,
      redis,
      prefix,
      now: () => clock,
      emitter: rescuerEvents,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    const outcomes = collect(rescuerEvents, 'outcome');
    const drifts = collect(rescuerEvents, 'drift');
    const decisions = collect(rescuerEvents, 'decision');
    const settled = waitForEvent(rescuerEvents, 'outcome', (o) => o.outcome === 'landed_late', 20_000);
    await rescuer.start();
    // the workers are made at start; the first stalled check comes a second later
    const stalled: string[] = [];
    const recovered = new Promise<unknown>((resolve) => {
      for (const w of rescuer.workers()) {
        w.on('stalled', (id) => stalled.push(id));
        w.on('completed', (job) => {
          if (stalled.includes(job.id ?? '')) resolve(job.returnvalue);
        });
      }
    });
    try {
      const second = await recovered;
      if (tickAt !== rescueAt) {
        clock = tickAt;
        await rescuer.tick(tickAt);
      }
      const landed = await settled;
      await drained([rescuer]);
      // a later reconcile read: the daemon's own values are still no drift
      clock = tickAt + 25 * 3_600_000;
      await rescuer.tick(clock);
      await drained([rescuer]);
      return {
        second,
        landed,
        stalled,
        outcomes,
        drifts,
        decisions,
        changes: proxy.seen.filter((r) => r.method === 'PATCH' && r.body !== '' && r.body !== '{}'),
        rec: await rescuer.store.read('orders-events'),
        status: await rescuer.status(),
        platform: cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling,
      };
    } finally {
      release();
      await rescuer.stop({ timeoutMs: 2_000 });
      await doomed.stop({ timeoutMs: 100 });
      await proxy.close();
      await cloud.close();
    }
  }
}

function expectSettledOnce(r: Awaited<ReturnType<typeof killedMidApply>>): void {
  expect(r.stalled).toHaveLength(1);
  // sent once: the change's intent was in the record, so the recovered job never sent it again
  expect(r.changes).toHaveLength(1);
  expect(r.platform.replicas).toBe(4);
  expect(r.landed).toMatchObject({ pipe: 'orders-events', after: { replicas: 4 } });
  expect(r.decisions.filter((d) => d.result === 'applied')).toEqual([]);
  expect(r.drifts).toEqual([]);
  expect(r.outcomes.filter((o) => o.outcome.startsWith('drift'))).toEqual([]);
  expect(r.rec).toMatchObject({
    unsettled: null,
    drifts: 0,
    lastApplied: { replicas: 4 },
    confirmed: { values: { replicas: 4 } },
  });
  expect(r.status.pipes[0]!.applied).toMatchObject({ replicas: 4 });
}

describe('a worker killed between a change sent and its answer recorded', () => {
  it("has its job recovered by another daemon after the request's time: a read settles it, nothing sent again", async () => {
    const r = await killedMidApply('late', T0 + 10_000, T0 + 10_000);
    expect(r.second).toEqual({ done: 'read', why: 'settle', drift: false });
    expectSettledOnce(r);
  }, 40_000);

  it("recovered within the request's time, the job waits; the next tick's read settles it", async () => {
    const r = await killedMidApply('early', T0 + 1_000, T0 + 30_000);
    expect(r.second).toEqual({ done: 'nothing', step: 'wait', reason: 'sending' });
    expectSettledOnce(r);
  }, 40_000);
});
