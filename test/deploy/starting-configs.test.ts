// One starting config per way of running pipescaler, each valid as shipped with the variables its
// way sets: the demo, compose (the demo config with the compose service's environment), Kubernetes,
// systemd and a real account from a shell. A deployment's secret file exists only where it runs
// (the Secret's mount, systemd's credentials directory): `validate --offline` says so in a note
// and exits 0; without --offline it is an error naming the file. The built CLI (npm run build).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as {
  services: { pipescaler: { environment: Record<string, string> } };
};
const platform = { PIPESCALER_API_URL: 'https://api.example.com', PIPESCALER_KEY_ID: 'key-id' };

const WAYS: { way: string; file: string; env: Record<string, string>; secretFile?: string }[] = [
  { way: 'demo', file: 'config/pipescaler.yaml', env: {} },
  { way: 'compose', file: 'config/pipescaler.yaml', env: compose.services.pipescaler.environment },
  {
    way: 'kubernetes',
    file: 'config/kubernetes/pipescaler.yaml',
    env: { ...platform, PIPESCALER_REDIS_URL: 'redis://redis:6379' },
    secretFile: '/etc/pipescaler-secrets/key-secret',
  },
  {
    way: 'systemd',
    file: 'config/systemd/pipescaler.yaml',
    // what /etc/pipescaler/environment and the unit's LoadCredential= give the service
    env: { ...platform, PIPESCALER_REDIS_URL: 'redis://127.0.0.1:6379', CREDENTIALS_DIRECTORY: '/run/credentials/x' },
    secretFile: '/key-secret',
  },
  { way: 'real account', file: 'config/platform/pipescaler.yaml', env: { ...platform, PIPESCALER_KEY_SECRET: 's' } },
];

function validate(args: string[], env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(PIPESCALER_|CREDENTIALS_)/.test(k)));
  const r = spawnSync(process.execPath, ['dist/cli/main.js', 'validate', ...args], {
    env: { ...clean, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the starting configs', () => {
  for (const { way, file, env, secretFile } of WAYS) {
    it(`${way}: ${file} validates offline with the variables its way sets`, () => {
      const r = validate(['--offline', file], env);
      expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(new RegExp(`^ok: ${file.replace(/\./g, '\\.')}: `));
      if (secretFile === undefined) {
        expect(r.stdout).not.toContain('note: secret file');
        return;
      }
      expect(r.stdout).toMatch(
        new RegExp(`^note: secret file \\S*${secretFile} not present here \\(ENOENT\\): not checked$`, 'm'),
      );
      // checked in place: without --offline the absent file is an error naming its line
      const strict = validate([file], env);
      expect(strict.code).toBe(1);
      expect(strict.stderr).toMatch(/:\d+:\d+ api\.keySecretFile: cannot read "?\S*key-secret"? \(ENOENT\)/);
    });
  }

  it('--offline still refuses what is wrong besides the secret files', () => {
    const r = validate(['--offline', 'config/kubernetes/pipescaler.yaml'], { PIPESCALER_KEY_ID: 'key-id' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PIPESCALER_API_URL');
  });

  it('the systemd unit runs the systemd config where docs/deploy.md installs it', () => {
    expect(readFileSync('config/systemd/pipescaler.service', 'utf8')).toContain(
      'ExecStart=/usr/bin/node /opt/pipescaler/dist/cli/main.js run /etc/pipescaler/pipescaler.yaml',
    );
    expect(readFileSync('docs/deploy.md', 'utf8')).toContain(
      'install -m 0644 config/systemd/pipescaler.yaml /etc/pipescaler/pipescaler.yaml',
    );
  });
});
