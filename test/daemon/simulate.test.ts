// A scripted day of two policies: the daemon, ticked at every step of the day with the clock
// injected, sends exactly the PATCHes that simulate() predicts for it, and nothing else.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { ScalingValues } from '../../src/api/index.js';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { simulate } from '../../src/policy/simulate.js';
import type { PipeView, Policy, RecurringWindow } from '../../src/policy/types.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  drained,
  oneOff,
  target,
  testConfig,
  uniquePrefix,
} from './helpers.js';

const FROM = Date.parse('2026-11-23T00:00:00Z'); // a Monday
const TO = FROM + 24 * 3_600_000;
const STEP = 10 * 60_000;
const prefix = uniquePrefix('simulate');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

function recurring(name: string, start: string, end: string, timezone: string, values: ScalingValues): RecurringWindow {
  const [sh, sm] = start.split(':').map(Number) as [number, number];
  const [eh, em] = end.split(':').map(Number) as [number, number];
  return {
    kind: 'recurring',
    name,
    priority: 0,
    days: ['mon', 'tue', 'wed', 'thu', 'fri'],
    start: { hour: sh, minute: sm },
    end: { hour: eh, minute: em },
    timezone,
    exclude: [],
    target: target(values),
  };
}

const officeHours: Policy = {
  name: 'office-hours',
  baseline: target({ replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }),
  windows: [
    recurring('business-hours', '08:00', '20:00', 'Europe/Berlin', { replicas: 8, replicaCpuMillicores: 1000 }),
    { ...oneOff('lunch-rush', FROM + 11 * 3_600_000, FROM + 12 * 3_600_000, { replicas: 10 }), priority: 5 },
  ],
  behavior: {
    scaleUp: { maxStep: { replicas: 2 }, cooldownMs: 15 * 60_000 },
    scaleDown: { maxStep: { replicas: 3 }, cooldownMs: 30 * 60_000, stabilizationMs: 60 * 60_000 },
  },
};

const nightly: Policy = {
  name: 'nightly',
  baseline: target({ concurrency: 2 }),
  windows: [
    {
      ...recurring('nightly-batch', '01:00', '05:00', 'UTC', { concurrency: 16 }),
      days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'],
    },
  ],
  behavior: {
    scaleUp: { maxStep: {}, cooldownMs: 0 },
    scaleDown: { maxStep: { concurrency: 8 }, cooldownMs: 20 * 60_000, stabilizationMs: 0 },
  },
};

// What the demo fixtures run before the daemon first meets them (config/cloud.yaml).
const view = (applied: ScalingValues, kind: PipeView['kind']): PipeView => ({
  kind,
  state: 'Running',
  applied,
  bounds: {},
  lastChange: {},
  recommendations: [],
  endpoints: {},
});
const VIEWS: Record<string, PipeView> = {
  'orders-events': view({ replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, 'stream'),
  clickstream: view({ replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 }, 'stream'),
  'nightly-s3': view({ concurrency: 2 }, 'objectStorage'),
};

const changed = (before: ScalingValues, after: ScalingValues): ScalingValues =>
  Object.fromEntries(Object.entries(after).filter(([f, v]) => before[f as keyof ScalingValues] !== v));

describe('a scripted day', () => {
  it('produces exactly the PATCH sequence simulate() predicts, and no other PATCH', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    let clock = FROM;
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 48 * 3_600_000,
      pipes: [
        demoPipe('orders-events', 'office-hours'),
        demoPipe('clickstream', 'office-hours'),
        demoPipe('nightly-s3', 'nightly'),
      ],
      policies: { 'office-hours': officeHours, nightly },
    });
    const emitter = new DaemonEmitter();
    const sent: { pipe: string; at: number; scaling: ScalingValues }[] = [];
    emitter.on('decision', (d) => {
      if (d.result === 'applied') sent.push({ pipe: d.pipe, at: clock, scaling: changed(d.before, d.after) });
    });
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
    await daemon.start();
    try {
      for (let at = FROM; at < TO; at += STEP) {
        clock = at;
        await daemon.tick(at);
        await drained([daemon]);
      }
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
    const predicted = simulate(config, VIEWS, FROM, TO, STEP).map((c) => ({
      pipe: c.pipe,
      at: c.at,
      scaling: c.scaling,
    }));
    const order = (a: { pipe: string; at: number }, b: { pipe: string; at: number }) =>
      a.at - b.at || a.pipe.localeCompare(b.pipe);
    expect(predicted.length).toBeGreaterThan(10);
    expect([...sent].sort(order)).toEqual([...predicted].sort(order));
    // Besides those, only the three first-contact reads reached the scaling endpoint.
    expect(cloud.stats().requests.scalePipe).toEqual({ 200: predicted.length + 3 });
  }, 120_000);
});
