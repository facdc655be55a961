// Issue 21: a stop with requests in flight loses nothing. The stop's grace is api.timeout and a
// second (shutdown.ts stopGraceMs), so every change in flight is answered (applied) or times out
// (recorded unsettled, the platform may still carry it out); one cut by a shorter grace is recorded
// unsettled too. What is unsettled is read first at the next start: found, it is the daemon's own
// change landing late, never drift. The cloud holds requests with real latency (a second or two);
// the test asserts end states and events, never timings.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import type { Config } from '../../src/config/index.js';
import { createDaemon, DaemonEmitter, handleSignals, type Daemon, type DaemonLogger } from '../../src/daemon/index.js';
import { ANSWER_WRITE_MS, stopWithinMs } from '../../src/daemon/runtime/shutdown.js';
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
} from './helpers.js';

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const prefixes: string[] = [];
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const PIPES = ['orders-events', 'clickstream', 'nightly-s3'] as const;
const PEAK = { 'orders-events': { replicas: 5 }, clickstream: { replicas: 5 }, 'nightly-s3': { concurrency: 8 } };

afterAll(async () => {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
});

function configFor(cloud: EmbeddedCloud, prefix: string, timeoutMs: number): Config {
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
      ]),
      objects: policy('objects', { concurrency: 2 }, [
        oneOff('load', T0 + 10 * MIN, T0 + 30 * MIN, { concurrency: 8 }),
      ]),
    },
  });
  return { ...config, api: { ...config.api, timeoutMs } };
}

/** A daemon of the scenario, with its events and its log lines. */
function daemonOf(config: Config, prefix: string, clock: () => number) {
  const emitter = new DaemonEmitter();
  const lines: { msg: string; obj: object }[] = [];
  const log = (obj: object, msg?: string) => lines.push({ msg: msg ?? '', obj });
  const logger: DaemonLogger = { info: log, warn: log, error: log, debug: () => {} };
  const daemon = createDaemon({
    config,
    redis,
    prefix,
    now: clock,
    emitter,
    logger,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  return {
    daemon,
    drifts: collect(emitter, 'drift'),
    outcomes: collect(emitter, 'outcome'),
    decisions: collect(emitter, 'decision'),
    stopLine: () => lines.find((l) => l.msg === 'daemon stopped')?.obj as { graceful: boolean } | undefined,
  };
}

const platform = (cloud: EmbeddedCloud, name: (typeof PIPES)[number]) => cloud.store.pipe(DEMO.pipes[name])!.scaling;

/** Every pipe at its window's values on the platform, `status` saying the same, nothing unsettled. */
async function settledAtPeak(cloud: EmbeddedCloud, daemon: Daemon): Promise<void> {
  const status = await daemon.status();
  for (const name of PIPES) {
    expect(platform(cloud, name), name).toMatchObject(PEAK[name]);
    const row = status.pipes.find((p) => p.pipe === name)!;
    expect(row.applied, name).toMatchObject(PEAK[name]);
    for (const [field, value] of Object.entries(row.applied))
      expect(platform(cloud, name)[field as keyof typeof row.applied], `${name} ${field}`).toBe(value);
    const rec = await daemon.store.read(name);
    expect(rec.unsettled, name).toBeNull();
    expect(rec.confirming, name).toBeNull();
    expect(rec.confirmed?.values, name).toMatchObject(PEAK[name]);
  }
}

/** The scenario up to a tick whose changes the platform holds: first contact, then the peak's tick. */
async function changesInFlight(timeoutMs: number, faults: Parameters<EmbeddedCloud['setFaults']>[0]) {
  const prefix = uniquePrefix('inflight');
  prefixes.push(prefix);
  const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  let clock = T0;
  const config = configFor(cloud, prefix, timeoutMs);
  const first = daemonOf(config, prefix, () => clock);
  await first.daemon.start();
  await first.daemon.tick(T0);
  await drained([first.daemon]);
  for (const name of PIPES) expect(platform(cloud, name)).not.toMatchObject(PEAK[name]);
  // what the first contact sent (the baseline) is not what this test is about
  first.decisions.length = 0;
  first.outcomes.length = 0;
  cloud.setFaults(faults);
  const held = () => (cloud.stats().faults.latency ?? 0) + (cloud.stats().faults.late ?? 0);
  clock = T0 + 10 * MIN;
  await first.daemon.tick(clock);
  await until(() => held() >= PIPES.length, 20_000, "every pipe's change held by the platform");
  const next = () => daemonOf(config, prefix, () => clock);
  return { cloud, first, next, setClock: (at: number) => (clock = at) };
}

describe('a stop with changes in flight', () => {
  it('SIGTERM waits up to api.timeout: every change in flight is answered and applied, nothing cut', async () => {
    const { cloud, first } = await changesInFlight(3_000, {
      scalePipe: { latency: { probability: 1, minMs: 1_000, maxMs: 1_500 } },
    });
    try {
      // the daemon's own signal handler, as `pipescaler run` installs it (default grace: stopGraceMs)
      const said: object[] = [];
      const exited = new Promise<number>((resolve) => {
        const off = handleSignals(first.daemon, {
          logger: { info: (o) => said.push(o), warn: () => {}, error: () => {}, debug: () => {} },
          exit: (code) => {
            off();
            resolve(code);
          },
        });
      });
      process.emit('SIGTERM', 'SIGTERM');
      expect(await exited).toBe(0);
      // the stop timeout it says: the grace (api.timeout and a second to write the answers) and the rest
      expect(said).toContainEqual({ signal: 'SIGTERM', stopTimeoutMs: stopWithinMs(3_000 + ANSWER_WRITE_MS) });
      expect(first.stopLine()).toMatchObject({ graceful: true });
      expect(
        first.decisions
          .filter((d) => d.result === 'applied')
          .map((d) => d.pipe)
          .sort(),
      ).toEqual([...PIPES].sort());
      expect(first.drifts).toEqual([]);
      await settledAtPeak(cloud, first.daemon);
    } finally {
      await first.daemon.stop();
      await cloud.close();
    }
  }, 60_000);

  it('a change the platform holds past api.timeout and carries out then is recorded unsettled, and the next start reads it as landed late, not drift', async () => {
    const { cloud, first, next } = await changesInFlight(1_500, {
      scalePipe: { late: { probability: 1, maxMs: 30_000 } },
    });
    let second: ReturnType<typeof next> | undefined;
    try {
      await first.daemon.stop();
      // every change timed out within the grace: none was cut, each one is unsettled
      expect(first.stopLine()).toMatchObject({ graceful: true });
      for (const name of PIPES) expect((await first.daemon.store.read(name)).unsettled, name).not.toBeNull();
      expect(first.decisions.filter((d) => d.result === 'applied' || d.result === 'failed')).toEqual([]);
      // the platform carries each one out once its client has gone
      await cloud.settled();
      for (const name of PIPES) expect(platform(cloud, name), name).toMatchObject(PEAK[name]);

      cloud.setFaults({});
      second = next();
      await second.daemon.start();
      await drained([second.daemon]);
      const landed = second.outcomes.filter((o) => o.outcome === 'landed_late').map((o) => o.pipe);
      expect(landed.sort()).toEqual([...PIPES].sort());
      expect([...first.drifts, ...second.drifts]).toEqual([]);
      // nothing sent again: the reads found the changes in force
      expect(second.decisions.filter((d) => d.result === 'applied')).toEqual([]);
      await settledAtPeak(cloud, second.daemon);
    } finally {
      await second?.daemon.stop();
      await first.daemon.stop();
      await cloud.close();
    }
  }, 60_000);

  it('a grace shorter than the requests in flight cuts them: recorded unsettled, settled by the next start', async () => {
    const { cloud, first, next } = await changesInFlight(20_000, {
      scalePipe: { late: { probability: 1, maxMs: 30_000 } },
    });
    let second: ReturnType<typeof next> | undefined;
    try {
      await first.daemon.stop({ timeoutMs: 300 });
      expect(first.stopLine()).toMatchObject({ graceful: false });
      for (const name of PIPES) expect((await first.daemon.store.read(name)).unsettled, name).not.toBeNull();
      await cloud.settled();
      cloud.setFaults({});
      second = next();
      await second.daemon.start();
      await drained([second.daemon]);
      expect(
        second.outcomes
          .filter((o) => o.outcome === 'landed_late')
          .map((o) => o.pipe)
          .sort(),
      ).toEqual([...PIPES].sort());
      expect([...first.drifts, ...second.drifts]).toEqual([]);
      await settledAtPeak(cloud, second.daemon);
    } finally {
      await second?.daemon.stop();
      await first.daemon.stop();
      await cloud.close();
    }
  }, 60_000);
});
