// The daemon's Redis connections: one server, a Sentinel group or a Redis Cluster (the URL says
// which, src/config/redis.ts). Workers need maxRetriesPerRequest: null (BullMQ blocks on
// them); the retry strategies keep reconnecting forever with a capped backoff, so a Redis restart
// or a failover is an outage of readiness, never a crash.
//
// - Sentinel: ioredis asks the sentinels for the master, and again after every disconnect; the
//   failover detector subscribes to the sentinels' +switch-master so a promotion is followed at
//   once. A write answered READONLY (a demoted master still connected) reconnects and is resent.
// - Cluster: ioredis follows MOVED/ASK and refreshes the slots; every key of ours and BullMQ's is
//   under one hash-tagged prefix, so each script and MULTI lands on one node.
import { connect } from 'node:net';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import {
  clusterPrefixProblem,
  parseRedisUrl,
  type HostPort,
  type RedisEndpoint,
  type RedisSettings,
} from '../../config/index.js';

export const RECONNECT_CAP_MS = 2_000;

/** A connection of either kind: every command the daemon sends works on both. */
export type RedisClient = Redis | Cluster;

/** Where to connect: the config's redis settings without the prefix, or a bare URL. */
export type RedisTarget = string | Omit<RedisSettings, 'prefix'>;

/** cause: a connection that failed for a reason of the settings rather than an outage (redisProblem). */
export type RedisStatusListener = (ready: boolean, cause?: string) => void;

/**
 * What a connection error says about the settings, or null for an ordinary outage. A `rediss://`
 * URL against a server without TLS fails each attempt with a reset during the handshake, which
 * would otherwise read as a Redis that is down.
 */
export function redisProblem(err: Error): string | null {
  if (/TLS|SSL|EPROTO|wrong version number|certificate/i.test(err.message)) {
    return `TLS handshake failed (${err.message}): a rediss:// URL needs a server with TLS; use redis:// for one without`;
  }
  if (/NOAUTH|WRONGPASS|invalid password|invalid username/i.test(err.message)) {
    return `authentication refused (${err.message.split('\n')[0] ?? ''}): check the Redis username and password`;
  }
  return null;
}

const REDIS_PORT = 6379;

const backoff = (times: number) => Math.min(50 * 2 ** Math.min(times, 10), RECONNECT_CAP_MS);

/** A write sent to a replica (a master demoted by a failover while we were connected to it):
 *  reconnect, which asks the sentinels again, and resend the command. */
const reconnectOnReadonly = (err: Error): 2 | false => (err.message.startsWith('READONLY') ? 2 : false);

function settingsOf(target: RedisTarget): Omit<RedisSettings, 'prefix'> {
  return typeof target === 'string' ? { url: target } : target;
}

/** The endpoint of a target, its credentials merged; throws a clear error for a bad URL. */
export function endpointOf(target: RedisTarget): RedisEndpoint {
  const s = settingsOf(target);
  const parsed = parseRedisUrl(s.url);
  if ('error' in parsed) throw new Error(`the Redis URL ${parsed.error}`);
  if (parsed.mode === 'standalone') return parsed;
  return {
    ...parsed,
    ...(s.username !== undefined ? { username: s.username } : {}),
    ...(s.password !== undefined ? { password: s.password } : {}),
  };
}

const hosts = (list: readonly HostPort[]) => list.map((h) => ({ host: h.host, port: h.port }));

/** Where a target points, for messages and logs: never a password. */
export function describeRedis(target: RedisTarget): string {
  let e: RedisEndpoint;
  try {
    e = endpointOf(target);
  } catch {
    return 'an invalid Redis URL';
  }
  const list = (l: readonly HostPort[]) => l.map((h) => `${h.host}:${h.port}`).join(',');
  if (e.mode === 'sentinel') return `master "${e.name}" of sentinels ${list(e.sentinels)} db ${e.db}`;
  // a cluster has one database only
  if (e.mode === 'cluster') return `cluster ${list(e.nodes)}`;
  if (!URL.canParse(e.url)) return 'an invalid Redis URL';
  const url = new URL(e.url);
  return `${url.hostname}:${url.port || REDIS_PORT} db ${url.pathname.replace(/^\//, '') || '0'}`;
}

/** Why this prefix cannot work with this target (a cluster without a hash-tagged prefix), or null. */
export function prefixProblem(target: RedisTarget, prefix: string): string | null {
  return endpointOf(target).mode === 'cluster' ? clusterPrefixProblem(prefix) : null;
}

/** Options of one connection: for every mode, for Sentinel only, for a Cluster only. */
interface ModeOptions {
  readonly all: RedisOptions;
  readonly sentinel: RedisOptions;
  readonly cluster: Partial<ClusterOptions>;
}

function create(target: RedisTarget, { all: options, sentinel, cluster }: ModeOptions): RedisClient {
  const s = settingsOf(target);
  const e = endpointOf(target);
  if (e.mode === 'cluster') {
    return new Cluster(hosts(e.nodes), {
      ...cluster,
      redisOptions: {
        ...options,
        ...(e.username !== undefined ? { username: e.username } : {}),
        ...(e.password !== undefined ? { password: e.password } : {}),
      },
    });
  }
  if (e.mode === 'sentinel') {
    return new Redis({
      ...options,
      ...sentinel,
      sentinels: hosts(e.sentinels),
      name: e.name,
      db: e.db,
      ...(e.username !== undefined ? { username: e.username } : {}),
      ...(e.password !== undefined ? { password: e.password } : {}),
      ...(s.sentinelPassword !== undefined ? { sentinelPassword: s.sentinelPassword } : {}),
    });
  }
  return new Redis(e.url, {
    ...options,
    ...(s.username !== undefined ? { username: s.username } : {}),
    ...(s.password !== undefined ? { password: s.password } : {}),
  });
}

/** A connection for the daemon: commands wait through an outage instead of failing. */
export function connectRedis(
  target: RedisTarget,
  onStatus?: RedisStatusListener,
  extra: RedisOptions = {},
): RedisClient {
  const redis = create(target, {
    all: { maxRetriesPerRequest: null, enableReadyCheck: true, retryStrategy: backoff, lazyConnect: false, ...extra },
    // Follow a promotion at once (+switch-master), and a write answered READONLY by a demoted
    // master reconnects and is resent. Sentinel only: on one server it would retry a misconfigured
    // replica forever.
    sentinel: { sentinelRetryStrategy: backoff, failoverDetector: true, reconnectOnError: reconnectOnReadonly },
    cluster: { clusterRetryStrategy: backoff, enableReadyCheck: true, retryDelayOnFailover: 200, maxRedirections: 32 },
  });
  if (onStatus) watchStatus(redis, onStatus);
  // ioredis emits 'error' on every failed reconnect; without a listener Node would throw it.
  redis.on('error', () => {});
  diagnoseTls(redis, endpointOf(target));
  return redis;
}

/**
 * A `rediss://` URL against a server without TLS: the server waits for a line that never comes,
 * so each attempt ends in a connect timeout that reads like an outage. After the first failed
 * attempt a PING in clear text asks once; a Redis that answers it gets said as the cause.
 */
function diagnoseTls(redis: RedisClient, e: RedisEndpoint): void {
  if (e.mode !== 'standalone' || !e.url.startsWith('rediss:')) return;
  const { hostname, port, host } = new URL(e.url);
  let asked = false;
  redis.on('error', () => {
    if (asked || redis.status === 'ready') return;
    asked = true;
    void answersWithoutTls(hostname.replace(/^\[(.*)\]$/, '$1'), Number(port || REDIS_PORT)).then((plain) => {
      if (plain) redis.emit('error', new Error(`${host} answers without TLS`));
    });
  });
}

/** Whether a Redis without TLS answers at host:port: a PING in clear text gets +PONG or -NOAUTH. */
export function answersWithoutTls(host: string, port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(/^[+-]/.test(data.toString('latin1'))));
  });
}

/** Report each change of readiness of a connection (ours or one the caller passed in). */
export function watchStatus(redis: RedisClient, onStatus: RedisStatusListener): () => void {
  let last: boolean | null = redis.status === 'ready' ? true : null;
  let cause: string | null = null;
  const report = (ready: boolean) => {
    if (ready !== last) {
      last = ready;
      if (ready || cause === null) onStatus(ready);
      else onStatus(ready, cause);
    }
  };
  const up = () => {
    cause = null;
    report(true);
  };
  const down = () => report(false);
  const failed = (err: Error) => {
    // a problem of the settings stays the cause until a connection is made; said once more if new
    const problem = redisProblem(err);
    if (problem === null || problem === cause) return;
    cause = problem;
    if (last === false) onStatus(false, cause);
  };
  redis.on('ready', up);
  redis.on('close', down);
  redis.on('end', down);
  redis.on('error', failed);
  return () => {
    redis.off('ready', up);
    redis.off('close', down);
    redis.off('end', down);
    redis.off('error', failed);
  };
}

/** A connection for a one-shot CLI command: fail fast when Redis is not there. */
export function connectRedisOnce(target: RedisTarget): RedisClient {
  const redis = create(target, {
    all: { maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 3_000 },
    sentinel: { sentinelRetryStrategy: () => null },
    cluster: { clusterRetryStrategy: () => null },
  });
  redis.on('error', () => {});
  return redis;
}

/** An error that means Redis could not be reached (rather than a command's own failure). */
export function isUnreachable(err: unknown): boolean {
  return (
    err instanceof Error &&
    /ECONNREFUSED|ENOTFOUND|ETIMEDOUT|Connection is closed|max retries|None of startup nodes|All sentinels are unreachable|Failed to refresh slots/i.test(
      err.message,
    )
  );
}

/** The keys that start with `literal` (SCAN, so only where nothing keeps an index of them); on a
 *  cluster from every master (a hash-tagged prefix puts ours on one, which may move). */
export async function keysStartingWith(redis: RedisClient, literal: string): Promise<string[]> {
  const match = `${literal.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
  const out: string[] = [];
  for (const server of isCluster(redis) ? redis.nodes('master') : [redis]) {
    let cursor = '0';
    do {
      const [next, found] = await server.scan(cursor, 'MATCH', match, 'COUNT', 1_000);
      cursor = next;
      out.push(...found);
    } while (cursor !== '0');
  }
  return out;
}

/** Whether a connection is a Redis Cluster (its server commands go to each master). */
export function isCluster(redis: RedisClient): redis is Cluster {
  return (redis as Partial<Cluster>).isCluster === true;
}
