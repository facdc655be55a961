// Redis Sentinel (src/daemon/store/redis-connection.ts): a master, a replica and three sentinels of this
// test's own on free ports (test/redis-topologies.ts). The daemon and the CLI (pause, status,
// resume) connect through redis+sentinel://; the master is killed between two ticks and the
// sentinels promote the replica. Nothing is lost: the pause set before holds through the tick that
// runs during the failover, the applied state and the marker survive (no data-loss hold), the
// pipes converge, and every change is sent once. The promoted replica's maxmemory-policy is read
// again after the reconnect. A second case: `SENTINEL FAILOVER` demotes a master that stays up.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startSentinelGroup, type SentinelGroup } from '../redis-topologies.js';
import { collect, pipeOf, runCli, uniquePrefix } from './helpers.js';
import { startTopologyRun, type TopologyRun } from './topology-run.js';
import { requireTool } from '../require-tool.js';

const hasSentinel = requireTool('redis-sentinel', 'redis-sentinel');

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
let group: SentinelGroup | undefined;
let run: TopologyRun | undefined;

afterEach(async () => {
  await run?.stop();
  await group?.stop();
  run = undefined;
  group = undefined;
});

const cli = (env: Record<string, string>, ...args: string[]) => runCli(env, args);

async function configSet(port: number, policy: string): Promise<void> {
  const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
  try {
    await r.config('SET', 'maxmemory-policy', policy);
  } finally {
    r.disconnect();
  }
}

describe.skipIf(!hasSentinel)('Redis Sentinel', () => {
  it('the daemon and the CLI follow a failover (the master killed) and lose nothing', async () => {
    group = await startSentinelGroup();
    const prefix = uniquePrefix('sentinel');
    const env = { PIPESCALER_REDIS_URL: group.url, PIPESCALER_REDIS_PREFIX: prefix };
    run = await startTopologyRun(group.url, prefix, T0);
    const { daemon, replicas, tick } = run;
    const states = collect(run.emitter, 'redis:state');
    const statuses = collect(run.emitter, 'redis:status');
    const applied = collect(run.emitter, 'decision');
    await daemon.start();
    await tick(T0);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([3, 3]);

    // An operator pauses a pipe through the sentinels; the window starts and only the other scales.
    const paused = await cli(env, 'pause', 'clickstream', '--reason', 'incident 42');
    expect(paused).toMatchObject({ code: 0, stderr: '' });
    await tick(T0 + 10 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([7, 3]);

    // The master dies (no persistence: its memory is gone); a tick runs while the sentinels promote
    // the replica. Without the pause the paused pipe would be scaled to 7 here.
    // The replica was set up with an eviction policy: after the failover the daemon reads
    // maxmemory-policy again and holds scaling until it is fixed.
    const oldMaster = await group.masterPort();
    const replica = group.nodes.find((p) => p !== oldMaster)!;
    await configSet(replica, 'allkeys-lru');
    await group.synced();
    const { promoted } = await group.killMaster();
    await tick(T0 + 11 * MIN);
    const newMaster = await promoted;
    expect(newMaster).toBe(replica);
    expect(statuses.map((s) => s.ready)).toEqual([true, false, true]);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([7, 3]);
    expect(states.filter((s) => s.lost)).toEqual([{ lost: true, cause: 'eviction_policy' }]);
    await configSet(newMaster, 'noeviction');
    expect(await daemon.store.operator.pause(pipeOf(daemon, 'clickstream'))).toMatchObject({
      reason: 'incident 42',
      scope: 'pipe',
    });
    expect((await daemon.store.read('orders-events')).applied).toMatchObject({ replicas: 7 });

    // The CLI finds the new master through the sentinels too.
    const status = await cli(env, 'status', '--json');
    expect(status.code, status.stderr).toBe(0);
    const rows = JSON.parse(status.stdout) as { pipe: string; paused: unknown; applied: unknown }[];
    expect(rows.find((r) => r.pipe === 'clickstream')).toMatchObject({
      paused: { reason: 'incident 42' },
      applied: { replicas: 3 },
    });
    expect(rows.find((r) => r.pipe === 'orders-events')).toMatchObject({ applied: { replicas: 7 } });
    expect(await cli(env, 'resume', 'clickstream')).toMatchObject({ code: 0 });

    await tick(T0 + 12 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([7, 7]);
    await tick(T0 + 30 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([3, 3]);

    // The marker key survived: no data-loss hold, only the policy's. Each change was sent once.
    expect(states.filter((s) => s.lost)).toEqual([{ lost: true, cause: 'eviction_policy' }]);
    expect(states.at(-1)).toEqual({ lost: false });
    const changes = (pipe: string) =>
      applied.filter((d) => d.pipe === pipe && d.result === 'applied').map((d) => d.after.replicas);
    expect(changes('orders-events')).toEqual([3, 7, 3]);
    expect(changes('clickstream')).toEqual([3, 7, 3]);
    expect(daemon.ready()).toBe(true);
  }, 60_000);

  it('SENTINEL FAILOVER (the old master demoted and still up): the connections and workers follow, nothing is lost', async () => {
    group = await startSentinelGroup();
    run = await startTopologyRun(group.url, uniquePrefix('sentinel-failover'), T0);
    const { daemon, replicas, tick } = run;
    const states = collect(run.emitter, 'redis:state');
    const decisions = collect(run.emitter, 'decision');
    await daemon.start();
    await tick(T0);
    await daemon.store.operator.setPause(pipeOf(daemon, 'clickstream'), { reason: 'incident 43' });
    await group.synced();
    const before = await group.masterPort();
    // Sentinel promotes the replica and turns the old master into its replica, killing its clients:
    // the daemon's connections (the workers' blocking ones too) must find the new master.
    expect(await group.failover()).not.toBe(before);
    await tick(T0 + 10 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([7, 3]);
    await daemon.store.operator.clearPause(pipeOf(daemon, 'clickstream'));
    await tick(T0 + 11 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([7, 7]);
    const changes = (pipe: string) =>
      decisions.filter((d) => d.pipe === pipe && d.result === 'applied').map((d) => d.after.replicas);
    expect(changes('orders-events')).toEqual([3, 7]);
    expect(changes('clickstream')).toEqual([3, 7]);
    expect(states.filter((s) => s.lost)).toEqual([]);
  }, 45_000);
});
