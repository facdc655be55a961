// loadEffectiveConfig(): the file with the environment's overrides, the one place the daemon (at
// start and at reload) and the CLI take them from (src/config/effective.ts).
import { describe, expect, it } from 'vitest';
import { isConfigError, loadEffectiveConfig, loadConfig } from '../../src/config/index.js';

const FILE = 'config/pipescaler.yaml';
const LIVE = { PIPESCALER_KEY_ID: 'kid', PIPESCALER_KEY_SECRET: 'env-secret-not-shown' };

function failure(env: Record<string, string>) {
  try {
    loadEffectiveConfig(FILE, { ...LIVE, ...env });
  } catch (err) {
    if (isConfigError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('loaded');
}

describe('the effective config', () => {
  it('is the file as loaded when no override is set', () => {
    expect(loadEffectiveConfig(FILE, LIVE)).toEqual(loadConfig(FILE, LIVE));
  });

  it('takes redis.url, redis.prefix and telemetry.listen from the environment', () => {
    const config = loadEffectiveConfig(FILE, {
      ...LIVE,
      PIPESCALER_REDIS_URL: 'redis://:pw@redis.internal:6380/2',
      PIPESCALER_REDIS_PREFIX: 'second',
      PIPESCALER_TELEMETRY_LISTEN: '0.0.0.0:9464',
    });
    expect(config.redis).toMatchObject({ url: 'redis://:pw@redis.internal:6380/2', prefix: 'second' });
    expect(config.telemetry.listen).toBe('0.0.0.0:9464');
  });

  it('reads an old variable name as the current one', () => {
    expect(loadEffectiveConfig(FILE, { ...LIVE, REDIS_URL: 'redis://old:6379' }).redis.url).toBe('redis://old:6379');
  });

  it('keeps the file value for an empty listen address', () => {
    const file = loadConfig(FILE, LIVE).telemetry.listen;
    expect(loadEffectiveConfig(FILE, { ...LIVE, PIPESCALER_TELEMETRY_LISTEN: '' }).telemetry.listen).toBe(file);
  });

  it('names the variable of a wrong override, never its password', () => {
    const badUrl = failure({ PIPESCALER_REDIS_URL: 'redis+sentinel://:pw-not-shown@127.0.0.1:1' });
    expect(badUrl.code).toBe('CONFIG_ENV_INVALID');
    expect(badUrl.message).toMatch(/^PIPESCALER_REDIS_URL: needs the master group name/);
    expect(badUrl.message).not.toContain('pw-not-shown');
    const cluster = 'redis+cluster://127.0.0.1:7000';
    expect(failure({ PIPESCALER_REDIS_URL: cluster, PIPESCALER_REDIS_PREFIX: 'untagged' })).toEqual({
      code: 'CONFIG_ENV_INVALID',
      message: expect.stringMatching(/^PIPESCALER_REDIS_PREFIX: Redis Cluster needs a hash-tagged prefix/),
    });
    // The file's prefix, made wrong by the environment's cluster URL: the file's setting is named.
    expect(failure({ PIPESCALER_REDIS_URL: cluster })).toEqual({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(/^config\/pipescaler\.yaml: redis\.prefix: Redis Cluster needs/),
    });
    expect(
      loadEffectiveConfig(FILE, { ...LIVE, PIPESCALER_REDIS_URL: cluster, PIPESCALER_REDIS_PREFIX: '{ps}' }).redis
        .prefix,
    ).toBe('{ps}');
  });
});
