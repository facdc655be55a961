// One environment name per setting; the names of earlier versions still work, with a line that
// says what to set instead (src/config/env-names.ts).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { deprecatedEnvLines, loadConfig, withCurrentNames } from '../../src/config/index.js';

const LIVE = { PIPESCALER_KEY_ID: 'kid', PIPESCALER_KEY_SECRET: 'env-secret-not-shown' };

describe('environment names', () => {
  it('fills a current name from its old name only when the current one is unset', () => {
    expect(withCurrentNames({ REDIS_URL: 'redis://old:6379' })).toMatchObject({
      PIPESCALER_REDIS_URL: 'redis://old:6379',
    });
    expect(
      withCurrentNames({ REDIS_URL: 'redis://old:6379', PIPESCALER_REDIS_URL: 'redis://new:6379' })
        .PIPESCALER_REDIS_URL,
    ).toBe('redis://new:6379');
    const env = { OTHER: '1' };
    expect(withCurrentNames(env)).toBe(env);
  });

  it('says what to set instead, never the value', () => {
    const lines = deprecatedEnvLines({
      PIPESCALER_BASE_URL: 'https://api.example.com',
      REDIS_URL: 'redis://:pw-not-shown@h:6379',
      PIPESCALER_REDIS_URL: 'redis://h:6379',
    });
    expect(lines).toEqual([
      'warning: PIPESCALER_BASE_URL is deprecated: set PIPESCALER_API_URL instead (read from PIPESCALER_BASE_URL for now)',
      'warning: REDIS_URL is deprecated and ignored: PIPESCALER_REDIS_URL is set',
    ]);
    expect(lines.join('\n')).not.toContain('pw-not-shown');
  });

  it("the shipped config reads the platform URL under either name (Redis is the CLI's override: test/daemon/redis-cluster.test.ts)", () => {
    expect(
      loadConfig('config/pipescaler.yaml', { ...LIVE, PIPESCALER_API_URL: 'https://api.example.com' }).api.baseUrl,
    ).toBe('https://api.example.com');
    expect(
      loadConfig('config/pipescaler.yaml', { ...LIVE, PIPESCALER_BASE_URL: 'https://old.example.com' }).api.baseUrl,
    ).toBe('https://old.example.com');
  });

  it('the CLI prints the deprecation line once on stderr and goes on', () => {
    const r = spawnSync(process.execPath, ['dist/cli/main.js', 'validate', 'config/pipescaler.yaml'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH, ...LIVE, PIPESCALER_BASE_URL: 'https://old.example.com' },
    });
    expect(r.status).toBe(0);
    expect(r.stderr.match(/PIPESCALER_BASE_URL is deprecated/g)).toHaveLength(1);
    expect(r.stdout).toMatch(/^ok: /);
  });
});
