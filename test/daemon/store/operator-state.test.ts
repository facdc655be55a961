// Operator state follows the pipe's identity (organization, service, pipe id), not its name: a
// paused pipe renamed in the config stays paused; state whose pipe left the config is an orphan,
// listed and lifted; a name that comes back for another pipe does not inherit it; pauses stored
// by name before are moved to the identity at start. Daemon in-process, embedded cloud, real Redis.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../../src/cloud/index.js';
import { DaemonEmitter, refOf, type Daemon } from '../../../src/daemon/index.js';
import type { Config } from '../../../src/config/types.js';
import type { PipeConfig } from '../../../src/policy/types.js';
import {
  DEMO,
  collect,
  demoCloud,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  testDaemon,
  testRedis,
} from '../helpers.js';

const { redis, prefix: newPrefix } = testRedis();
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;

let cloud: EmbeddedCloud;
let daemon: Daemon;
let emitter: DaemonEmitter;
let prefix: string;
let clock = T0;

const orders = (name = 'orders-events'): PipeConfig => ({ ...demoPipe('orders-events', 'streams'), name });
const replicas = () => cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas;

function config(pipes: PipeConfig[]): Config {
  return testConfig({
    baseUrl: cloud.url,
    prefix,
    pipes: [...pipes, demoPipe('clickstream', 'streams')],
    policies: {
      streams: policy('streams', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
        oneOff('peak', T0 + 10 * MIN, T0 + 60 * MIN, { replicas: 6 }),
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

beforeEach(async () => {
  prefix = newPrefix('operator-state');
  cloud = await demoCloud();
  clock = T0;
});

afterEach(async () => {
  await daemon.stop({ timeoutMs: 2_000 });
  await cloud.close();
});

async function start(cfg: Config): Promise<void> {
  emitter = new DaemonEmitter();
  daemon = testDaemon({ config: cfg, redis, prefix, now: () => clock, emitter });
  await daemon.start();
}

describe('pauses by identity', () => {
  it('a paused pipe renamed in the config stays paused: no PATCH, status says so', async () => {
    await start(config([orders()]));
    await tickAt(T0);
    expect(replicas()).toBe(3);
    await daemon.store.operator.setPause(orders(), { reason: 'incident 7' });
    await tickAt(T0 + MIN);

    const patches = () => cloud.stats().requests.scalePipe?.[DEMO.pipes['orders-events']] ?? 0;
    const before = patches();
    const decisions = collect(emitter, 'decision');
    expect(await daemon.reload(config([orders('orders-v2')]))).toBe(true);
    // the window wants 6 from T0+10: the renamed pipe is still paused
    for (const m of [10, 11, 12]) await tickAt(T0 + m * MIN);
    expect(replicas()).toBe(3);
    expect(patches()).toBe(before);
    // a new name is a new record (met again, unread while paused): its outcome is said once
    expect(decisions.map((d) => `${d.pipe} ${d.result} ${d.reason}`)).toContain('orders-v2 skipped paused');
    expect(decisions.filter((d) => d.result === 'applied' && d.pipe === 'orders-v2')).toEqual([]);
    const row = (await daemon.status()).pipes.find((p) => p.pipe === 'orders-v2');
    expect(row?.reason).toBe('paused');
    expect(row?.paused).toMatchObject({ reason: 'incident 7', scope: 'pipe' });
    // nothing orphaned: the state is the renamed pipe's
    expect(await daemon.store.operator.orphans(daemon.config().pipes)).toEqual([]);

    // resume by the new name lifts it
    expect(await daemon.store.operator.clearPause(orders('orders-v2'))).toEqual({ all: false, pipes: ['orders-v2'] });
    await tickAt(T0 + 13 * MIN);
    expect(replicas()).toBe(6);
  });

  it('state of a pipe that left the config is listed and lifted; a name come back for another pipe does not inherit it', async () => {
    await start(config([orders()]));
    await tickAt(T0);
    await daemon.store.operator.setPause(orders(), { reason: 'incident 8' });
    await daemon.store.operator.setOverride(
      orders(),
      {
        id: 'o-1',
        values: { replicas: 9 },
        setAt: T0,
        until: T0 + 120 * MIN,
        reason: 'load test',
        source: 'operator',
        mode: 'set',
      },
      clock,
    );
    // the name now points at another pipe (clickstream's ids): the old pipe's state is orphaned
    const moved: PipeConfig = { ...demoPipe('clickstream', 'streams'), name: 'orders-events' };
    expect(await daemon.reload({ ...config([]), pipes: [moved] })).toBe(true);
    await tickAt(T0 + 10 * MIN);
    const row = (await daemon.status()).pipes.find((p) => p.pipe === 'orders-events');
    expect(row?.paused).toBeNull();
    expect(row?.override).toBeNull();
    expect(cloud.store.pipe(DEMO.pipes.clickstream)!.scaling.replicas).toBe(6);

    const orphans = await daemon.store.operator.orphans(daemon.config().pipes);
    expect(orphans).toEqual([
      {
        ref: refOf(orders()),
        name: 'orders-events',
        pause: { reason: 'incident 8', scope: 'pipe' },
        override: expect.objectContaining({ id: 'o-1', values: { replicas: 9 }, pipe: 'orders-events' }),
      },
    ]);
    expect((await daemon.store.operator.clearOrphans(daemon.config().pipes)).map((o) => o.ref)).toEqual([
      refOf(orders()),
    ]);
    expect(await daemon.store.operator.orphans(daemon.config().pipes)).toEqual([]);
    expect(await daemon.store.operator.pause(orders())).toBeNull();
    expect(await daemon.store.operator.override(orders())).toBeNull();
  });

  it('a pause stored by name (an older version) moves to the identity at start, its expiry kept', async () => {
    const keys = (await import('../../../src/daemon/store/redis-keys.js')).redisKeys(prefix);
    const until = Date.now() + 3_600_000;
    await redis.set(keys.legacyPause('orders-events'), JSON.stringify({ reason: 'old pause', until }), 'PXAT', until);
    const was = replicas();
    await start(config([orders()]));
    await tickAt(T0);
    expect(await redis.exists(keys.legacyPause('orders-events'))).toBe(0);
    expect(await daemon.store.operator.pause(orders())).toEqual({ reason: 'old pause', until, scope: 'pipe' });
    expect(await redis.pexpiretime(keys.pause(refOf(orders())))).toBe(until);
    expect(replicas()).toBe(was);
  });

  it('a pause stored by a name the config no longer has follows the identity its record named: renamed, it still pauses; gone, it is an orphan', async () => {
    const keys = (await import('../../../src/daemon/store/redis-keys.js')).redisKeys(prefix);
    const until = Date.now() + 3_600_000;
    const ghost = {
      organizationId: DEMO.org,
      serviceId: DEMO.analytics,
      pipeId: 'b1000000-0000-4000-8000-0000000000aa',
    };
    // as an older version left them: the pause under the name, the record naming its ids
    await redis.set(keys.legacyPause('old-orders'), JSON.stringify({ reason: 'renamed since', until }), 'PXAT', until);
    await redis.hset(keys.pipe('old-orders'), 'ref', JSON.stringify(refOf(orders())));
    await redis.set(keys.legacyPause('gone-events'), JSON.stringify({ reason: 'left the config' }));
    await redis.hset(keys.pipe('gone-events'), 'ref', JSON.stringify(refOf(ghost)));
    // never read by the older version: no identity to give it
    await redis.set(keys.legacyPause('never-read'), JSON.stringify({ reason: 'unknown ids' }));
    const was = replicas();
    await start(config([orders('orders-events-v2')]));
    await tickAt(T0);
    expect(await daemon.store.operator.pause(orders())).toEqual({ reason: 'renamed since', until, scope: 'pipe' });
    expect(await redis.pexpiretime(keys.pause(refOf(orders())))).toBeGreaterThan(until - 5_000);
    expect(replicas()).toBe(was); // still paused under its new name
    expect(await daemon.store.operator.orphans(daemon.config().pipes)).toEqual([
      { ref: refOf(ghost), name: 'gone-events', pause: { reason: 'left the config', scope: 'pipe' }, override: null },
    ]);
    expect(await redis.exists(keys.legacyPause('old-orders'), keys.legacyPause('gone-events'))).toBe(0);
    expect(await redis.get(keys.legacyPause('never-read'))).not.toBeNull();
  });
});
