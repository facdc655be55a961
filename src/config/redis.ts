// Where the daemon's Redis is: one server (`redis://`, `rediss://`), a Sentinel group
// (`redis+sentinel://host:port,host:port/<master name>`, or `redis.sentinels` + `redis.name`) or a
// Redis Cluster (`redis+cluster://host:port,host:port`, or `redis.cluster`). Pure: parsing and the
// checks of the config; the connection itself is src/daemon/store/redis-connection.ts.
//
// A Redis Cluster needs every key that one script or command touches in one hash slot. BullMQ's
// scripts and the daemon's own (budget, state snapshot, decision compare-and-set, pause reads) touch
// several keys at once, all under `<prefix>:`, so the prefix must carry a hash tag: `{pipescaler}`.
import { z } from 'zod';
import { nonEmptyString } from './fields.js';
import { isRecord, type RawIssue } from './issue.js';
import type { Strict } from './metric.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export type RedisEndpoint =
  | { readonly mode: 'standalone'; readonly url: string }
  | {
      readonly mode: 'sentinel';
      readonly sentinels: readonly HostPort[];
      readonly name: string;
      readonly db: number;
      readonly username?: string;
      readonly password?: string;
    }
  | {
      readonly mode: 'cluster';
      readonly nodes: readonly HostPort[];
      readonly username?: string;
      readonly password?: string;
    };

export const SENTINEL_PORT = 26379;
export const REDIS_PORT = 6379;

export const REDIS_URL_FORMS =
  'redis://host:6379, rediss://host:6380, redis+sentinel://host:26379,host:26379/<master name> or redis+cluster://host:6379,host:6379';

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^\s:,/@[\]{}]+)(?::(\d{1,5}))?$/;

/** `host:port` (`[::1]:26379` for IPv6); the port defaults to `defaultPort`. */
export function parseHostPort(s: string, defaultPort: number): HostPort | null {
  const [, host, portText] = HOST_PORT.exec(s.trim()) ?? [];
  if (host === undefined) return null; // no match (the host group always takes part in one)
  const port = portText === undefined ? defaultPort : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return null;
  return { host: host.replace(/^\[(.*)\]$/, '$1'), port };
}

const formatHost = (h: HostPort): string => `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`;

/** `redis+sentinel://` and `redis+cluster://` URLs of a list form of the config (no credentials). */
export function sentinelUrl(sentinels: readonly HostPort[], name: string): string {
  return `redis+sentinel://${sentinels.map(formatHost).join(',')}/${encodeURIComponent(name)}`;
}

export function clusterUrl(nodes: readonly HostPort[]): string {
  return `redis+cluster://${nodes.map(formatHost).join(',')}`;
}

function credentials(userinfo: string | undefined): { username?: string; password?: string } | null {
  if (userinfo === undefined) return {};
  const colon = userinfo.indexOf(':');
  try {
    const user = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon));
    const password = colon < 0 ? '' : decodeURIComponent(userinfo.slice(colon + 1));
    return { ...(user !== '' ? { username: user } : {}), ...(password !== '' ? { password } : {}) };
  } catch {
    return null;
  }
}

const MULTI_HOST = /^(redis\+sentinel|redis\+cluster):\/\/(?:([^@/]*)@)?([^/?#]+)(?:\/([^?#]*))?$/;

/**
 * What a Redis URL points at, or why it is not one. Never repeats the URL (it may hold a password).
 * A password in the userinfo is the data nodes' password (`redis+sentinel://:pw@...`), as with `redis://`.
 */
export function parseRedisUrl(url: string): RedisEndpoint | { readonly error: string } {
  const multi = MULTI_HOST.exec(url);
  if (!multi) {
    if (!URL.canParse(url) || !/^rediss?:$/.test(new URL(url).protocol))
      return { error: `must be a Redis URL: ${REDIS_URL_FORMS}` };
    // ioredis would send SELECT NaN on connect and fail there, after validate said ok
    if (!/^\/?(\d{1,2})?$/.test(new URL(url).pathname))
      return { error: 'has a path other than /<db>: a database number, e.g. redis://host:6379/0' };
    return { mode: 'standalone', url };
  }
  const [, scheme, userinfo, hostList = '', path] = multi; // the host list always takes part in a match
  const sentinel = scheme === 'redis+sentinel';
  const hosts = hostList.split(',').map((h) => parseHostPort(h, sentinel ? SENTINEL_PORT : REDIS_PORT));
  if (hosts.some((h) => h === null))
    return {
      error: `has a host that is not host:port (${sentinel ? 'the sentinels' : 'the cluster nodes'}, comma-separated)`,
    };
  const creds = credentials(userinfo);
  if (creds === null) return { error: 'has a user or password that is not URL-encoded' };
  const nodes = hosts as HostPort[];
  if (!sentinel) {
    if (path !== undefined && path !== '')
      return { error: 'redis+cluster:// takes no path (a cluster has no databases but 0)' };
    return { mode: 'cluster', nodes, ...creds };
  }
  const [name, db, ...rest] = (path ?? '').split('/');
  if (name === undefined || name === '')
    return {
      error: 'needs the master group name the sentinels monitor: redis+sentinel://host:26379,host:26379/<master name>',
    };
  if (rest.length > 0 || (db !== undefined && db !== '' && !/^\d{1,2}$/.test(db)))
    return { error: 'has a path other than /<master name>[/<db>]' };
  let decoded: string;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    return { error: 'has a master name that is not URL-encoded' };
  }
  return { mode: 'sentinel', sentinels: nodes, name: decoded, db: db ? Number(db) : 0, ...creds };
}

/** The hash tag Redis Cluster hashes a key by: the text between the first `{` and the first `}`
 *  after it, when not empty; null when the whole key is hashed. */
export function hashTag(key: string): string | null {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  return close < 0 || close === open + 1 ? null : key.slice(open + 1, close);
}

/** Why `prefix` cannot serve a Redis Cluster, or null. */
export function clusterPrefixProblem(prefix: string): string | null {
  if (hashTag(prefix) !== null) return null;
  const bare = prefix.replace(/[{}]/g, '') || 'pipescaler';
  return (
    `Redis Cluster needs a hash-tagged prefix such as "{${bare}}": BullMQ's scripts and the daemon's own touch several keys at once, ` +
    'which must all hash to one slot; this prefix has no {tag}'
  );
}

const hostPortList = (defaultPort: number, what: string) =>
  z
    .array(z.unknown(), { error: `must be a list of ${what} (host:port)` })
    .min(1, { error: `must name at least one of the ${what}` })
    .transform((list, ctx): HostPort[] =>
      list.map((v, i) => {
        const hp = typeof v === 'string' ? parseHostPort(v, defaultPort) : null;
        if (hp === null)
          ctx.addIssue({ code: 'custom', path: [i], message: `must be host:port, e.g. 10.0.0.5:${defaultPort}` });
        return hp ?? { host: '', port: defaultPort };
      }),
    );

const redisUrl = z.unknown().transform((v, ctx): string => {
  // never echo the value: it may carry a password
  const parsed = typeof v === 'string' ? parseRedisUrl(v) : { error: `must be a Redis URL: ${REDIS_URL_FORMS}` };
  if ('error' in parsed) {
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  }
  return v as string;
});

const text = (what: string) => z.string({ error: `must be ${what}` });

/** `redis:` of the config. Passwords are resolved (environment or file) by secrets.ts. */
export function redisSchema(strict: Strict) {
  return strict({
    url: redisUrl.optional(),
    prefix: nonEmptyString.optional(),
    sentinels: hostPortList(SENTINEL_PORT, 'sentinels').optional(),
    name: nonEmptyString.optional(),
    cluster: hostPortList(REDIS_PORT, 'cluster nodes').optional(),
    username: nonEmptyString.optional(),
    password: text('a string from ${ENV_VAR}').optional(),
    passwordFile: nonEmptyString.optional(),
    sentinelPassword: text('a string from ${ENV_VAR}').optional(),
    sentinelPasswordFile: nonEmptyString.optional(),
  });
}

/** Checks across the fields of `redis:`: one way to name the servers, a master name with
 *  sentinels, and a hash-tagged prefix for a cluster (on the prefix's line). */
export function redisIssues(raw: unknown): RawIssue[] {
  const issues: RawIssue[] = [];
  if (!isRecord(raw) || !isRecord(raw.redis)) return issues;
  const r = raw.redis;
  const given = (['url', 'sentinels', 'cluster'] as const).filter((k) => r[k] !== undefined);
  for (const k of given.slice(1)) {
    issues.push({
      path: ['redis', k],
      atKey: true,
      message: `give one of redis.url, redis.sentinels, redis.cluster (${given.join(' and ')} are both given)`,
    });
  }
  const urlMode = typeof r.url === 'string' ? parseRedisUrl(r.url) : null;
  if (r.sentinels !== undefined && r.name === undefined) {
    issues.push({
      path: ['redis', 'sentinels'],
      atKey: true,
      message: 'needs redis.name: the master group name the sentinels monitor',
    });
  }
  if (r.name !== undefined && r.sentinels === undefined) {
    issues.push({
      path: ['redis', 'name'],
      atKey: true,
      message:
        'is the master group name of redis.sentinels: give the sentinels too (or use url: redis+sentinel://.../<name>)',
    });
  }
  if (r.sentinelPassword !== undefined || r.sentinelPasswordFile !== undefined) {
    const sentinelMode =
      r.sentinels !== undefined || (urlMode !== null && 'mode' in urlMode && urlMode.mode === 'sentinel');
    if (!sentinelMode) {
      const key = r.sentinelPassword !== undefined ? 'sentinelPassword' : 'sentinelPasswordFile';
      issues.push({
        path: ['redis', key],
        atKey: true,
        message: 'applies to sentinels only (redis.sentinels or a redis+sentinel:// url)',
      });
    }
  }
  const clusterMode = r.cluster !== undefined || (urlMode !== null && 'mode' in urlMode && urlMode.mode === 'cluster');
  const prefix = typeof r.prefix === 'string' ? r.prefix : 'pipescaler';
  const problem = clusterMode ? clusterPrefixProblem(prefix) : null;
  if (problem !== null) {
    issues.push(
      r.prefix === undefined
        ? {
            path: ['redis', r.cluster !== undefined ? 'cluster' : 'url'],
            atKey: true,
            message: `needs redis.prefix: ${problem} (the default "pipescaler" has none)`,
          }
        : { path: ['redis', 'prefix'], message: problem },
    );
  }
  return issues;
}
