// Two daemons on one Redis over the same ticks: each pipe is evaluated once per tick (the
// deterministic job ids), and the platform sees the same PATCHes as with one daemon.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import {
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
} from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const TICKS = [0, 1, 10, 11, 20, 30, 31].map((m) => T0 + m * MIN);
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const prefixes: string[] = [];

afterAll(async () => {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
});

/** Run `replicas` daemons over TICKS; what the cloud saw and how often each pipe was evaluated. */
async function runFleet(replicas: number) {
  const prefix = uniquePrefix(`replicas${replicas}`);
  prefixes.push(prefix);
  const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  let clock = T0;
  const config = testConfig({
    baseUrl: cloud.url,
    prefix,
    reconcileMs: 24 * 60 * MIN,
    pipes: [
      demoPipe('orders-events', 'streams'),
      demoPipe('clickstream', 'streams'),
      demoPipe('nightly-s3', 'objects'),
    ],
    policies: {
      streams: policy('streams', { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
        oneOff('peak', T0 + 10 * MIN, T0 + 30 * MIN, { replicas: 5 }),
        oneOff('spike', T0 + 20 * MIN, T0 + 25 * MIN, { replicaCpuMillicores: 1000 }, 1),
      ]),
      objects: policy('objects', { concurrency: 2 }, [
        oneOff('load', T0 + 10 * MIN, T0 + 20 * MIN, { concurrency: 8 }),
      ]),
    },
  });
  const emitters: DaemonEmitter[] = [];
  const daemons: Daemon[] = [];
  for (let i = 0; i < replicas; i++) {
    const emitter = new DaemonEmitter();
    emitters.push(emitter);
    daemons.push(
      createDaemon({
        config,
        redis,
        prefix,
        now: () => clock,
        emitter,
        schedule: false,
        watch: false,
        workerOptions: FAST_WORKERS,
      }),
    );
  }
  const evaluations = emitters.flatMap((e) => [collect(e, 'evaluation')]);
  const applied = emitters.flatMap((e) => [collect(e, 'decision')]);
  for (const d of daemons) await d.start();
  try {
    for (const at of TICKS) {
      clock = at;
      await Promise.all(daemons.map((d) => d.tick(at)));
      await drained(daemons);
    }
    const perTick = new Map<string, number>();
    for (const e of evaluations.flat()) {
      const k = `${e.pipe}@${(e.tickAt - T0) / MIN}`;
      perTick.set(k, (perTick.get(k) ?? 0) + 1);
    }
    return {
      requests: cloud.stats().requests.scalePipe ?? {},
      perTick: Object.fromEntries([...perTick].sort()),
      applied: applied
        .flat()
        .filter((d) => d.result === 'applied')
        .map((d) => `${d.pipe} ${JSON.stringify(d.after)}`)
        .sort(),
      final: [...cloud.store.pipes.values()].map((p) => `${p.name} ${JSON.stringify(p.scaling)}`).sort(),
    };
  } finally {
    for (const d of daemons) await d.stop({ timeoutMs: 2_000 });
    await cloud.close();
  }
}

describe('two replicas on one Redis', () => {
  it('evaluate each pipe once per tick and send exactly the PATCHes one daemon sends', async () => {
    const one = await runFleet(1);
    const two = await runFleet(2);
    // Every pipe is evaluated once at every tick (twice at the first: the tick, and the
    // decision right after first contact), whether one daemon or two.
    expect(Object.values(one.perTick).every((n) => n === 1 || n === 2)).toBe(true);
    expect(two.perTick).toEqual(one.perTick);
    expect(two.requests).toEqual(one.requests);
    expect(two.applied).toEqual(one.applied);
    expect(two.final).toEqual(one.final);
    expect(one.applied.length).toBeGreaterThan(4);
  });
});
