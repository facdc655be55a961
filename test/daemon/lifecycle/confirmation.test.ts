// Every change is confirmed, against the embedded cloud with propagation injected (a change takes
// effect minutes after its 200; meanwhile reads show the old values or the live API's transient
// 0/null), over HTTP through a proxy that counts the PATCHes, with the real Redis and one injected
// clock for the daemon and the cloud: a change is confirmed after its delay with one PATCH and its
// actuation latency measured; reads meanwhile are not drift and send nothing; a stuck change ends
// unconfirmed with a bounded number of re-sends, and is confirmed late when a read shows it. A
// change the platform carries out after its client gave up (the `late` fault) whose settle read
// still shows the old values is on its way, not lost: sent once, it lands late, not drift.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../../src/daemon/index.js';
import type { Config } from '../../../src/config/types.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from '../helpers.js';
import { tamperProxy, type TamperProxy } from '../tamper-proxy.js';
import { p95 } from '../../../src/daemon/store/actuation-store.js';
import { confirmationReads, confirmTiming } from '../../../src/daemon/lifecycle/confirmation.js';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { refOf } from '../../../src/daemon/model/record.js';

const prefix = uniquePrefix('confirmation');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
/** The fixture's values of orders-events: the baseline, so its first contact changes nothing. */
const BASE = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const PEAK = { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 2 };
const ORDERS = DEMO.pipes['orders-events'];
/** When the window's change goes (its lead: two ticks of 30 s and the expected actuation of 1 min). */
const SENT = T0 + 8 * MIN;

let cloud: EmbeddedCloud;
let proxy: TamperProxy;
let daemon: Daemon;
let emitter: DaemonEmitter;
let clock = T0;

/** PATCHes that change something (a read is an empty PATCH). */
const changesSent = () =>
  proxy.seen.filter((r) => r.method === 'PATCH' && r.url.includes(ORDERS) && r.body !== '{}' && r.body !== '');
const readsSent = () => proxy.seen.filter((r) => r.method === 'PATCH' && r.url.includes(ORDERS) && r.body === '{}');

/** orders-events on a window 10-60 min after T0 (leadTime auto sends its change 2 min ahead: two
 *  ticks and the expected actuation); confirmation reads from `expected` after a send, unconfirmed
 *  `max` after it. */
function config(actuation: { expectedMs: number; maxMs: number }, timeoutMs = 5_000): Config {
  const base = testConfig({
    baseUrl: proxy.url,
    prefix,
    pipes: [demoPipe('orders-events', 'peak')],
    policies: { peak: policy('peak', BASE, [oneOff('peak', T0 + 10 * MIN, T0 + 60 * MIN, PEAK)]) },
    reconcileMs: 20 * MIN,
  });
  return {
    ...base,
    api: { ...base.api, timeoutMs },
    evaluate: { ...base.evaluate, actuation: { ...actuation, minSamples: 20 } },
  };
}

async function start(c: Config): Promise<void> {
  emitter = new DaemonEmitter();
  daemon = createDaemon({
    config: c,
    redis,
    prefix,
    now: () => clock,
    emitter,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  await daemon.start();
}

/** Ticks every 30 s (the cron's) from `from` to `to`, each drained. */
async function ticks(from: number, to: number): Promise<void> {
  for (let at = from; at <= to; at += 30 * SEC) {
    clock = at;
    await daemon.tick(at);
    await drained([daemon]);
    await cloud.settled();
  }
}

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});
beforeEach(async () => {
  clock = T0;
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false, now: () => clock });
  proxy = await tamperProxy(cloud.url);
});
afterEach(async () => {
  await daemon?.stop({ timeoutMs: 2_000 });
  await proxy.close();
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});

describe('every change is confirmed', () => {
  it('a change in force 3 minutes after its 200 is sent once, read meanwhile (old replicas, transient 0/null CPU) without drift, and confirmed with its actuation latency', async () => {
    cloud.setPropagation({ stream: '3m', reads: 'transient' });
    await start(config({ expectedMs: MIN, maxMs: 10 * MIN }));
    const drift = collect(emitter, 'drift');
    const confirmed = collect(emitter, 'confirmed');
    const outcomes = collect(emitter, 'outcome');
    await ticks(T0, T0);
    const readsBefore = readsSent().length;
    await ticks(T0 + 30 * SEC, T0 + 20 * MIN);
    expect(changesSent().map((r) => JSON.parse(r.body) as unknown)).toEqual([
      { replicas: 6, replicaCpuMillicores: 1000 },
    ]);
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(PEAK);
    // confirmation reads of the scale-up (the read at 1 min, then each 15 % of the time since the
    // send after the one before: 69 s, 79 s, 91 s, 105 s, 121 s, 139 s, 160 s...) at the ticks after
    // them (a daemon on a clock of its own does not queue them for their instant): at 1m, 1m30s,
    // 2m, 2m30s and 3m, which shows it
    expect(readsSent().length - readsBefore).toBe(5);
    // its actuation: the instant the read that showed it stood for (the first of the schedule after
    // the read at 2m30s, 160 s), its wait for the tick at 3m not counted; in force somewhere in
    // (2m30s, 3m], the platform's 3 min
    const timing = confirmTiming({ expectedMs: MIN, maxMs: 10 * MIN, minSamples: 20 });
    const stood = [...confirmationReads(SENT, timing, true)].find((at) => at > SENT + 150 * SEC)!;
    expect(stood - SENT).toBeGreaterThan(150 * SEC);
    expect(stood - SENT).toBeLessThanOrEqual(3 * MIN);
    expect(drift).toEqual([]);
    expect(outcomes.filter((o) => o.outcome === 'drift_found' || o.outcome === 'unconfirmed')).toEqual([]);
    expect(confirmed).toEqual([
      {
        pipe: 'orders-events',
        kind: 'stream',
        values: { replicas: 6, replicaCpuMillicores: 1000 },
        sentAt: SENT,
        confirmedAt: SENT + 3 * MIN,
        actuationMs: stood - SENT,
        // the pair's lower end: the read at 2m30s did not show it
        actuationLowMs: 150 * SEC,
      },
    ]);
    expect(await redis.lrange(redisKeys(prefix).actuationKind('stream'), 0, -1)).toEqual([String(stood - SENT)]);
    const rec = await daemon.store.read('orders-events');
    expect(rec.confirming).toBeNull();
    expect(rec.confirmed).toMatchObject({ values: PEAK, at: SENT + 3 * MIN });
    expect(rec.applied).toEqual(PEAK);
    expect(rec.lastApplied).toEqual(PEAK);
  }, 60_000);

  it('a change in force at its answer is confirmed there: no confirmation read, and no actuation sample (it measured the request)', async () => {
    await start(config({ expectedMs: MIN, maxMs: 10 * MIN }));
    const confirmed = collect(emitter, 'confirmed');
    await ticks(T0, T0);
    const readsBefore = readsSent().length;
    await ticks(T0 + 30 * SEC, T0 + 15 * MIN);
    expect(changesSent()).toHaveLength(1);
    expect(readsSent().length).toBe(readsBefore);
    expect(confirmed).toMatchObject([
      { sentAt: SENT, confirmedAt: SENT, actuationMs: 0, notSample: 'in_force_at_answer' },
    ]);
    expect(await redis.llen(redisKeys(prefix).actuation(refOf(demoPipe('orders-events', 'peak'))))).toBe(0);
    expect(await redis.llen(redisKeys(prefix).actuationKind('stream'))).toBe(0);
  }, 60_000);

  it('a stuck change ends unconfirmed (one outcome, one event) after one re-send, is not sent a third time, and is confirmed late when a read shows it', async () => {
    cloud.setPropagation({ pipes: { [ORDERS]: 'never' } });
    await start(config({ expectedMs: MIN, maxMs: 5 * MIN }));
    const drift = collect(emitter, 'drift');
    const unconfirmed = collect(emitter, 'unconfirmed');
    const outcomes = collect(emitter, 'outcome');
    const confirmed = collect(emitter, 'confirmed');
    await ticks(T0, T0 + 40 * MIN);
    // the send, and one re-send at the limit; nothing more
    expect(changesSent()).toHaveLength(2);
    expect(drift).toEqual([]);
    expect(unconfirmed).toMatchObject([
      { pipe: 'orders-events', unconfirmed: true, reason: 'limit', sentAt: SENT, at: SENT + 5 * MIN },
    ]);
    expect(outcomes.filter((o) => o.outcome === 'unconfirmed')).toMatchObject([
      { pipe: 'orders-events', reason: 'not_at_target', target: { replicas: 6, replicaCpuMillicores: 1000 } },
    ]);
    const [row] = (await daemon.status()).pipes;
    expect(row?.change).toMatchObject({ state: 'unconfirmed', sentAt: SENT, resends: 1 });
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(BASE);

    // the platform carries it out at last; the next reconcile read shows it
    cloud.store.pending.delete(ORDERS.toLowerCase());
    Object.assign(cloud.store.pipe(ORDERS)!.scaling, { replicas: 6, replicaCpuMillicores: 1000 });
    await ticks(T0 + 41 * MIN, T0 + 59 * MIN);
    expect(changesSent()).toHaveLength(2);
    expect(drift).toEqual([]);
    expect(confirmed).toMatchObject([{ pipe: 'orders-events', sentAt: SENT }]);
    expect(unconfirmed.at(-1)).toMatchObject({ unconfirmed: false, reason: 'confirmed' });
    expect((await daemon.status()).pipes[0]?.change).toBeNull();
    // it went unconfirmed and was sent again: from its first send it measures a stuck change, no sample
    expect(confirmed[0]?.notSample).toBe('unconfirmed');
    expect(await redis.llen(redisKeys(prefix).actuation(refOf(demoPipe('orders-events', 'peak'))))).toBe(0);
  }, 120_000);

  it('a re-send cut on its way (a reset: outcome unknown, its settle read shows the old values) is not the one re-send: sent again at the next limit, it lands', async () => {
    // The first send and the re-send at the limit are cut (the connection reset before the platform
    // took them); the platform carries changes out at once.
    let cut = 0;
    proxy.tamper = async (req, upstream) => {
      if (cut < 2 && req.method === 'PATCH' && req.url.includes(ORDERS) && req.body !== '{}' && req.body !== '') {
        cut += 1;
        throw new Error('reset');
      }
      return upstream();
    };
    await start(config({ expectedMs: MIN, maxMs: 5 * MIN }));
    const outcomes = collect(emitter, 'outcome');
    const drift = collect(emitter, 'drift');
    await ticks(T0, T0 + 30 * MIN);
    expect(outcomes.filter((o) => o.outcome === 'unsettled')).toHaveLength(2);
    // the send, the re-send at its limit (both cut), the re-send at the re-send's limit
    expect(changesSent()).toHaveLength(3);
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(PEAK);
    expect(drift).toEqual([]);
    const rec = await daemon.store.read('orders-events');
    expect(rec.confirming).toBeNull();
    expect(rec.unsettled).toBeNull();
    expect(rec.applied).toEqual(PEAK);
  }, 120_000);

  // The platform may carry a request out after its client gave up, then take its propagation time:
  // the settle read shows the old values, and the pipe is confirming that send from its instant.
  for (const propagation of ['0s', '3m'] as const) {
    it(`a change carried out after its client gave up (propagation ${propagation}): its settle read showing the old values waits for it; sent once, it lands late, no drift, status agrees with the cloud`, async () => {
      if (propagation !== '0s') cloud.setPropagation({ stream: propagation });
      // The first change is held past the client's timeout (500 ms) and carried out 1.5 s after it
      // came (real time: the proxy keeps its own connection to the cloud open); the rest pass.
      let held = false;
      proxy.tamper = async (req, upstream) => {
        if (held || req.method !== 'PATCH' || req.body === '{}' || req.body === '') return upstream();
        held = true;
        cloud.setFaults({ scalePipe: { late: { probability: 1, maxMs: 1_500 } } });
        const answer = upstream();
        await until(() => (cloud.stats().faults.late ?? 0) > 0, 5_000, 'the change held');
        cloud.setFaults({});
        return answer;
      };
      await start(config({ expectedMs: MIN, maxMs: 10 * MIN }, 500));
      const drift = collect(emitter, 'drift');
      const outcomes = collect(emitter, 'outcome');
      await ticks(T0, T0 + 25 * MIN);
      expect(cloud.stats().faults.late).toBe(1);
      expect(changesSent().map((r) => JSON.parse(r.body) as unknown)).toEqual([
        { replicas: 6, replicaCpuMillicores: 1000 },
      ]);
      expect(drift).toEqual([]);
      expect(outcomes.filter((o) => o.outcome === 'drift_found')).toEqual([]);
      expect(outcomes.filter((o) => o.outcome === 'landed_late')).toHaveLength(1);
      expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(PEAK);
      const rec = await daemon.store.read('orders-events');
      expect(rec.confirming).toBeNull();
      expect(rec.applied).toEqual(PEAK);
      const [row] = (await daemon.status()).pipes;
      expect(row?.applied).toMatchObject(PEAK);
      expect(row?.change).toBeNull();
    }, 120_000);
  }
});

describe('measured actuation', () => {
  it('changes one after another, in force at their answer and then with a 3-minute propagation: only the propagating ones are samples, the p95 in Redis within [0.8, 1.2] x 3 min, at most two confirmation reads a change once measured', async () => {
    // a 10-minute window every 20 minutes: a scale-up at each start, a scale-down at each end
    const windows = [0, 1, 2, 3].map((k) =>
      oneOff(`peak-${k}`, T0 + (10 + 20 * k) * MIN, T0 + (20 + 20 * k) * MIN, PEAK),
    );
    const base = testConfig({
      baseUrl: proxy.url,
      prefix,
      pipes: [demoPipe('orders-events', 'peak')],
      policies: { peak: policy('peak', BASE, windows) },
      reconcileMs: 4 * 60 * MIN,
    });
    // nothing configured: the first propagating change is found by the back-off from firstRead
    await start({
      ...base,
      evaluate: { ...base.evaluate, actuation: { expectedMs: 0, maxMs: 10 * MIN, minSamples: 1 } },
    });
    const reads: number[] = [];
    proxy.tamper = (req, upstream) => {
      if (req.method === 'PATCH' && req.url.includes(ORDERS) && req.body === '{}') reads.push(clock);
      return upstream();
    };
    const confirmed = collect(emitter, 'confirmed');
    // the first window's two changes: carried out at once, each in force at its own answer
    await ticks(T0, T0 + 25 * MIN);
    expect(confirmed).toMatchObject([{ notSample: 'in_force_at_answer' }, { notSample: 'in_force_at_answer' }]);
    cloud.setPropagation({ stream: '3m', reads: 'transient' });
    await ticks(T0 + 25 * MIN + 30 * SEC, T0 + 90 * MIN);
    expect(confirmed).toHaveLength(8);
    expect(confirmed.slice(2).every((c) => c.notSample === undefined)).toBe(true);
    const readsOf = confirmed.map((c) => reads.filter((at) => at > c.sentAt && at <= c.confirmedAt).length);
    expect(Math.max(...readsOf.slice(3))).toBeLessThanOrEqual(2);
    const samples = await redis.lrange(redisKeys(prefix).actuation(refOf(demoPipe('orders-events', 'peak'))), 0, -1);
    expect(samples).toHaveLength(6);
    expect(await redis.lrange(redisKeys(prefix).actuationKind('stream'), 0, -1)).toEqual(samples);
    const measured = p95(samples.map(Number))!;
    expect(measured).toBeGreaterThanOrEqual(0.8 * 3 * MIN);
    expect(measured).toBeLessThanOrEqual(1.2 * 3 * MIN);
  }, 240_000);
});
