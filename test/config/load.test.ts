// The loader's happy paths: the shipped example, defaults, interpolation, secrets and key files.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConfigError } from '../../src/config/errors.js';
import { parseDuration } from '../../src/policy/durations.js';
import { interpolate } from '../../src/config/interpolate.js';
import { isDemoKey, loadConfig, parseConfig } from '../../src/config/load.js';
import { BASE, breakBase } from './config-fixture.js';

const parse = (text: string, env: Record<string, string> = {}, files: Record<string, string> = {}) =>
  parseConfig(text, {
    file: 'conf/pipescaler.yaml',
    env,
    readFile: (p) => {
      if (files[p] === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
      return files[p];
    },
  });

describe('evaluate.actuation', () => {
  it('absent: not in the config (the plan counts on ACTUATION_DEFAULTS); given: its defaults filled', () => {
    expect(parse(BASE).evaluate.actuation).toBeUndefined();
    expect(parse(`${BASE}evaluate:\n  actuation:\n    expected: 3m\n`).evaluate.actuation).toEqual({
      expectedMs: 180_000,
      maxMs: 600_000,
      minSamples: 20,
    });
    expect(
      parse(`${BASE}evaluate:\n  actuation:\n    expected: 0s\n    max: 30m\n    minSamples: 5\n`).evaluate.actuation,
    ).toEqual({ expectedMs: 0, maxMs: 1_800_000, minSamples: 5 });
    // measured: false (count on expected alone) is kept; true is the default and left out
    expect(parse(`${BASE}evaluate:\n  actuation:\n    measured: false\n`).evaluate.actuation).toMatchObject({
      measured: false,
    });
    expect(parse(`${BASE}evaluate:\n  actuation:\n    measured: true\n`).evaluate.actuation).not.toHaveProperty(
      'measured',
    );
    // firstRead: kept when given (absent: the daemon's 15 s)
    expect(parse(`${BASE}evaluate:\n  actuation:\n    firstRead: 1500ms\n`).evaluate.actuation).toMatchObject({
      firstReadMs: 1_500,
    });
    expect(parse(`${BASE}evaluate:\n  actuation:\n    expected: 3m\n`).evaluate.actuation).not.toHaveProperty(
      'firstReadMs',
    );
  });
});

describe('the shipped config/pipescaler.yaml', () => {
  const config = loadConfig('config/pipescaler.yaml', {});

  it('runs embedded with the demo key, and the documented defaults', () => {
    expect(config.api.baseUrl).toBe('embedded');
    expect(config.api.fixtures).toBe(join('config', 'cloud.yaml'));
    expect(isDemoKey(config.api.keys.default!)).toBe(true);
    expect(config.api.keys.default!.rateLimit).toEqual({ requests: 10, perMs: 10_000 });
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', prefix: 'pipescaler' });
    expect(config.evaluate).toEqual({ cron: '*/30 * * * * *', reconcileMs: 600_000, concurrency: 10, readShare: 0.25 });
    expect(config.dryRun).toBe(false);
  });

  it('takes the platform URL and key from the environment; unset key variables mean the demo key only when embedded', () => {
    const env = {
      PIPESCALER_API_URL: 'https://api.example.com',
      PIPESCALER_KEY_ID: 'kid',
      PIPESCALER_KEY_SECRET: 's3cr3t-marker',
    };
    const live = loadConfig('config/pipescaler.yaml', env);
    expect(live.api.baseUrl).toBe('https://api.example.com');
    expect(live.api.keys.default).toMatchObject({ keyId: 'kid', keySecret: 's3cr3t-marker' });
    let error: ConfigError | undefined;
    try {
      loadConfig('config/pipescaler.yaml', { PIPESCALER_API_URL: 'https://api.example.com' });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error?.issues).toEqual([
      expect.objectContaining({
        path: 'api',
        message: expect.stringMatching(
          /^baseUrl is not embedded and the key's environment variables PIPESCALER_KEY_ID, PIPESCALER_KEY_SECRET are not set/,
        ),
      }),
    ]);
  });

  it('has every demo pipe and four policies', () => {
    expect(config.pipes.map((p) => p.name)).toEqual([
      'orders-events',
      'payments-msk',
      'clickstream',
      'nightly-s3',
      'audit-stream',
      'backfill-gcs',
      'users-cdc',
      'legacy-events',
      'archive-events',
      'orders-lag',
    ]);
    expect(Object.keys(config.policies).sort()).toEqual([
      'clickstream-launch',
      'nightly-s3',
      'orders-by-lag',
      'weekday-business-hours',
    ]);
    expect(config.pipes.find((p) => p.name === 'payments-msk')!.bounds).toEqual({ replicas: { min: 2, max: 4 } });
  });

  it('normalizes windows: set to values, bounds to min/max, holidays merged, offsets to instants', () => {
    const weekday = config.policies['weekday-business-hours']!;
    expect(weekday.windows[0]).toEqual({
      kind: 'recurring',
      name: 'business-hours',
      priority: 0,
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      start: { hour: 8, minute: 0 },
      end: { hour: 20, minute: 0 },
      timezone: 'Europe/Berlin',
      exclude: [
        '2026-12-24',
        '2026-12-25',
        '2026-12-31',
        '2027-01-01',
        '2027-03-26',
        '2027-03-29',
        '2027-05-01',
        '2027-05-06',
        '2027-05-17',
        '2027-10-03',
        '2027-12-25',
        '2027-12-26',
      ],
      target: { replicas: { value: 6 }, replicaCpuMillicores: { value: 1000 }, replicaMemoryGb: { value: 4 } },
    });
    expect(weekday.behavior).toEqual({
      scaleUp: { maxStep: { replicas: 2 }, cooldownMs: 60_000, leadTime: 'auto' },
      scaleDown: { maxStep: { replicas: 2 }, cooldownMs: 300_000, stabilizationMs: 600_000 },
    });
    const click = config.policies['clickstream-launch']!;
    expect(click.windows[0]!.target).toEqual({ replicas: { min: 4, max: 6 } });
    expect(click.windows[1]).toMatchObject({
      kind: 'oneOff',
      priority: 10,
      from: Date.parse('2026-11-27T05:00:00Z'),
      to: Date.parse('2026-11-30T05:00:00Z'),
    });
    expect(config.policies['nightly-s3']!.windows[0]).toMatchObject({ durationMs: 4 * 3_600_000, timezone: 'UTC' });
  });

  it('reports a missing file as CONFIG_UNREADABLE', () => {
    expect(() => loadConfig('config/nope.yaml')).toThrow(expect.objectContaining({ code: 'CONFIG_UNREADABLE' }));
  });
});

describe('interpolation', () => {
  it('expands ${VAR} and ${VAR:-default}, types unquoted results, and keeps $${ literal', () => {
    expect(interpolate('a ${X} b', { X: '1' })).toEqual({ ok: true, value: 'a 1 b', interpolated: true });
    expect(interpolate('${X:-dflt}', {})).toMatchObject({ value: 'dflt' });
    expect(interpolate('${X:-dflt}', { X: '' })).toMatchObject({ value: 'dflt' });
    expect(interpolate('$${X}', { X: '1' })).toEqual({ ok: true, value: '${X}', interpolated: false });
    expect(interpolate('${X', {})).toMatchObject({ ok: false });
    expect(interpolate('${A} ${B}', {})).toMatchObject({
      ok: false,
      message: expect.stringContaining('${A}, ${B} not set'),
    });

    const c = parse(
      breakBase(
        'baseline: { replicas: 2 }',
        'baseline:\n      replicas: ${N}',
        `${BASE}redis:\n  prefix: "$\${literal}"\n`,
      ),
      { N: '4' },
    );
    expect(c.policies.weekday!.baseline).toEqual({ replicas: { value: 4 } });
    expect(c.redis.prefix).toBe('${literal}');
  });

  it('takes the Redis URL (with its password) from the environment', () => {
    const c = parse(`${BASE}redis:\n  url: \${REDIS_URL}\n`, { REDIS_URL: 'redis://:pw-from-env@db:6379/2' });
    expect(c.redis.url).toBe('redis://:pw-from-env@db:6379/2');
  });
});

describe('API keys and secrets', () => {
  const withUrl = (extra: string) => breakBase('baseUrl: embedded', `baseUrl: https://api.example.com/\n${extra}`);

  it('resolves the default key from the environment and more keys from files next to the config', () => {
    const text = withUrl(
      '  keyId: ${KEY_ID}\n  keySecret: ${KEY_SECRET}\n  rateLimit: { requests: 5, per: 10s }\n' +
        '  keys:\n    other-org: { keyId: other, keySecretFile: secrets/other, rateLimit: { requests: 3, per: 1m } }\n    third: { keyId: t, keySecretFile: /abs/t }',
    );
    const c = parse(
      text,
      { KEY_ID: 'id-1', KEY_SECRET: 'secret-1' },
      { 'conf/secrets/other': 'secret-2\n', '/abs/t': 'secret-3' },
    );
    expect(c.api.baseUrl).toBe('https://api.example.com');
    expect(c.api.keys).toEqual({
      default: { keyId: 'id-1', keySecret: 'secret-1', rateLimit: { requests: 5, perMs: 10_000 } },
      'other-org': { keyId: 'other', keySecret: 'secret-2', rateLimit: { requests: 3, perMs: 60_000 } },
      third: { keyId: 't', keySecret: 'secret-3', rateLimit: { requests: 5, perMs: 10_000 } },
    });
    expect(isDemoKey(c.api.keys.default!)).toBe(false);
  });

  it('never puts a secret from the environment or a file into an error', () => {
    const text =
      withUrl('  keyId: ${KEY_ID}\n  keySecret: ${KEY_SECRET}\n  timeout: forever\n') +
      'redis:\n  url: ${REDIS_URL}\n  prefix: env-secret-1\n';
    try {
      parse(text, { KEY_ID: 'id', KEY_SECRET: 'env-secret-1', REDIS_URL: 'redis://:pw-secret-2@h:6379' });
      expect.unreachable();
    } catch (err) {
      const e = err as ConfigError;
      expect(e.issues.map((i) => i.path)).toEqual(['api.timeout']);
      expect(e.message).not.toContain('env-secret-1');
      expect(e.message).not.toContain('pw-secret-2');
    }
  });

  it('an empty secret from the environment is an error', () => {
    expect(() => parse(withUrl('  keyId: k\n  keySecret: ${S}'), { S: '' })).toThrow(/api\.keySecret: is empty/);
  });

  it('keyId without a secret, and both keySecret and keySecretFile, are errors', () => {
    expect(() => parse(withUrl('  keyId: k'))).toThrow(/api\.keyId: needs keySecret/);
    expect(() =>
      parse(withUrl('  keyId: k\n  keySecret: ${S}\n  keySecretFile: f'), { S: 'x' }, { 'conf/f': 'y' }),
    ).toThrow(/api\.keySecretFile: give keySecret or keySecretFile, not both/);
  });
});

describe('messages', () => {
  it('read file:line:col path: message', () => {
    try {
      parseConfig(breakBase('Europe/Berlin', 'Europe/Berln'), { file: 'config/pipescaler.yaml', env: {} });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toBe(
        'config/pipescaler.yaml:17:19 policies.weekday.windows[0].timezone: unknown time zone "Europe/Berln"; did you mean "Europe/Berlin"?',
      );
    }
  });
});

describe('YAML', () => {
  it('merge keys let policies share a block', () => {
    const c = parse(
      `${BASE}  weekend:\n    <<: *shared\n    windows: []\n`.replace('  weekday:\n', '  weekday: &shared\n'),
    );
    expect(c.policies.weekend!.baseline).toEqual({ replicas: { value: 2 } });
    expect(c.policies.weekend!.windows).toEqual([]);
  });

  it('a syntax error does not quote a long token (it may be a secret)', () => {
    expect(() => parse('api:\n  keySecret: hunter2secret: x\n')).toThrow(
      /^conf\/pipescaler.yaml:2:14 YAML syntax: Nested mappings/,
    );
    try {
      parse('api:\n  keyId: k\n  keySecret: hunter2secret\n    more: x\n');
    } catch (err) {
      expect((err as Error).message).not.toContain('hunter2secret');
    }
  });
});

describe('durations', () => {
  it.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['2h', 7_200_000],
    ['500ms', 500],
    ['1d', 86_400_000],
    ['0', 0],
    ['1.5h', 5_400_000],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));
  it.each(['10', '5 m', 'm5', '', '-1s', '1x'])('%j is not a duration', (text) =>
    expect(parseDuration(text)).toBeNull(),
  );
});

describe('loadConfig', () => {
  it('defaults the fixtures to config/cloud.yaml from the working folder; a written path is relative to the config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-config-'));
    writeFileSync(join(dir, 'a.yaml'), BASE);
    expect(loadConfig(join(dir, 'a.yaml'), {}).api.fixtures).toBe('config/cloud.yaml');
    writeFileSync(join(dir, 'b.yaml'), breakBase('baseUrl: embedded', 'baseUrl: embedded\n  fixtures: f.yaml'));
    expect(loadConfig(join(dir, 'b.yaml'), {}).api.fixtures).toBe(join(dir, 'f.yaml'));
  });

  it('reads keySecretFile relative to the config file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-config-'));
    writeFileSync(join(dir, 'key'), 'from-file\n');
    writeFileSync(
      join(dir, 'p.yaml'),
      breakBase('baseUrl: embedded', 'baseUrl: embedded\n  keyId: k\n  keySecretFile: key'),
    );
    expect(loadConfig(join(dir, 'p.yaml'), {}).api.keys.default).toMatchObject({ keyId: 'k', keySecret: 'from-file' });
  });
});
