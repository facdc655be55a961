// Redis Cluster (src/daemon/store/redis-connection.ts): three masters of this test's own on free ports,
// made with `redis-cli --cluster create` (test/redis-topologies.ts). With a hash-tagged prefix the
// daemon runs end to end on it (BullMQ's scripts, the budget, the state snapshot, the decision
// compare-and-set, the tick's SET NX, pause --all / resume --all, a reload) and converges; every
// key lands on one master, and maxmemory-policy is checked on each. A prefix without a hash tag
// is refused before anything connects.
import type { Cluster } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { startRedisCluster, type RedisClusterServers } from '../redis-topologies.js';
import { FAST_WORKERS, collect, runCli, testConfig, uniquePrefix } from './helpers.js';
import { startTopologyRun, type TopologyRun } from './topology-run.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
let servers: RedisClusterServers | undefined;
let run: TopologyRun | undefined;

afterEach(async () => {
  await run?.stop();
  await servers?.stop();
  run = undefined;
  servers = undefined;
});

const cli = (env: Record<string, string>, ...args: string[]) => runCli(env, args);

/** Keys under the prefix on each master (SCAN runs per node). */
async function keysPerMaster(cluster: Cluster, prefix: string): Promise<number[]> {
  return Promise.all(
    cluster.nodes('master').map(async (node) => {
      let cursor = '0';
      let n = 0;
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        n += keys.length;
      } while (cursor !== '0');
      return n;
    }),
  );
}

describe('Redis Cluster', () => {
  it('the daemon and the CLI run end to end on three masters with a hash-tagged prefix, and converge', async () => {
    servers = await startRedisCluster();
    const prefix = `{${uniquePrefix('cluster')}}`;
    const env = { PIPESCALER_REDIS_URL: servers.url, PIPESCALER_REDIS_PREFIX: prefix };
    run = await startTopologyRun(servers.url, prefix, T0);
    const { config, daemon, replicas, tick } = run;
    const decisions = collect(run.emitter, 'decision');
    const states = collect(run.emitter, 'redis:state');
    await daemon.start();
    await tick(T0);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([3, 3]);

    expect(await cli(env, 'pause', 'clickstream', '--reason', 'incident 7')).toMatchObject({ code: 0, stderr: '' });
    await tick(T0 + 10 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([7, 3]);
    expect(await daemon.reload(config)).toBe(true);

    const status = await cli(env, 'status', '--json');
    expect(status.code, status.stderr).toBe(0);
    const rows = JSON.parse(status.stdout) as { pipe: string; paused: unknown; applied: unknown }[];
    expect(rows.find((r) => r.pipe === 'clickstream')).toMatchObject({
      paused: { reason: 'incident 7' },
      applied: { replicas: 3 },
    });
    expect(await cli(env, 'resume', '--all')).toMatchObject({ code: 0 });

    await tick(T0 + 11 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([7, 7]);
    await tick(T0 + 30 * MIN);
    expect([replicas('orders-events'), replicas('clickstream')]).toEqual([3, 3]);

    const changes = (pipe: string) =>
      decisions.filter((d) => d.pipe === pipe && d.result === 'applied').map((d) => d.after.replicas);
    expect(changes('orders-events')).toEqual([3, 7, 3]);
    expect(changes('clickstream')).toEqual([3, 7, 3]);
    expect(states.filter((s) => s.lost)).toEqual([]);
    // One hash slot: every key of the daemon, BullMQ's and its own, is on one of the three masters.
    const perMaster = await keysPerMaster(daemon.store.redis as Cluster, prefix);
    expect(perMaster).toHaveLength(3);
    expect(perMaster.filter((n) => n > 0)).toHaveLength(1);

    // maxmemory-policy is read on every master, not only the one that holds our slot today.
    const other = (daemon.store.redis as Cluster).nodes('master')[perMaster.indexOf(0)]!;
    await other.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const second = new DaemonEmitter();
    const secondStates = collect(second, 'redis:state');
    const checker = createDaemon({
      config,
      prefix,
      now: run.now,
      emitter: second,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await checker.start();
      await checker.tick(T0 + 31 * MIN);
      expect(secondStates.at(-1)).toEqual({ lost: true, cause: 'eviction_policy' });
    } finally {
      await checker.stop({ timeoutMs: 2_000 });
    }
  }, 60_000);

  it('a prefix without a hash tag is refused before anything connects, naming where it came from', async () => {
    const url = 'redis+cluster://127.0.0.1:1,127.0.0.1:2'; // nothing listens: the check comes first
    const base = testConfig({ baseUrl: 'http://127.0.0.1:1', prefix: 'pipescaler', pipes: [], policies: {} });
    expect(() =>
      createDaemon({ config: { ...base, redis: { ...base.redis, url } }, schedule: false, watch: false }),
    ).toThrow(/^redis\.prefix "pipescaler": Redis Cluster needs a hash-tagged prefix such as "\{pipescaler\}"/);
    const env = { PIPESCALER_REDIS_URL: url, PIPESCALER_REDIS_PREFIX: 'pstest-untagged' };
    const refused = await cli(env, 'status');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: PIPESCALER_REDIS_PREFIX: Redis Cluster needs a hash-tagged prefix such as "\{pstest-untagged\}"/,
    );
    expect(refused.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    const fromConfig = await cli({ PIPESCALER_REDIS_URL: url }, 'pause', 'clickstream');
    expect(fromConfig.stderr).toMatch(
      /^error: config\/pipescaler\.yaml: redis\.prefix: Redis Cluster needs a hash-tagged prefix/,
    );
    const badUrl = await cli({ PIPESCALER_REDIS_URL: 'redis+sentinel://:pw-not-shown@127.0.0.1:1' }, 'status');
    expect(badUrl).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error: PIPESCALER_REDIS_URL: needs the master group name/),
    });
    expect(badUrl.stderr).not.toContain('pw-not-shown');
  }, 30_000);
});
