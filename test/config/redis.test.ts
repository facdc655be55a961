// Where Redis is (src/config/redis.ts): one server, a Sentinel group or a Redis Cluster, as a
// URL or as lists in the config; passwords from the environment or a file only; a cluster's prefix
// must carry a hash tag, refused at load naming the field and its line.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { clusterPrefixProblem, hashTag, parseRedisUrl } from '../../src/config/redis.js';
import { parseConfig } from '../../src/config/load.js';
import { BASE } from './config-fixture.js';

const parse = (redis: string, env: Record<string, string> = {}, files: Record<string, string> = {}) =>
  parseConfig(`${BASE}redis:\n${redis}`, {
    file: 'conf/pipescaler.yaml',
    env,
    readFile: (p) => {
      if (files[p] === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return files[p];
    },
  });

function issues(redis: string, env: Record<string, string> = {}): { line: number; path: string; message: string }[] {
  try {
    parse(redis, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map(({ line, path, message }) => ({ line, path, message }));
  }
  throw new Error('the config loaded');
}

// BASE has 18 lines; `redis:` is line 19, its first member line 20.
describe('parseRedisUrl', () => {
  it('reads one server, a Sentinel group and a cluster', () => {
    expect(parseRedisUrl('redis://127.0.0.1:6379/2')).toEqual({ mode: 'standalone', url: 'redis://127.0.0.1:6379/2' });
    expect(parseRedisUrl('rediss://h:6380')).toMatchObject({ mode: 'standalone' });
    expect(parseRedisUrl('redis+sentinel://s1:26380,s2,[::1]:26381/my%20master/3')).toEqual({
      mode: 'sentinel',
      name: 'my master',
      db: 3,
      sentinels: [
        { host: 's1', port: 26380 },
        { host: 's2', port: 26379 },
        { host: '::1', port: 26381 },
      ],
    });
    expect(parseRedisUrl('redis+sentinel://app:p%40ss@s1:26379/main')).toMatchObject({
      username: 'app',
      password: 'p@ss',
      name: 'main',
      db: 0,
    });
    expect(parseRedisUrl('redis+cluster://:pw@n1:7000,n2')).toEqual({
      mode: 'cluster',
      password: 'pw',
      nodes: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 6379 },
      ],
    });
  });

  it('says what is wrong without repeating the URL (it may hold a password)', () => {
    const cases = [
      'http://x:6379',
      'redis+sentinel://:hunter22@s1:26379',
      'redis+sentinel://:hunter22@s1:99999/m',
      'redis+cluster://:hunter22@n1:7000/0',
      'redis+sentinel://:hunter22@s1/m/x/y',
      'redis+cluster://:hunter22@a b:1',
    ];
    for (const url of cases) {
      const r = parseRedisUrl(url);
      expect(r, url).toHaveProperty('error');
      expect((r as { error: string }).error).not.toContain('hunter22');
    }
    expect(parseRedisUrl('redis+sentinel://s1:26379')).toEqual({
      error: expect.stringContaining('needs the master group name'),
    });
  });

  it('refuses a database that is not a number (ioredis would SELECT NaN on connect and die)', () => {
    for (const url of ['redis://:hunter22@127.0.0.1:6379/abc', 'rediss://h:6380/0/1', 'redis://h/1x']) {
      expect(parseRedisUrl(url), url).toEqual({
        error: 'has a path other than /<db>: a database number, e.g. redis://host:6379/0',
      });
    }
    for (const url of ['redis://h:6379', 'redis://h:6379/', 'redis://h:6379/15'])
      expect(parseRedisUrl(url), url).toMatchObject({ mode: 'standalone' });
  });
});

describe('hash tags', () => {
  it('follow Redis Cluster: the text between the first { and the next }, when not empty', () => {
    expect(hashTag('{pipescaler}')).toBe('pipescaler');
    expect(hashTag('ps{prod}:x')).toBe('prod');
    expect(hashTag('{a}{b}')).toBe('a');
    expect(hashTag('pipescaler')).toBeNull();
    expect(hashTag('{}x{y}')).toBeNull();
    expect(hashTag('{open')).toBeNull();
    expect(hashTag('close}{')).toBeNull();
    expect(clusterPrefixProblem('{pipescaler}')).toBeNull();
    expect(clusterPrefixProblem('pipescaler')).toMatch(/hash-tagged prefix such as "\{pipescaler\}"/);
  });
});

describe('redis: in the config', () => {
  it('turns the list forms into one URL; credentials come apart, from the environment or a file', () => {
    const sentinel = parse(
      '  sentinels: [10.0.0.1:26379, "10.0.0.2"]\n  name: main\n  password: ${REDIS_PASSWORD}\n  sentinelPasswordFile: sentinel-pw\n',
      { REDIS_PASSWORD: 'from-env-1' },
      { 'conf/sentinel-pw': 'from-file-2\n' },
    );
    expect(sentinel.redis).toEqual({
      url: 'redis+sentinel://10.0.0.1:26379,10.0.0.2:26379/main',
      prefix: 'pipescaler',
      password: 'from-env-1',
      sentinelPassword: 'from-file-2',
    });
    const cluster = parse(
      '  cluster: [n1:7000, n2:7001, n3:7002]\n  prefix: "{pipescaler}"\n  username: app\n  passwordFile: /run/secrets/redis\n',
      {},
      { '/run/secrets/redis': 'from-file-3' },
    );
    expect(cluster.redis).toEqual({
      url: 'redis+cluster://n1:7000,n2:7001,n3:7002',
      prefix: '{pipescaler}',
      username: 'app',
      password: 'from-file-3',
    });
    expect(
      parse('  url: ${REDIS_URL}\n  prefix: "ps{prod}"\n', { REDIS_URL: 'redis+cluster://n1:7000' }).redis.prefix,
    ).toBe('ps{prod}');
    expect(parse('  url: redis+sentinel://s1:26379,s2:26379/main\n').redis.url).toBe(
      'redis+sentinel://s1:26379,s2:26379/main',
    );
  });

  it("refuses a cluster prefix without a hash tag on the prefix's line, or on the cluster's when the prefix is the default", () => {
    expect(issues('  cluster: [n1:7000]\n  prefix: pipescaler\n')).toEqual([
      {
        line: 21,
        path: 'redis.prefix',
        message: expect.stringMatching(/^Redis Cluster needs a hash-tagged prefix such as "\{pipescaler\}"/),
      },
    ]);
    expect(issues('  cluster: [n1:7000]\n')).toEqual([
      {
        line: 20,
        path: 'redis.cluster',
        message: expect.stringMatching(
          /^needs redis\.prefix: Redis Cluster needs a hash-tagged prefix .*the default "pipescaler" has none/,
        ),
      },
    ]);
    expect(issues('  url: ${REDIS_URL}\n  prefix: "{}ps"\n', { REDIS_URL: 'redis+cluster://n1:7000' })).toEqual([
      { line: 21, path: 'redis.prefix', message: expect.stringContaining('hash-tagged prefix') },
    ]);
  });

  it('names a database that is not a number on the url line, for validate', () => {
    expect(issues('  url: redis://:pw-never-shown@h:6379/abc\n')).toEqual([
      {
        line: 20,
        path: 'redis.url',
        message: 'has a path other than /<db>: a database number, e.g. redis://host:6379/0',
      },
    ]);
  });

  it('names every other mistake with its field and line, and never repeats a password', () => {
    expect(issues('  url: redis://h:6379\n  cluster: [n1:7000]\n  prefix: "{p}"\n')).toEqual([
      {
        line: 21,
        path: 'redis.cluster',
        message: 'give one of redis.url, redis.sentinels, redis.cluster (url and cluster are both given)',
      },
    ]);
    expect(issues('  sentinels: [s1:26379]\n')).toEqual([
      { line: 20, path: 'redis.sentinels', message: expect.stringContaining('needs redis.name') },
    ]);
    expect(issues('  name: main\n')).toEqual([
      { line: 20, path: 'redis.name', message: expect.stringContaining('give the sentinels too') },
    ]);
    expect(issues('  sentinels: [s1:26379, "s2:x"]\n  name: main\n')).toEqual([
      { line: 20, path: 'redis.sentinels[1]', message: 'must be host:port, e.g. 10.0.0.5:26379' },
    ]);
    expect(issues('  url: redis://h:6379\n  sentinelPassword: ${P}\n', { P: 'sentinel-secret-9' })).toEqual([
      { line: 21, path: 'redis.sentinelPassword', message: expect.stringContaining('applies to sentinels only') },
    ]);
    expect(issues('  url: redis+sentinel://h:26379/main\n  password: literal-pw-7\n')).toEqual([
      {
        line: 21,
        path: 'redis.password',
        message: expect.stringContaining(
          'a secret must not be written in the config file: use password: ${ENV_VAR} or passwordFile',
        ),
      },
    ]);
    expect(issues('  url: redis+sentinel://:literal-pw-8@h:26379/main\n')).toEqual([
      {
        line: 20,
        path: 'redis.url',
        message: expect.stringContaining('a password must not be written in the config file'),
      },
    ]);
    const bad = issues('  url: ${REDIS_URL}\n', { REDIS_URL: 'redis+sentinel://:env-pw-6@h:26379' });
    expect(bad).toEqual([
      { line: 20, path: 'redis.url', message: expect.stringContaining('needs the master group name') },
    ]);
    for (const i of bad) expect(i.message).not.toContain('env-pw-6');
  });
});
