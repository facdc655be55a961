// Redis Sentinel and Redis Cluster deployments of a test's own, on free local ports (never the
// shared Redis): a master, a replica and three sentinels; or a three-master cluster made with
// `redis-cli --cluster create`. Every process is stopped by its own pid and every temp dir removed
// by stop(), which is safe to call after a failed start (it stops what did start).
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort, kill, serverArgs, spawnRedis, writeConf } from './redis-servers.js';

const run = promisify(execFile);

/** Poll until `check` holds (bounded): setup waits on the servers' own reports, not on sleeps. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One short-lived connection per question: setup must not keep clients of its own around. */
async function ask<T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  r.on('error', () => {});
  try {
    await r.connect();
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

interface Proc {
  readonly port: number;
  child: ChildProcess | null;
}

/** A temp dir and the servers started in it: stop() kills each by its own pid and removes the dir. */
function deployment(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `pstest-${name}-`));
  const procs: Proc[] = [];
  return {
    dir,
    start: async (bin: 'redis-server' | 'redis-sentinel', args: readonly string[], port: number): Promise<void> => {
      const proc: Proc = { port, child: null };
      procs.push(proc);
      proc.child = await spawnRedis(bin, args, port);
    },
    kill: async (port: number): Promise<void> => {
      const proc = procs.find((p) => p.port === port);
      if (!proc) throw new Error(`no server of this deployment on port ${port}`);
      await kill(proc.child);
    },
    stop: async (): Promise<void> => {
      await Promise.all(procs.map((p) => kill(p.child)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SentinelGroup {
  readonly name: string;
  /** Ports of the two data nodes: the first starts as master. */
  readonly nodes: readonly number[];
  readonly sentinels: readonly number[];
  /** `redis+sentinel://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c/<name>` */
  readonly url: string;
  /** The master's port as the sentinels report it. */
  masterPort(): Promise<number>;
  /** `SENTINEL FAILOVER` and wait until every sentinel names the other node and it is master. */
  failover(): Promise<number>;
  /** SIGKILL the master (no persistence: its data is gone); resolves once it is dead, with the
   *  promotion of the replica still to come (`promoted`: the new master's port). */
  killMaster(): Promise<{ promoted: Promise<number> }>;
  /** Wait until the master's writes are on the replica (replication offsets equal). */
  synced(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSentinelGroup(name = 'pstest'): Promise<SentinelGroup> {
  const servers = deployment('sentinel');
  const { dir, stop } = servers;
  const startNode = (port: number, extra: string[]) =>
    servers.start('redis-server', serverArgs(port, dir, ['--dbfilename', `dump-${port}.rdb`, ...extra]), port);
  try {
    const [a, b] = [await freePort(), await freePort()];
    await startNode(a, []);
    await startNode(b, ['--replicaof', '127.0.0.1', String(a)]);
    const sentinels = [await freePort(), await freePort(), await freePort()];
    for (const port of sentinels) {
      const conf = writeConf(dir, `sentinel-${port}.conf`, [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${a} 2`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 2000`,
        `sentinel parallel-syncs ${name} 1`,
      ]);
      await servers.start('redis-sentinel', [conf], port);
    }
    // Ready for a failover: the replica is in sync and every sentinel knows it and the two others.
    await until(
      async () => ask(a, async (r) => (await r.info('replication')).includes('state=online')),
      'the replica to sync',
    );
    for (const port of sentinels) {
      await until(
        () =>
          ask(port, async (r) => {
            const master = (await r.call('SENTINEL', 'MASTER', name)) as string[];
            const others = Number(master[master.indexOf('num-other-sentinels') + 1]);
            const replicas = (await r.call('SENTINEL', 'REPLICAS', name)) as string[][];
            return (
              others === 2 && replicas.length === 1 && /^slave$/.test(replicas[0]![replicas[0]!.indexOf('flags') + 1]!)
            );
          }),
        `sentinel ${port} to see the replica and the other sentinels`,
      );
    }
    const masterPort = async () =>
      ask(sentinels[0]!, async (r) =>
        Number(((await r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[])[1]),
      );
    const promoted = async (from: number) => {
      const to = from === a ? b : a;
      for (const port of sentinels) {
        await until(
          () =>
            ask(
              port,
              async (r) => Number(((await r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[])[1]) === to,
            ),
          `sentinel ${port} to name ${to} master`,
        );
      }
      await until(
        () => ask(to, async (r) => infoField(await r.info('replication'), 'role') === 'master'),
        `${to} to be master`,
      );
      return to;
    };
    return {
      name,
      nodes: [a, b],
      sentinels,
      url: `redis+sentinel://${sentinels.map((p) => `127.0.0.1:${p}`).join(',')}/${name}`,
      masterPort,
      async failover() {
        const from = await masterPort();
        await ask(sentinels[0]!, (r) => r.call('SENTINEL', 'FAILOVER', name));
        return promoted(from);
      },
      async killMaster() {
        const from = await masterPort();
        await servers.kill(from);
        const to = promoted(from);
        to.catch(() => {}); // awaited by the caller; not unhandled meanwhile
        return { promoted: to };
      },
      async synced() {
        const master = await masterPort();
        await until(
          () =>
            ask(master, async (r) => {
              const info = await r.info('replication');
              const offset = infoField(info, 'master_repl_offset');
              return info.includes('state=online') && new RegExp(`offset=${offset},`).test(info);
            }),
          'the replica to catch up',
        );
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export interface RedisClusterServers {
  readonly ports: readonly number[];
  /** `redis+cluster://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c` */
  readonly url: string;
  stop(): Promise<void>;
}

/** Three masters, no replicas, slots split by `redis-cli --cluster create`. */
export async function startRedisCluster(): Promise<RedisClusterServers> {
  const servers = deployment('cluster');
  const { dir, stop } = servers;
  try {
    const ports = [await freePort(), await freePort(), await freePort()];
    for (const port of ports) {
      // the bus port is chosen too: port + 10000 may be taken or past 65535
      const bus = await freePort();
      await servers.start(
        'redis-server',
        serverArgs(port, dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-port',
          String(bus),
          '--cluster-node-timeout',
          '2000',
        ]),
        port,
      );
    }
    await run(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: 20_000 },
    );
    for (const port of ports) {
      await until(
        () =>
          ask(
            port,
            async (r) =>
              infoField(await r.cluster('INFO'), 'cluster_state') === 'ok' &&
              infoField(await r.cluster('INFO'), 'cluster_known_nodes') === '3',
          ),
        `cluster node ${port} to be ok`,
      );
    }
    return { ports, url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
