// What a turn checks and reports, against the embedded cloud (through a proxy where the cloud never
// misbehaves on purpose) and the real Redis: a 429's reset is bounded; a successful change with an
// odd envelope is applied once; the desire is re-checked before every PATCH (pipe state, ids, the
// newest decision); failed first contacts are failed decisions, reported once and held; the audit
// line's direction and `before` come from the platform; a drift correction follows maxStep.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { boundedResetMs } from '../../src/daemon/lanes/budget.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import type { PipeConfig } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import {
  DEMO,
  FAST_WORKERS,
  NO_BEHAVIOR,
  REDIS_URL,
  cleanupPrefix,
  collect,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
} from './helpers.js';
import { tamperProxy, type TamperProxy } from './tamper-proxy.js';

const prefix = uniquePrefix('turn-checks');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;

let cloud: EmbeddedCloud;
let proxy: TamperProxy;
let daemon: Daemon;
let emitter: DaemonEmitter;
let clock = T0;

const scaling = (id: string) => cloud.store.pipe(id)!.scaling;
const patchesTo = (id: string) =>
  proxy.seen.filter((r) => r.method === 'PATCH' && r.url.includes(id.toLowerCase())).length;

function config(pipes: PipeConfig[], policies: Config['policies'], reconcileMs = 10 * MIN): Config {
  return testConfig({
    baseUrl: proxy.url,
    prefix,
    pipes,
    policies,
    reconcileMs,
    rateLimit: { requests: 1000, perMs: 2_000 },
  });
}

async function startDaemon(c: Config): Promise<void> {
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

async function tickAt(at: number): Promise<void> {
  clock = at;
  await daemon.tick(at);
  await drained([daemon]);
}

const STREAMS = { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const orders = demoPipe('orders-events', 'streams');

beforeAll(async () => {
  await redis.ping();
});
afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});
beforeEach(async () => {
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  proxy = await tamperProxy(cloud.url);
  clock = T0;
});
afterEach(async () => {
  await daemon?.stop({ timeoutMs: 2_000 });
  await proxy.close();
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});

describe('a 429 whose X-RateLimit-Reset cannot be right', () => {
  it('is bounded by twice the window and 60 s; larger or unparsable is the window', () => {
    expect(boundedResetMs(1795345850, 10_000)).toEqual({ ms: 10_000, valid: false });
    expect(boundedResetMs(3.42, 10_000)).toEqual({ ms: 3_420, valid: true });
    expect(boundedResetMs(20, 10_000)).toEqual({ ms: 20_000, valid: true });
    expect(boundedResetMs(21, 10_000)).toEqual({ ms: 10_000, valid: false });
    expect(boundedResetMs(59, 60_000)).toEqual({ ms: 59_000, valid: true });
    expect(boundedResetMs(61, 60_000)).toEqual({ ms: 60_000, valid: false });
    expect(boundedResetMs(undefined, 10_000)).toEqual({ ms: 10_000, valid: false });
  });

  it('an epoch time in X-RateLimit-Reset pauses the key one window, is reported, and the change still lands', async () => {
    let limited = false;
    proxy.tamper = async (req, upstream) => {
      if (req.method === 'PATCH' && !limited) {
        limited = true;
        return {
          status: 429,
          headers: {
            'content-type': 'application/json',
            'x-ratelimit-reset': '1795345850',
            'x-ratelimit-remaining': '0',
          },
          text: '{"error":"TOO_MANY_REQUESTS"}',
        };
      }
      return upstream();
    };
    await startDaemon(config([orders], { streams: policy('streams', STREAMS) }));
    const invalid = collect(emitter, 'rate-limit:reset-invalid');
    const paused = collect(emitter, 'rate-limited');
    await tickAt(T0);
    expect(paused.map((p) => p.resetMs)).toEqual([2_000]);
    expect(invalid).toEqual([{ key: 'default', value: '1795345850', usedMs: 2_000 }]);
    expect(scaling(DEMO.pipes['orders-events'])).toMatchObject(STREAMS);
  }, 30_000);
});

describe('an answer that fits the pipe but not the envelope', () => {
  it('a successful PATCH whose requestId is not a uuid is applied once, and the envelope problem reported', async () => {
    proxy.tamper = async (req, upstream) => {
      const a = await upstream();
      if (req.method !== 'PATCH' || a.status !== 200) return a;
      return { ...a, text: JSON.stringify({ ...(JSON.parse(a.text) as object), requestId: 'req-42' }) };
    };
    await startDaemon(config([orders], { streams: policy('streams', STREAMS) }));
    const decisions = collect(emitter, 'decision');
    const issues = collect(emitter, 'api:envelope-issue');
    await tickAt(T0);
    await tickAt(T0 + MIN);
    await tickAt(T0 + 2 * MIN);
    expect(decisions.map((d) => d.result)).toEqual(['applied']);
    // The first contact's read, then the change, each answer's problem reported.
    expect(patchesTo(DEMO.pipes['orders-events'])).toBe(2);
    expect(issues).toHaveLength(2);
    expect(issues[0]).toMatchObject({ pipe: 'orders-events', key: 'default' });
  });
});

describe('a change whose outcome is unknown', () => {
  it('a 200 whose body does not parse is sent once; a read settles it as landed, not drift, and nothing is sent again', async () => {
    proxy.tamper = async (req, upstream) => {
      const a = await upstream();
      // The change to 8 is taken by the platform, but its answer cannot be read.
      if (req.method === 'PATCH' && req.body.includes('"replicas":8')) return { ...a, text: '{"status":200,"result":' };
      return a;
    };
    const windowed = policy('streams', STREAMS, [oneOff('burst', T0 + 2 * MIN, T0 + 60 * MIN, { replicas: 8 })]);
    await startDaemon(config([orders], { streams: windowed }));
    const outcomes = collect(emitter, 'outcome');
    const drifts = collect(emitter, 'drift');
    await tickAt(T0);
    await tickAt(T0 + 2 * MIN);
    await tickAt(T0 + 3 * MIN);
    await tickAt(T0 + 4 * MIN);
    const bodies = proxy.seen.filter((r) => r.method === 'PATCH').map((r) => r.body);
    expect(bodies.filter((b) => b.includes('"replicas":8'))).toHaveLength(1);
    // The request after the unreadable answer is a read.
    expect(bodies[bodies.findIndex((b) => b.includes('"replicas":8')) + 1]).toBe('{}');
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(8);
    expect(drifts).toEqual([]);
    expect(outcomes.map((o) => o.outcome)).toEqual(expect.arrayContaining(['unsettled', 'landed_late']));
    // its outcome was unknown (unsettled), never `unconfirmed`: that is a change not in force within the limit
    expect(outcomes.find((o) => o.outcome === 'unsettled')?.reason).toMatch(/^API_/);
    expect(outcomes.filter((o) => o.outcome === 'unconfirmed')).toEqual([]);
    const status = await daemon.status();
    expect(status.pipes[0]!.applied.replicas).toBe(8);
  });
});

describe('a change of unknown outcome replaced by a newer one, carried out after it', () => {
  it('its values in the next read are its landing late: no drift, nothing held as made by hand, the newer target sent again', async () => {
    // The change to 8 is cut after it was sent (outcome unknown) and held: the platform carries it
    // out only after the change to 6 that replaced it, as a request its client gave up on can.
    let landLate: (() => Promise<unknown>) | undefined;
    proxy.tamper = async (req, upstream) => {
      if (req.method === 'PATCH' && req.body.includes('"replicas":8') && landLate === undefined) {
        landLate = upstream;
        throw new Error('cut');
      }
      return upstream();
    };
    const windows = [
      oneOff('burst', T0 + 2 * MIN, T0 + 5 * MIN, { replicas: 8 }),
      oneOff('after', T0 + 5 * MIN, T0 + 60 * MIN, { replicas: 6 }),
    ];
    // under onDrift hold a drift would be kept as a manual override: the pipe left at 8
    const held = policy('streams', STREAMS, windows, {
      ...NO_BEHAVIOR,
      onDrift: { kind: 'hold', durationMs: 60 * MIN },
    });
    await startDaemon(config([orders], { streams: held }, 2 * MIN));
    const outcomes = collect(emitter, 'outcome');
    const drifts = collect(emitter, 'drift');
    const landed = collect(emitter, 'change:landed');
    await tickAt(T0);
    await tickAt(T0 + 2 * MIN); // 8 sent, cut; its settle read shows 3: on its way
    expect(outcomes.map((o) => o.outcome)).toContain('unsettled');
    await tickAt(T0 + 5 * MIN); // 6 sent, answered 200 in force: it replaced the change to 8
    const id = DEMO.pipes['orders-events'];
    expect(scaling(id).replicas).toBe(6);
    await landLate!(); // the change to 8 carried out now, by its own request
    expect(scaling(id).replicas).toBe(8);
    await tickAt(T0 + 8 * MIN); // the reconcile read shows 8
    expect(drifts).toEqual([]);
    const key = proxy.seen.find((r) => r.method === 'PATCH' && r.body.includes('"replicas":8'))?.idempotencyKey;
    expect(landed).toEqual([
      expect.objectContaining({ pipe: 'orders-events', sent: { replicas: 8 }, idempotencyKey: key }),
    ]);
    expect(outcomes.filter((o) => o.outcome === 'landed_late')).toHaveLength(1);
    // decided again: 6 sent again through the normal path, no override kept
    expect(scaling(id).replicas).toBe(6);
    expect(proxy.seen.filter((r) => r.method === 'PATCH' && r.body.includes('"replicas":6'))).toHaveLength(2);
    const status = await daemon.status();
    expect(status.pipes[0]!.override ?? null).toBeNull();
  });
});

describe("a steady pipe's decisions", () => {
  it('are written as their instant alone, and whole over a decision field that does not parse, which is then read once', async () => {
    await startDaemon(config([orders], { streams: policy('streams', STREAMS) }));
    const invalid = collect(emitter, 'state:invalid');
    const key = `${prefix}:ps:pipe:orders-events`;
    await tickAt(T0);
    await tickAt(T0 + MIN);
    const decision = await redis.hget(key, 'lastDecision');
    await tickAt(T0 + 2 * MIN);
    // the same decision: its text in Redis unchanged, its instant the record's decidedAt
    expect(await redis.hget(key, 'lastDecision')).toBe(decision);
    expect(await redis.hget(key, 'decidedAt')).toBe(String(T0 + 2 * MIN));
    expect((await daemon.status()).pipes[0]!.lastDecision?.at).toBe(T0 + 2 * MIN);
    // a hand edit (or another version) leaves a decision field no schema takes
    await redis.hset(key, 'desiredDirection', '"sideways"');
    const reads = () => proxy.seen.filter((r) => r.method === 'PATCH' && r.body === '{}').length;
    const before = reads();
    const patches = patchesTo(orders.pipeId);
    await tickAt(T0 + 3 * MIN);
    await tickAt(T0 + 4 * MIN);
    await tickAt(T0 + 5 * MIN);
    expect(await redis.hget(key, 'desiredDirection')).toBe('"none"');
    expect(invalid.map((e) => e.fields)).toEqual([['desiredDirection']]);
    // read once (the record could not vouch for itself), then steady again; no change
    expect(reads() - before).toBe(1);
    expect(patchesTo(orders.pipeId) - patches).toBe(1);
  });
});

describe('the re-check right before a PATCH', () => {
  it('a pipe found Stopped by a read is not sent the stored change', async () => {
    await startDaemon(config([orders], { streams: policy('streams', STREAMS) }));
    await tickAt(T0);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
    // Stopped by hand, replicas 1: the reconcile read sees it.
    cloud.store.pipe(DEMO.pipes['orders-events'])!.state = 'Stopped';
    scaling(DEMO.pipes['orders-events']).replicas = 1;
    const decisions = collect(emitter, 'decision');
    await tickAt(T0 + 10 * MIN + 1_000);
    await tickAt(T0 + 11 * MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(1);
    expect(decisions.filter((d) => d.result === 'applied')).toEqual([]);
    expect(decisions.at(-1)).toMatchObject({ result: 'skipped', reason: 'pipe_state' });
  });

  it('a pipe stopped by hand and never seen is read first and left alone, though the policy implies its kind and a window is active', async () => {
    // Empty Redis, the window's values differ from the pipe's: the first contact must not be a change.
    const pipe = cloud.store.pipe(DEMO.pipes['orders-events'])!;
    pipe.state = 'Stopped';
    pipe.scaling.replicas = 1;
    const windowed = policy('streams', STREAMS, [oneOff('now', T0 - MIN, T0 + 60 * MIN, { replicas: 5 })]);
    await startDaemon(config([orders], { streams: windowed }));
    const decisions = collect(emitter, 'decision');
    await tickAt(T0);
    await tickAt(T0 + MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(1);
    expect(pipe.state).toBe('Stopped');
    // One request: the read (an empty PATCH); no change went out.
    expect(proxy.seen.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual(['{}']);
    expect(decisions.filter((d) => d.result === 'applied')).toEqual([]);
    expect(decisions.at(-1)).toMatchObject({ result: 'skipped', reason: 'pipe_state' });
  });

  it('a change decided inside a window is not sent once the window has ended: the turn decides again at send time', async () => {
    const windowed = policy('streams', STREAMS, [oneOff('burst', T0 + 2 * MIN, T0 + 4 * MIN, { replicas: 8 })]);
    await startDaemon(config([orders], { streams: windowed }));
    await tickAt(T0);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
    const before = patchesTo(DEMO.pipes['orders-events']);
    // The evaluation at the window's last second wants 8; its turn runs after the window ended.
    clock = T0 + 4 * MIN + 5_000;
    const results = collect(emitter, 'decision');
    await daemon.tick(T0 + 4 * MIN - 1_000);
    await drained([daemon]);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
    expect(patchesTo(DEMO.pipes['orders-events'])).toBe(before);
    expect(results.filter((d) => d.result === 'applied')).toEqual([]);
  });

  it('a late evaluation of an older tick never overwrites the newer decision (compare-and-set)', async () => {
    const windowed = policy('streams', STREAMS, [oneOff('burst', T0 + 2 * MIN, T0 + 4 * MIN, { replicas: 8 })]);
    await startDaemon(config([orders], { streams: windowed }));
    await tickAt(T0);
    await tickAt(T0 + 4 * MIN); // the window has ended: 3
    clock = T0 + 4 * MIN + 10_000;
    await daemon.tick(T0 + 3 * MIN); // a stalled job of the window's tick finishes late: it wanted 8
    await drained([daemon]);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
    const status = await daemon.status();
    expect(status.pipes[0]!.lastDecision?.at).toBe(T0 + 4 * MIN);
  });

  it('a reload that points a name at another pipe forgets what was known of the old one', async () => {
    const c = config([orders], { streams: policy('streams', STREAMS) });
    await startDaemon(c);
    await tickAt(T0);
    const other = DEMO.pipes.clickstream;
    scaling(other).replicas = 1;
    await daemon.reload({ ...c, pipes: [{ ...orders, pipeId: other }] });
    await tickAt(T0 + MIN);
    expect(scaling(other)).toMatchObject(STREAMS);
  });
});

describe('failed first contacts', () => {
  it('a wrong pipe id is a failed decision with its code, reported once, held until the reconcile period, shown in status', async () => {
    const wrong: PipeConfig = { ...orders, pipeId: 'b1000000-0000-4000-8000-0000000000ff' };
    await startDaemon(config([wrong], { streams: policy('streams', STREAMS) }));
    const decisions = collect(emitter, 'decision');
    await tickAt(T0);
    await tickAt(T0 + MIN);
    await tickAt(T0 + 2 * MIN);
    expect(patchesTo(wrong.pipeId)).toBe(1);
    expect(decisions).toEqual([
      expect.objectContaining({ pipe: 'orders-events', result: 'failed', reason: 'API_NOT_FOUND' }),
    ]);
    const status = await daemon.status();
    expect(status.pipes[0]!.lastError).toMatchObject({ code: 'API_NOT_FOUND' });
    // A reconcile period later it is tried again; the same failure is not reported again.
    await tickAt(T0 + 10 * MIN + 1_000);
    expect(patchesTo(wrong.pipeId)).toBe(2);
    expect(decisions).toHaveLength(1);
  });

  it('a first-contact read that fails (the kind is not known) is reported too', async () => {
    const wrong: PipeConfig = { ...orders, pipeId: 'b1000000-0000-4000-8000-0000000000fe' };
    // A policy naming fields of two kinds implies none: the first contact is a read.
    await startDaemon(
      config([{ ...wrong, policy: 'mixed' }], { mixed: policy('mixed', { replicas: 3, concurrency: 2 }) }),
    );
    const decisions = collect(emitter, 'decision');
    await tickAt(T0);
    await tickAt(T0 + MIN);
    expect(patchesTo(wrong.pipeId)).toBe(1);
    expect(decisions).toEqual([expect.objectContaining({ result: 'failed', reason: 'API_NOT_FOUND' })]);
  });
});

describe('the audit line and drift corrections', () => {
  it("a drift is corrected by a new decision that follows maxStep, with its own reasons and the platform's before", async () => {
    const stepped = policy('streams', { replicas: 5, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [], {
      scaleUp: { maxStep: { replicas: 2 }, cooldownMs: 0 },
      scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 0 },
    });
    await startDaemon(config([orders], { streams: stepped }));
    await tickAt(T0);
    await tickAt(T0 + MIN);
    await tickAt(T0 + 2 * MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(5);
    scaling(DEMO.pipes['orders-events']).replicas = 1; // by hand
    const decisions = collect(emitter, 'decision');
    await tickAt(T0 + 12 * MIN); // reconcile read: the drift
    const correction = decisions.find((d) => d.result === 'applied');
    expect(correction).toMatchObject({
      direction: 'up',
      before: expect.objectContaining({ replicas: 1 }),
      after: expect.objectContaining({ replicas: 3 }),
    });
    expect(correction!.reasons.some((r) => r.code === 'unchanged')).toBe(false);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
  });

  it('a change moving fields both ways is labelled mixed', async () => {
    scaling(DEMO.pipes['orders-events']).replicaCpuMillicores = 1000;
    const c = config([orders], {
      streams: policy('streams', { replicas: 3, replicaCpuMillicores: 1000, replicaMemoryGb: 2 }),
    });
    await startDaemon(c);
    await tickAt(T0);
    const decisions = collect(emitter, 'decision');
    await daemon.reload({
      ...c,
      policies: { streams: policy('streams', { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
    });
    await tickAt(T0 + MIN);
    expect(decisions.filter((d) => d.result === 'applied').map((d) => d.direction)).toEqual(['mixed']);
  });
});
