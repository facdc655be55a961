// The daemon's events as outcomes, and the outcomes in the shared history: a real daemon against
// the embedded cloud over HTTP and the real Redis. Why it scaled (applied, with the window and the
// platform's requestId), why it did not (skipped: paused), pause and resume, drift found and
// corrected, a reload that changed a pipe's policy.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../../src/daemon/index.js';
import { bridgeOutcomes } from '../../../src/daemon/outcomes/outcome-bridge.js';
import { HistoryStore, type Outcome } from '../../../src/history/index.js';
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
  pipeOf,
} from '../helpers.js';

const prefix = uniquePrefix('outcomes');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;

let cloud: EmbeddedCloud;
let daemon: Daemon;
let clock = T0;

function config(peak = 6): Config {
  return testConfig({
    baseUrl: cloud.url,
    prefix,
    pipes: [demoPipe('orders-events', 'streams')],
    policies: {
      streams: policy('streams', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
        oneOff('peak', T0 + 10 * MIN, T0 + 20 * MIN, { replicas: peak }),
      ]),
    },
    reconcileMs: 24 * 60 * MIN,
  });
}

async function tickAt(at: number): Promise<void> {
  clock = at;
  await daemon.tick(at);
  await drained([daemon]);
}

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});
beforeEach(async () => {
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  clock = T0;
});
afterEach(async () => {
  await daemon.stop({ timeoutMs: 2_000 });
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});

describe('outcomes and history', () => {
  it('records why a pipe scaled and why it did not, for every replica to read', async () => {
    const emitter = new DaemonEmitter();
    const outcomes = collect(emitter, 'outcome');
    daemon = createDaemon({
      config: config(),
      redis,
      prefix,
      now: () => clock,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    await daemon.start();
    await tickAt(T0);
    await daemon.store.operator.setPause(pipeOf(daemon, 'orders-events'), { reason: 'maintenance' });
    await tickAt(T0 + 10 * MIN);
    await tickAt(T0 + 10 * MIN + 30_000);
    await daemon.store.operator.clearPause(pipeOf(daemon, 'orders-events'));
    await tickAt(T0 + 11 * MIN);
    // someone sizes its replicas by hand; the answer of the next change shows it
    cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicaCpuMillicores = 1000;
    expect(await daemon.reload(config(7))).toBe(true);
    await tickAt(T0 + 12 * MIN);
    await tickAt(T0 + 13 * MIN);

    const names = outcomes.map((o) => `${o.outcome}:${o.reason}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'applied:baseline',
        'paused:paused',
        'skipped:paused',
        'resumed:resumed',
        'applied:window',
        'reload:policy_changed',
        'drift_found:drift',
      ]),
    );
    const store = new HistoryStore(redis, prefix);
    await until(async () => (await store.read('orders-events')).entries.length >= outcomes.length - 1);
    const { entries } = await store.read('orders-events');
    const applied = entries.filter((e) => e.outcome === 'applied');
    expect(applied.at(-1)).toMatchObject({
      reason: 'baseline',
      count: 1,
      key: 'default',
      after: { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      // what the policy wanted in the end
      target: { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
    });
    expect(applied.every((e) => typeof e.requestId === 'string')).toBe(true);
    const window = entries.filter((e) => e.outcome === 'applied' && e.reason === 'window');
    // 6 at the window's start, 7 after the reload, and the hand-set cpu put back after its drift
    expect(window.map((e) => [e.after?.replicas, e.after?.replicaCpuMillicores, e.windows])).toEqual([
      [7, 500, ['peak']],
      [7, 1000, ['peak']],
      [6, 500, ['peak']],
    ]);
    expect(entries[0]?.outcome).toBe('drift_corrected');
    expect(entries.find((e) => e.outcome === 'drift_found')).toMatchObject({
      before: { replicaCpuMillicores: 500 },
      after: { replicaCpuMillicores: 1000 },
    });
    expect(entries.find((e) => e.outcome === 'skipped')).toMatchObject({ reason: 'paused', windows: ['peak'] });
    expect(entries.find((e) => e.outcome === 'paused')).toMatchObject({ message: 'maintenance' });
    // a skip with the same reason at the next tick is not a second entry
    expect(entries.filter((e) => e.outcome === 'skipped')).toHaveLength(1);
  });

  it('a pause that ran out is pause_expired, a lifted one resumed; an applied change after a drift corrects it', () => {
    const emitter = new DaemonEmitter();
    let now = T0;
    const cfg = testConfig({ baseUrl: 'http://x', prefix, pipes: [demoPipe('orders-events', 's')], policies: {} });
    const off = bridgeOutcomes(emitter, { now: () => now, config: () => cfg });
    const seen: Outcome[] = [];
    emitter.on('outcome', (o) => seen.push(o));
    emitter.emit('paused', { pipe: 'orders-events', paused: true, reason: 'deploy', until: T0 + MIN });
    now = T0 + 2 * MIN;
    emitter.emit('paused', { pipe: 'orders-events', paused: false });
    emitter.emit('paused', { pipe: 'orders-events', paused: true, reason: 'deploy' });
    emitter.emit('paused', { pipe: 'orders-events', paused: false });
    emitter.emit('drift', { pipe: 'orders-events', expected: { replicas: 3 }, actual: { replicas: 9 } });
    const decision = {
      pipe: 'orders-events',
      direction: 'down' as const,
      windows: [],
      before: { replicas: 9 },
      after: { replicas: 3 },
      reasons: [],
    };
    emitter.emit('decision', { ...decision, result: 'applied', reason: 'baseline', requestId: 'req-1' });
    emitter.emit('decision', { ...decision, result: 'failed', reason: 'API_UNAVAILABLE' });
    off();
    emitter.emit('drift', { pipe: 'orders-events', expected: {}, actual: {} });
    expect(seen.map((o) => [o.outcome, o.reason, o.key])).toEqual([
      ['paused', 'paused_until', 'default'],
      ['pause_expired', 'expired', 'default'],
      ['paused', 'paused', 'default'],
      ['resumed', 'resumed', 'default'],
      ['drift_found', 'drift', 'default'],
      ['applied', 'baseline', 'default'],
      ['drift_corrected', 'applied', 'default'],
      ['failed', 'API_UNAVAILABLE', 'default'],
    ]);
    expect(seen[5]).toMatchObject({ requestId: 'req-1', before: { replicas: 9 }, after: { replicas: 3 } });
  });

  it('a move held by a cooldown or stabilization is a skip with its code, once per hold', () => {
    const emitter = new DaemonEmitter();
    const cfg = testConfig({ baseUrl: 'http://x', prefix, pipes: [demoPipe('orders-events', 's')], policies: {} });
    const off = bridgeOutcomes(emitter, { now: () => T0, config: () => cfg });
    const seen: Outcome[] = [];
    emitter.on('outcome', (o) => seen.push(o));
    const evaluation = (
      reasons: { code: 'cooldown' | 'window'; message: string }[],
      action: 'none' | 'change' = 'none',
    ) =>
      emitter.emit('evaluation', {
        pipe: 'orders-events',
        policy: 's',
        tickAt: T0,
        durationMs: 1,
        lagMs: 0,
        decision: {
          action,
          direction: 'up',
          windows: ['peak'],
          desired: { replicas: 4 },
          recommendation: { replicas: 4 },
          changes: {},
          reasons: reasons.map((r) => ({ ...r, field: 'replicas' as const })),
        },
      });
    const held = (left: string) => [
      { code: 'window' as const, message: 'peak sets replicas 6' },
      { code: 'cooldown' as const, message: `replicas up 2 -> 4 held: up cooldown 1m, ${left} remaining` },
    ];
    evaluation(held('50s'));
    evaluation(held('20s')); // the same hold a tick later
    evaluation([{ code: 'window', message: 'peak sets replicas 6' }], 'change');
    evaluation(held('55s'));
    off();
    expect(seen.map((o) => [o.outcome, o.reason, o.message])).toEqual([
      ['skipped', 'cooldown', 'replicas up 2 -> 4 held: up cooldown 1m'],
      ['skipped', 'cooldown', 'replicas up 2 -> 4 held: up cooldown 1m'],
    ]);
  });
});
