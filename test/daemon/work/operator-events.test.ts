// Overrides and changes made by hand on a fleet: three daemon replicas on one Redis against the
// embedded cloud over HTTP. An override is in force from the next tick on whichever replica
// evaluates, a newer one supersedes it with no tick under neither, and it ends at the first tick at
// or after its end; each change is one 'override' event fleet-wide. The same again with each
// replica evaluating alone (the other two's workers paused), so every one of them is shown to take
// the override, its successor and its end within one tick. onDrift: hold keeps a change made by
// hand for its duration, then the policy resumes; onDrift: adoptAsFloor keeps it as the pipe's
// minimum until the window ends (logged, counted, in the history), then the policy resumes.
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../../src/cloud/index.js';
import { DaemonEmitter, type Daemon, type DaemonEvents } from '../../../src/daemon/index.js';
import type { Override } from '../../../src/policy/index.js';
import type { Config } from '../../../src/config/types.js';
import type { Behavior, Window } from '../../../src/policy/types.js';
import { HistoryStore } from '../../../src/history/index.js';
import { Registry, bindAuditLog, bindDaemonEvents, createLogger, createMetrics } from '../../../src/telemetry/index.js';
import { parseScrape, sampleValue } from '../../telemetry/exposition-parse.js';
import {
  DEMO,
  NO_BEHAVIOR,
  collect,
  demoCloud,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  testDaemon,
  testRedis,
  until,
} from '../helpers.js';
import { lossFixture } from './state-loss-fixture.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const { redis, prefix: newPrefix } = testRedis();
let cloud: EmbeddedCloud;
let daemons: Daemon[] = [];
let clock = T0;
let prefix = '';

afterEach(async () => {
  // a test of its own fixture (lossFixture) closes it itself
  if (daemons.length === 0) return;
  for (const d of daemons) await d.stop({ timeoutMs: 2_000 });
  daemons = [];
  await cloud.close();
});

async function fleet(
  behavior: Behavior = NO_BEHAVIOR,
  reconcileMs = 24 * 60 * MIN,
  baseline = 2,
  windows: Window[] = [],
) {
  prefix = newPrefix('operator-events');
  cloud = await demoCloud();
  clock = T0;
  const config: Config = testConfig({
    baseUrl: cloud.url,
    prefix,
    reconcileMs,
    pipes: [demoPipe('orders-events', 'streams'), demoPipe('clickstream', 'streams')],
    policies: {
      streams: policy(
        'streams',
        { replicas: baseline, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
        windows,
        behavior,
      ),
    },
  });
  const emitters = [0, 1, 2].map(() => new DaemonEmitter());
  daemons = emitters.map((emitter) => testDaemon({ config, redis, prefix, now: () => clock, emitter }));
  for (const d of daemons) await d.start();
  const on = <K extends keyof DaemonEvents>(event: K) =>
    emitters.map((e, replica) => ({ replica, events: collect(e, event) }));
  return { config, on, emitters };
}

async function tick(at: number): Promise<void> {
  clock = at;
  await Promise.all(daemons.map((d) => d.tick(at)));
  await drained(daemons);
}

/** Only replica `r` takes jobs: the others' workers pause (their blocking reads ended first). */
async function only(r: number): Promise<void> {
  for (const [i, d] of daemons.entries()) {
    for (const w of d.workers()) await (i === r ? w.resume() : w.pause());
  }
}

/** The tick at `at` enqueued and evaluated by replica `r` alone (after only(r)). */
async function tickOn(r: number, at: number): Promise<void> {
  clock = at;
  await daemons[r]!.tick(at);
  await drained(daemons);
}

const replicas = (name: keyof typeof DEMO.pipes) => cloud.store.pipe(DEMO.pipes[name])!.scaling.replicas;

function override(id: string, replicasValue: number, setAt: number, until: number): Override {
  return {
    id,
    values: { replicas: replicasValue },
    setAt,
    until,
    reason: `incident ${id}`,
    source: 'operator',
    mode: 'set',
  };
}

describe('an override on three replicas', () => {
  it('is in force from the next tick, superseded with no tick under neither, and ends at the first tick at its end', async () => {
    const { config, on } = await fleet();
    const evaluations = on('evaluation');
    const events = on('override');
    const outcomes = on('outcome');
    const orders = config.pipes[0]!;
    await tick(T0);
    expect(replicas('orders-events')).toBe(2);

    // set between two ticks, as `pipescaler override orders-events --set replicas=8 --for 10m` does
    clock = T0 + 30_000;
    await daemons[1]!.store.operator.setOverride(orders, override('a', 8, clock, clock + 10 * MIN), clock);
    await tick(T0 + MIN);
    expect(replicas('orders-events')).toBe(8);
    expect(replicas('clickstream')).toBe(2);
    for (const m of [2, 3, 4, 5]) await tick(T0 + m * MIN);
    // superseded at 5m30s by a lower one that lasts longer: one write, no instant without either
    clock = T0 + 5 * MIN + 30_000;
    const previous = await daemons[2]!.store.operator.setOverride(
      orders,
      override('b', 5, clock, T0 + 20 * MIN),
      clock,
    );
    expect(previous?.id).toBe('a');
    for (let m = 6; m <= 21; m++) {
      await tick(T0 + m * MIN);
      expect(replicas('orders-events'), `at ${m} min`).toBe(m < 20 ? 5 : 2);
    }

    // every evaluation of the pipe, on whichever replica ran it, saw the override in force (and which)
    const seen = evaluations
      .flatMap(({ replica, events: es }) => es.map((e) => ({ replica, ...e })))
      .filter((e) => e.pipe === 'orders-events')
      .sort((a, b) => a.tickAt - b.tickAt);
    const byTick = new Map(seen.map((e) => [(e.tickAt - T0) / MIN, e.decision.override?.id ?? null]));
    expect([...byTick]).toEqual([
      [0, null],
      [1, 'a'],
      [2, 'a'],
      [3, 'a'],
      [4, 'a'],
      [5, 'a'],
      ...[6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19].map((m) => [m, 'b']),
      [20, null],
      [21, null],
    ]);
    // one evaluation per tick fleet-wide, spread over the replicas
    expect(seen.filter((e) => e.tickAt > T0)).toHaveLength(21);
    // each change said once, fleet-wide
    const said = events.flatMap(({ events: es }) => es).map((e) => `${e.pipe} ${e.action} ${e.id}`);
    expect(said.sort()).toEqual(['orders-events expired b', 'orders-events set a', 'orders-events superseded b']);
    // and for the history: one 'override' outcome each
    const history = outcomes.flatMap(({ events: es }) => es).filter((o) => o.outcome === 'override');
    expect(history.map((o) => `${o.reason} ${JSON.stringify(o.target)}`).sort()).toEqual([
      'expired {"replicas":5}',
      'set {"replicas":8}',
      'superseded {"replicas":5}',
    ]);
  });
});

describe('an override on each of three replicas evaluating alone', () => {
  it('takes effect at the next tick, is superseded with no tick under neither, and ends at the first tick at or after its end', async () => {
    const { config, on } = await fleet();
    const evaluations = on('evaluation');
    const decisions = on('decision');
    const events = on('override');
    const orders = config.pipes[0]!;
    // per replica: the override's value, its successor's, and how far past a tick the successor ends
    const runs = [
      { first: 8, next: 5, endsAfterTickMs: 0 },
      { first: 9, next: 6, endsAfterTickMs: 20_000 },
      { first: 7, next: 4, endsAfterTickMs: 59_000 },
    ];
    for (const [r, run] of runs.entries()) {
      await only(r);
      const base = T0 + r * 30 * MIN;
      const end = base + 5 * MIN + run.endsAfterTickMs;
      await tickOn(r, base);
      expect(replicas('orders-events')).toBe(2);
      // set between two ticks, through another replica's store (it is only Redis, as the CLI writes it)
      clock = base + 30_000;
      await daemons[(r + 1) % 3]!.store.operator.setOverride(
        orders,
        override(`first-${r}`, run.first, clock, base + 10 * MIN),
        clock,
      );
      await tickOn(r, base + MIN);
      expect(replicas('orders-events'), `replica ${r} at 1 min`).toBe(run.first);
      await tickOn(r, base + 2 * MIN);
      clock = base + 2 * MIN + 30_000;
      const previous = await daemons[(r + 2) % 3]!.store.operator.setOverride(
        orders,
        override(`next-${r}`, run.next, clock, end),
        clock,
      );
      expect(previous?.id).toBe(`first-${r}`);
      for (let m = 3; m <= 7; m++) {
        await tickOn(r, base + m * MIN);
        expect(replicas('orders-events'), `replica ${r} at ${m} min`).toBe(base + m * MIN >= end ? 2 : run.next);
      }

      const inRun = <E extends { replica: number }>(es: E[], at: (e: E) => number) =>
        es.filter((e) => at(e) >= base && at(e) < base + 30 * MIN);
      const seen = inRun(
        evaluations.flatMap(({ replica, events: es }) => es.map((e) => ({ replica, ...e }))),
        (e) => e.tickAt,
      ).filter((e) => e.pipe === 'orders-events');
      // replica r alone evaluated, once per tick, and saw at every tick the override in force
      expect(new Set(seen.map((e) => e.replica))).toEqual(new Set([r]));
      const expected = [null, `first-${r}`, `first-${r}`, `next-${r}`, `next-${r}`];
      expected.push(run.endsAfterTickMs === 0 ? null : `next-${r}`, null, null);
      expect(seen.map((e) => e.decision.override?.id ?? null)).toEqual(expected);
      expect(seen.map((e) => (e.tickAt - base) / MIN)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      // and it alone sent the changes
      const sent = decisions.flatMap(({ replica, events: es }) =>
        es
          .filter((e) => e.pipe === 'orders-events' && e.result === 'applied')
          .map((e) => ({ replica, replicas: e.after.replicas })),
      );
      expect(sent.slice(-3)).toEqual([
        { replica: r, replicas: run.first },
        { replica: r, replicas: run.next },
        { replica: r, replicas: 2 },
      ]);
      const said = events.flatMap(({ replica, events: es }) =>
        es.filter((e) => e.id.endsWith(`-${r}`)).map((e) => `${replica} ${e.action} ${e.id}`),
      );
      expect(said).toEqual([`${r} set first-${r}`, `${r} superseded next-${r}`, `${r} expired next-${r}`]);
    }
  });
});

describe('onDrift: hold on three replicas', () => {
  it('keeps a change made by hand for its duration, then resumes the policy', async () => {
    const behavior: Behavior = { ...NO_BEHAVIOR, onDrift: { kind: 'hold', durationMs: 10 * MIN } };
    // a reconcile read every tick, so the hand change is found at the next one; a baseline the
    // fixture's pipes do not have, so pipescaler changes them first (what it applied is the
    // reference a change made by hand is found against)
    const { config, on } = await fleet(behavior, MIN, 3);
    const drifts = on('drift');
    const events = on('override');
    await tick(T0);
    expect(replicas('orders-events')).toBe(3);

    // someone scales the pipe by hand on the platform
    cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas = 7;
    const atSeven: number[] = [];
    for (let m = 1; m <= 12; m++) {
      await tick(T0 + m * MIN);
      const found = drifts.flatMap(({ events: es }) => es).find((d) => d.pipe === 'orders-events');
      if (found === undefined) continue;
      // from the drift on, the hand-made value stands until the hold ends, then the policy is back
      const heldUntil = (await daemons[0]!.store.operator.override(config.pipes[0]!))?.until ?? 0;
      expect(replicas('orders-events'), `at ${m} min`).toBe(T0 + m * MIN < heldUntil ? 7 : 3);
      if (replicas('orders-events') === 7) atSeven.push(m);
    }
    // found at the first tick's read, held the ten minutes after it
    expect(atSeven).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const drift = drifts.flatMap(({ events: es }) => es).filter((d) => d.pipe === 'orders-events');
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ expected: { replicas: 3 }, actual: { replicas: 7 }, onDrift: 'hold' });
    const said = events.flatMap(({ events: es }) => es);
    expect(said.map((e) => `${e.action} ${e.source} ${e.reason} ${JSON.stringify(e.values)}`).sort()).toEqual([
      'expired manual manual {"replicas":7}',
      'set manual manual {"replicas":7}',
    ]);
    const stored = await daemons[0]!.store.operator.override(config.pipes[0]!);
    expect(stored?.until).toBeLessThanOrEqual(T0 + 12 * MIN);
    expect(replicas('orders-events')).toBe(3);
    expect(replicas('clickstream')).toBe(3);
  });
});

describe('onDrift: adoptAsFloor on three replicas', () => {
  it('keeps a change made by hand as a floor until the window ends (logged, counted, in the history), then resumes the policy', async () => {
    const behavior: Behavior = { ...NO_BEHAVIOR, onDrift: { kind: 'adoptAsFloor' } };
    const peakEnd = T0 + 10 * MIN;
    // a reconcile read every tick, and a window that sets 5 from 2 min to 10 min
    const { config, on, emitters } = await fleet(behavior, MIN, 3, [
      oneOff('peak', T0 + 2 * MIN, peakEnd, { replicas: 5 }),
    ]);
    // what each replica logs and counts, as `pipescaler run` binds them
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n'))
          if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const registries = emitters.map((emitter) => {
      const registry = new Registry();
      bindDaemonEvents(emitter, createMetrics(registry, { defaultMetrics: false, startedAt: T0 }));
      bindAuditLog(emitter, createLogger({ level: 'info', pretty: false, destination }));
      return registry;
    });
    const drifts = on('drift');
    const events = on('override');
    for (let m = 0; m <= 2; m++) await tick(T0 + m * MIN);
    expect(replicas('orders-events')).toBe(5);

    // someone scales the pipe up by hand inside the window
    cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas = 7;
    for (let m = 3; m <= 13; m++) {
      await tick(T0 + m * MIN);
      // found at the first read, kept as the minimum while the window lasts (the window's 5 does
      // not take it down), and the policy's baseline back at the first tick at the window's end
      expect(replicas('orders-events'), `at ${m} min`).toBe(T0 + m * MIN < peakEnd ? 7 : 3);
      if (m === 3) {
        expect(await daemons[0]!.store.operator.override(config.pipes[0]!)).toMatchObject({
          values: { replicas: 7 },
          until: peakEnd,
          reason: 'manual',
          source: 'manual',
          mode: 'floor',
        });
      }
    }
    expect(replicas('clickstream')).toBe(3);

    const drift = drifts.flatMap(({ events: es }) => es).filter((d) => d.pipe === 'orders-events');
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ expected: { replicas: 5 }, actual: { replicas: 7 }, onDrift: 'adoptAsFloor' });
    const said = events.flatMap(({ events: es }) => es);
    expect(said.map((e) => `${e.action} ${e.source} ${e.until - T0} ${JSON.stringify(e.values)}`).sort()).toEqual([
      `expired manual ${10 * MIN} {"replicas":7}`,
      `set manual ${10 * MIN} {"replicas":7}`,
    ]);

    // logged
    const logged = lines
      .filter((l) => l.pipe === 'orders-events')
      .map((l) => `${String(l.msg)} ${String(l.source ?? l.onDrift)}`);
    expect(logged).toEqual(
      expect.arrayContaining([
        'pipe scaling changed by hand: kept (onDrift adoptAsFloor) as an override with reason manual adoptAsFloor',
        'override set manual',
        'override expired manual',
      ]),
    );
    // counted: summed over the replicas' registries, each counted once fleet-wide
    const scrapes = await Promise.all(registries.map(async (r) => parseScrape(await r.metrics())));
    const total = (name: string, labels: Record<string, string>) =>
      scrapes.reduce((sum, sc) => sum + (sampleValue(sc, name, labels) ?? 0), 0);
    expect(total('pipescaler_drift_actions_total', { pipe: 'orders-events', action: 'adoptAsFloor' })).toBe(1);
    expect(total('pipescaler_drift_actions_total', { pipe: 'orders-events', action: 'revert' })).toBe(0);
    expect(total('pipescaler_overrides_total', { pipe: 'orders-events', action: 'set', source: 'manual' })).toBe(1);
    expect(total('pipescaler_overrides_total', { pipe: 'orders-events', action: 'expired', source: 'manual' })).toBe(1);
    // kept in the history every replica reads
    const history = new HistoryStore(redis, prefix);
    const kept = async () =>
      (await history.read('orders-events')).entries
        .filter((e) => e.outcome === 'drift_found' || e.outcome === 'override')
        .map((e) => `${e.outcome} ${e.reason}`)
        .sort();
    await until(async () => (await kept()).length >= 3, 20_000, 'the history entries');
    expect(await kept()).toEqual(['drift_found drift_adoptAsFloor', 'override expired', 'override set']);
  });
});

describe('a drift found as Redis loses the state', () => {
  it('the state lost right after the read that found it was written: no count, override or event in the emptied state', async () => {
    const f = await lossFixture(redis, newPrefix('drift-loss'), {
      start: T0,
      boundary: T0 + 60 * MIN,
      onDrift: { kind: 'hold', durationMs: 10 * MIN },
      reconcileMs: MIN,
    });
    try {
      const drifts = f.on('drift');
      await f.tick(T0);
      expect(f.replicas()).toBe(2);
      // someone scales the pipe by hand; the read that finds it is written, then the state goes
      f.cloud.store.pipe(f.pipe.pipeId)!.scaling.replicas = 7;
      const loss = f.loseStateAfterAnswer();
      for (let m = 1; m <= 5 && !loss.lost; m++) await f.tick(T0 + m * MIN);
      expect(loss.lost).toBe(true);
      expect(await f.record()).toEqual({});
      expect(await f.daemon.store.operator.override(f.pipe)).toBeNull();
      expect(drifts).toEqual([]);
    } finally {
      await f.close();
    }
  });
});
