// Issue 21's audit as a test: three replicas (three daemons on one Redis), one embedded cloud that
// holds a share of the scaling calls past `api.timeout` and carries them out once the client has
// given up (the `late` fault: the platform applies a request its client counted as failed), windows
// opening and closing, and a stop with requests in flight near the end. At the end every pipe's
// platform value is what `status` says, no pipe was scaled down inside a window, the daemon's own
// late changes are `landed_late` and never drift, and each change was confirmed. The clock of the
// daemons is injected (the ticks' instants); the held requests take real time (api.timeout is
// 600 ms), so the test asserts end states and events only, never timings.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { ScalingValues } from '../../src/api/index.js';
import { generateFixtures, startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import type { PipeConfig } from '../../src/policy/index.js';
import {
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  generatedPipes,
  collect,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from './helpers.js';

const prefix = uniquePrefix('audit');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const N = 12;
const REPLICAS = 3;
const BASELINE = 2;
/** The windows, flipping: each one's replicas from `from` to `to` minutes after T0. */
const WINDOWS = [
  { name: 'morning', from: 10, to: 20, replicas: 5 },
  { name: 'noon', from: 30, to: 40, replicas: 4 },
  { name: 'evening', from: 50, to: 60, replicas: 6 },
] as const;
/** The ticks before the stop: each window's opening and the minutes after, each one's end. */
const TICKS = [0, 1, 10, 11, 12, 20, 21, 30, 31, 40, 41, 50, 51];
/** The tick whose changes are in flight when every replica is stopped (the evening window ends). */
const STOP_TICK = 60;

/** What the policy wants at minute m. */
function wanted(m: number): number {
  return WINDOWS.find((w) => m >= w.from && m < w.to)?.replicas ?? BASELINE;
}

/** A seeded random source (mulberry32): the cloud's draws of which calls it holds. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe("the audit's scenario: three replicas, calls held past api.timeout, windows flipping", () => {
  it("ends with every pipe's platform value as status says, no scale-down in a window, no drift for the daemon's own late changes, nothing lost at a stop", async () => {
    const fixtures = generateFixtures({ streamPipes: N, rateLimit: false });
    const cloud = await startCloud({ fixtures, port: 0, random: seeded(21) });
    const pipes: PipeConfig[] = generatedPipes(N, 'flip');
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 24 * 60 * MIN,
      pipes,
      keys: { default: { keyId: fixtures.apiKeys[0]!.keyId, keySecret: fixtures.apiKeys[0]!.keySecret } },
      policies: {
        flip: policy(
          'flip',
          { replicas: BASELINE },
          WINDOWS.map((w) => oneOff(w.name, T0 + w.from * MIN, T0 + w.to * MIN, { replicas: w.replicas })),
        ),
      },
    });
    const config = { ...base, api: { ...base.api, timeoutMs: 600 } };
    let clock = T0;
    const emitters: DaemonEmitter[] = [];
    const make = (): Daemon => {
      const emitter = new DaemonEmitter();
      emitters.push(emitter);
      return createDaemon({
        config,
        redis,
        prefix,
        now: () => clock,
        emitter,
        schedule: false,
        watch: false,
        workerOptions: FAST_WORKERS,
      });
    };
    const all = <K extends Parameters<typeof collect>[1]>(event: K) => {
      const out: ReturnType<typeof collect<K>>[] = [];
      return { out, watch: (e: DaemonEmitter) => out.push(collect(e, event)), flat: () => out.flat() };
    };
    const decisions = all('decision');
    const drifts = all('drift');
    const outcomes = all('outcome');
    const unconfirmed = all('unconfirmed');
    let daemons = Array.from({ length: REPLICAS }, make);
    for (const e of emitters) [decisions, drifts, outcomes, unconfirmed].forEach((c) => c.watch(e));
    const platform = (p: PipeConfig) => cloud.store.pipe(p.pipeId)!.scaling;
    /** Work done: every queue empty, every held request carried out, and its settle read made. */
    const settle = async (ds: readonly Daemon[]) => {
      await drained(ds, 90_000);
      await cloud.settled();
      await drained(ds, 90_000);
    };
    let stopped: Daemon[] = [];
    try {
      for (const d of daemons) await d.start();
      // the first contact reads go unheld: the pipes are known before the calls are held
      await Promise.all(daemons.map((d) => d.tick(T0)));
      await settle(daemons);
      cloud.setFaults({ scalePipe: { late: { probability: 0.35, maxMs: 20_000 } } });

      const atTicks: { m: number; values: number[] }[] = [];
      for (const m of TICKS.slice(1)) {
        clock = T0 + m * MIN;
        await Promise.all(daemons.map((d) => d.tick(clock)));
        await settle(daemons);
        atTicks.push({ m, values: pipes.map((p) => platform(p).replicas ?? -1) });
      }
      // the share of calls held past api.timeout did happen, and the changes they carried landed late
      expect(cloud.stats().faults.late ?? 0).toBeGreaterThan(5);
      expect(outcomes.flat().filter((o) => o.outcome === 'landed_late').length).toBeGreaterThan(0);
      // the tick after each opening or end (and later): every pipe at what the policy wants, so
      // inside a window no pipe went below its window's value
      for (const { m, values } of atTicks.filter(({ m }) => TICKS.includes(m - 1)))
        expect(values, `minute ${m}`).toEqual(pipes.map(() => wanted(m)));

      // a stop with the evening window's end (a scale-down) in flight on every replica
      const held = cloud.stats().faults.late ?? 0;
      clock = T0 + STOP_TICK * MIN;
      await Promise.all(daemons.map((d) => d.tick(clock)));
      await until(() => (cloud.stats().faults.late ?? 0) > held, 20_000, 'a change held by the platform');
      stopped = daemons;
      await Promise.all(daemons.map((d) => d.stop()));
      await cloud.settled();
      cloud.setFaults({});
      // the replicas come back; what was unsettled is read first, what waited is done
      daemons = Array.from({ length: REPLICAS }, make);
      for (const e of emitters.slice(REPLICAS)) [decisions, drifts, outcomes, unconfirmed].forEach((c) => c.watch(e));
      for (const d of daemons) await d.start();
      clock = T0 + (STOP_TICK + 1) * MIN;
      await Promise.all(daemons.map((d) => d.tick(clock)));
      await settle(daemons);

      // every pipe at the baseline, as status says, nothing unsettled, each change confirmed
      const status = await daemons[0]!.status();
      for (const p of pipes) {
        expect(platform(p).replicas, p.name).toBe(BASELINE);
        const row = status.pipes.find((r) => r.pipe === p.name)!;
        for (const [field, value] of Object.entries(row.applied))
          expect(platform(p)[field as keyof ScalingValues], `${p.name} ${field}`).toBe(value);
        const rec = await daemons[0]!.store.read(p.name);
        expect(rec.unsettled, p.name).toBeNull();
        expect(rec.confirming, p.name).toBeNull();
        expect(rec.confirmed?.values.replicas, p.name).toBe(BASELINE);
        expect(rec.drifts, p.name).toBe(0);
      }
      expect(drifts.flat()).toEqual([]);
      expect(outcomes.flat().filter((o) => o.outcome === 'drift_found')).toEqual([]);
      expect(unconfirmed.flat().filter((u) => u.unconfirmed)).toEqual([]);
      // no scale-down was applied while a window was in force
      expect(
        decisions.flat().filter((d) => d.result === 'applied' && d.direction === 'down' && d.windows.length > 0),
      ).toEqual([]);
    } finally {
      for (const d of [...stopped, ...daemons]) await d.stop();
      await cloud.close();
    }
  }, 300_000);
});
