// Issue 10 item 4: Redis losing the daemon's state is detected and holds scaling. Each case has a
// redis-server of its own on a free port (never the shared one): one restarted empty mid-run, one
// with an eviction policy, one that refuses CONFIG. A pause declared in the config survives.
import { afterEach, describe, expect, it } from 'vitest';
import { startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../../src/daemon/index.js';
import type { Config } from '../../../src/config/types.js';
import { createReadiness, failedChecks } from '../../../src/telemetry/readiness.js';
import { Registry, bindDaemonEvents, createMetrics } from '../../../src/telemetry/index.js';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import { Redis } from 'ioredis';
import { startRedisServer, type RedisServer } from '../../redis-servers.js';
import {
  DEMO,
  FAST_WORKERS,
  collect,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  waitForEvent,
} from '../helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
let server: RedisServer | undefined;
let daemon: Daemon | undefined;

afterEach(async () => {
  await daemon?.stop({ timeoutMs: 2_000 });
  daemon = undefined;
  await server?.stop();
  server = undefined;
});

function config(baseUrl: string, url: string): Config {
  const c = testConfig({
    baseUrl,
    prefix: uniquePrefix('guard'),
    reconcileMs: 24 * 60 * MIN,
    pipes: [demoPipe('orders-events', 'streams'), { ...demoPipe('clickstream', 'streams'), paused: 'incident 42' }],
    policies: {
      streams: policy('streams', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
        oneOff('peak', T0 + 10 * MIN, T0 + 20 * MIN, { replicas: 6 }),
      ]),
    },
  });
  return { ...c, redis: { ...c.redis, url } };
}

/** A daemon on a test clock, its ticks run by hand: `tick(at)` sets the clock, ticks and waits for its work. */
function onClock(c: Config, emitter: DaemonEmitter, url: string, set: (at: number) => void, now: () => number) {
  daemon = createDaemon({
    config: c,
    redisUrl: url,
    prefix: c.redis.prefix,
    now,
    emitter,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  const tick = async (at: number) => {
    set(at);
    await daemon!.tick(at);
    await drained([daemon!]);
  };
  return { tick };
}

describe('Redis state loss', () => {
  it('a Redis restarted empty is detected at the next tick: metric event, not ready with the cause, scaling held until every pipe is read again', async () => {
    server = await startRedisServer();
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const replicas = (p: keyof typeof DEMO.pipes) => cloud.store.pipe(DEMO.pipes[p])!.scaling.replicas;
    const before = { clickstream: replicas('clickstream') };
    let clock = T0;
    const emitter = new DaemonEmitter();
    const states = collect(emitter, 'redis:state');
    const readiness = createReadiness(emitter, {
      reconcileMs: 24 * 60 * MIN,
      configLoaded: true,
      redisReady: true,
      now: () => clock,
    });
    const c = config(cloud.url, server.url);
    const { tick } = onClock(
      c,
      emitter,
      server.url,
      (at) => (clock = at),
      () => clock,
    );
    try {
      await daemon!.start();
      await tick(T0);
      expect(replicas('orders-events')).toBe(3);
      expect(states.at(-1)).toEqual({ lost: false });

      const back = waitForEvent(emitter, 'redis:status', (s) => s.ready, 20_000);
      await server.restartEmpty();
      await back;
      // the window starts: without the guard the pipe was scaled to 6 right away
      await tick(T0 + 10 * MIN);
      expect(states.at(-1)).toEqual({ lost: true, cause: 'data_lost' });
      expect(failedChecks(readiness.report())).toContain('redis_state:data_lost');
      expect(replicas('orders-events')).toBe(3);
      // every pipe was read again at that tick: the next one resumes scaling
      await tick(T0 + 10 * MIN + 30_000);
      expect(states.at(-1)).toEqual({ lost: false });
      expect(failedChecks(readiness.report())).not.toContain('redis_state:data_lost');
      expect(replicas('orders-events')).toBe(6);
      // paused in the config: never scaled, whatever Redis lost
      expect(replicas('clickstream')).toBe(before.clickstream);
    } finally {
      readiness.close();
      await cloud.close();
    }
  }, 60_000);

  it('after a loss a pipe paused only in Redis is scaled again and no longer counts as paused; the loss gauge is 1 for the whole hold, and counted', async () => {
    server = await startRedisServer();
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const replicas = () => cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas;
    let clock = T0;
    const emitter = new DaemonEmitter();
    const registry = new Registry();
    bindDaemonEvents(emitter, createMetrics(registry, { defaultMetrics: false }));
    const sample = async (name: string, labels: string) => {
      const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
      return line === undefined ? undefined : Number(line.split(' ').at(-1));
    };
    const c = config(cloud.url, server.url);
    const { tick } = onClock(
      c,
      emitter,
      server.url,
      (at) => (clock = at),
      () => clock,
    );
    const store = new StateStore(new Redis(server.url), c.redis.prefix);
    try {
      await daemon!.start();
      await store.operator.setPause(
        c.pipes.find((p) => p.name === 'orders-events')!,
        { reason: 'incident 7' },
      );
      await tick(T0);
      expect(await sample('pipescaler_paused', 'pipe="orders-events"')).toBe(1);
      expect(await sample('pipescaler_redis_state_losses_total', 'cause="data_lost"')).toBe(0);
      const pausedAt = replicas();

      const back = waitForEvent(emitter, 'redis:status', (s) => s.ready, 20_000);
      await server.restartEmpty();
      await back;
      await tick(T0 + 10 * MIN);
      // held: nothing sent, and the gauge says so for as long as it holds
      expect(await sample('pipescaler_redis_state_lost', 'cause="data_lost"')).toBe(1);
      expect(replicas()).toBe(pausedAt);
      await tick(T0 + 10 * MIN + 30_000);
      // every pipe read again: scaling resumes, the pause Redis held is gone and no gauge says otherwise
      expect(await sample('pipescaler_redis_state_lost', 'cause="data_lost"')).toBe(0);
      expect(replicas()).toBe(6);
      expect(await sample('pipescaler_paused', 'pipe="orders-events"')).not.toBe(1);
      // the pause the config declares is said again
      expect(await sample('pipescaler_paused', 'pipe="clickstream"')).toBe(1);
      expect(await sample('pipescaler_redis_state_losses_total', 'cause="data_lost"')).toBe(1);
    } finally {
      store.redis.disconnect();
      await cloud.close();
    }
  }, 60_000);

  it('maxmemory-policy other than noeviction holds scaling from the start, naming the cause', async () => {
    server = await startRedisServer({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const emitter = new DaemonEmitter();
    const lost = waitForEvent(emitter, 'redis:state', (s) => s.lost);
    const c = config(cloud.url, server.url);
    daemon = createDaemon({
      config: c,
      redisUrl: server.url,
      prefix: c.redis.prefix,
      now: () => T0 + 10 * MIN,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await daemon.start();
      expect(await lost).toEqual({ lost: true, cause: 'eviction_policy' });
      await daemon.tick(T0 + 10 * MIN);
      await drained([daemon]);
      await daemon.tick(T0 + 10 * MIN + 30_000);
      await drained([daemon]);
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).not.toBe(6);
    } finally {
      await cloud.close();
    }
  }, 60_000);

  it('a server that refuses CONFIG (managed Redis) is let through', async () => {
    server = await startRedisServer({ args: ['--rename-command', 'CONFIG', '""'] });
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const emitter = new DaemonEmitter();
    const states = collect(emitter, 'redis:state');
    const c = config(cloud.url, server.url);
    daemon = createDaemon({
      config: c,
      redisUrl: server.url,
      prefix: c.redis.prefix,
      now: () => T0 + 10 * MIN,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await daemon.start();
      await daemon.tick(T0 + 10 * MIN);
      await drained([daemon]);
      await daemon.tick(T0 + 10 * MIN + 30_000);
      await drained([daemon]);
      expect(states.every((s) => !s.lost)).toBe(true);
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(6);
    } finally {
      await cloud.close();
    }
  }, 60_000);
});
