// The systemd unit (config/systemd/pipescaler.service), checked by systemd's own tools (Debian's
// systemd package): `systemd-analyze verify` accepts it, and `systemd-analyze security --offline`
// rates its exposure OK. Then what docs/deploy.md counts on: a dynamic user with no new
// privileges, a read-only file system with nothing made writable (pipescaler writes no file),
// reload by SIGHUP, a stop timeout past the daemon's grace, and the key secret as a credential
// that the config names through $CREDENTIALS_DIRECTORY.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { stopTimeoutMs } from '../../src/daemon/runtime/shutdown.js';
import { requireTool } from '../require-tool.js';

const hasSystemdAnalyze = requireTool('systemd-analyze', 'systemd');

const UNIT = 'config/systemd/pipescaler.service';
const text = readFileSync(UNIT, 'utf8');

/** Each `Key=value` of the unit, in order (a key may repeat). */
const settings = text
  .split('\n')
  .filter((l) => /^[A-Za-z]+=/.test(l))
  .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const);
const values = (key: string) => settings.filter(([k]) => k === key).map(([, v]) => v);

function analyze(...args: string[]) {
  return spawnSync('systemd-analyze', args, { encoding: 'utf8', timeout: 30_000 });
}

describe.skipIf(!hasSystemdAnalyze)('the systemd unit', () => {
  it('passes systemd-analyze verify', () => {
    const r = analyze('verify', UNIT);
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('is rated OK by systemd-analyze security (exposure 2 or less of 10)', () => {
    const r = analyze('security', '--offline=true', '--no-pager', UNIT);
    expect(r.status).toBe(0);
    const m = /Overall exposure level for pipescaler\.service: ([\d.]+) (\w+)/.exec(r.stdout);
    expect(m, r.stdout.slice(-400)).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(2);
    expect(m![2]).toBe('OK');
  });

  it('runs as a dynamic user without new privileges on a read-only system, and writes nowhere', () => {
    for (const [key, value] of [
      ['DynamicUser', 'yes'],
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['CapabilityBoundingSet', ''],
    ] as const) {
      expect(values(key), key).toEqual([value]);
    }
    for (const key of ['ReadWritePaths', 'StateDirectory', 'LogsDirectory', 'CacheDirectory'])
      expect(values(key), key).toEqual([]);
    // V8's JIT writes code it then runs
    expect(values('MemoryDenyWriteExecute')).toEqual([]);
  });

  it('reloads on SIGHUP and gives the daemon its whole stop grace', () => {
    expect(values('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(values('ExecStart')[0]).toMatch(/\/dist\/cli\/main\.js run \/etc\/pipescaler\/pipescaler\.yaml$/);
    // in-flight requests get api.timeout (the shipped config's) and a second, then everything
    // closes and the process exits: the unit waits at least that long before SIGKILL
    const config = parseConfig(readFileSync('config/pipescaler.yaml', 'utf8'), {
      file: 'config/pipescaler.yaml',
      env: { PIPESCALER_KEY_ID: 'k', PIPESCALER_KEY_SECRET: 's' },
    });
    const stopSec = Number(/^(\d+)s$/.exec(values('TimeoutStopSec')[0]!)![1]);
    expect(stopSec * 1000).toBe(stopTimeoutMs(config));
    expect(stopTimeoutMs(config)).toBeGreaterThan(config.api.timeoutMs);
  });

  it('hands the key secret over as a credential the config reads through $CREDENTIALS_DIRECTORY', () => {
    expect(values('LoadCredential')).toEqual(['key-secret:/etc/pipescaler/key-secret']);
    const config = parseConfig(
      [
        'api:',
        '  baseUrl: ${PIPESCALER_API_URL}',
        '  keyId: ${PIPESCALER_KEY_ID}',
        '  keySecretFile: ${CREDENTIALS_DIRECTORY}/key-secret',
        'redis:',
        '  url: ${PIPESCALER_REDIS_URL}',
      ].join('\n'),
      {
        file: '/etc/pipescaler/pipescaler.yaml',
        env: {
          CREDENTIALS_DIRECTORY: '/run/credentials/pipescaler.service',
          PIPESCALER_API_URL: 'https://api.example.com',
          PIPESCALER_KEY_ID: 'the-key-id',
          PIPESCALER_REDIS_URL: 'redis://127.0.0.1:6379',
        },
        readFile: (path) => {
          expect(path).toBe('/run/credentials/pipescaler.service/key-secret');
          return 'the-key-secret\n';
        },
      },
    );
    expect(config.api.keys.default).toMatchObject({ keyId: 'the-key-id', keySecret: 'the-key-secret' });
  });
});
