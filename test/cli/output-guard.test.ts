// No credential in any output of any command: with a Prometheus password and API userinfo in the
// environment (as a CI job that runs validate, plan, simulate and diff on a pull request has
// them), and a key secret, nothing a command prints repeats them, whether it succeeds or fails.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../daemon/helpers.js';
import { runUntil } from './run-until.js';

const runFile = promisify(execFile);
const prefix = uniquePrefix('output-guard');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const MARKERS = ['prom-user', 'PROM-PW-h22a', 'api-user', 'API-PW-h22a', 'KEY-SECRET-h22a'];
const ORG = '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b';
// An API that answers every request 401 with the request's own authorization header in its text:
// a platform error text that quotes the credential back.
let api: Server;
let env: Record<string, string>;

beforeAll(async () => {
  api = createServer((req, res) => {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 401, error: `UNAUTHORIZED: bad ${req.headers.authorization ?? ''}` }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const { port } = api.address() as AddressInfo;
  env = {
    PROMETHEUS_URL: 'http://prom-user:PROM-PW-h22a@127.0.0.1:1',
    PIPESCALER_API_URL: `http://api-user:API-PW-h22a@127.0.0.1:${port}`,
    PIPESCALER_KEY_ID: 'key-id-h22a',
    PIPESCALER_KEY_SECRET: 'KEY-SECRET-h22a',
    PIPESCALER_REDIS_PREFIX: prefix,
  };
});

afterAll(async () => {
  await new Promise((resolve) => api.close(resolve));
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

async function cli(args: readonly string[]): Promise<string> {
  try {
    const { stdout, stderr } = await runFile(process.execPath, ['dist/cli/main.js', ...args], {
      env: { ...process.env, ...env },
    });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout: string; stderr: string };
    return e.stdout + e.stderr;
  }
}

const PERIOD = ['--from', '2026-11-23T00:00:00Z', '--to', '2026-11-23T06:00:00Z'];
const COMMANDS: readonly (readonly string[])[] = [
  ['validate'],
  ['validate', '-c', 'config/pipescaler.yaml'],
  ['plan', '--at', '2026-11-24T10:00:00Z'],
  ['plan', '--offline', '--json'],
  ['simulate', ...PERIOD],
  ['simulate', '--offline', '--json', ...PERIOD],
  ['diff', 'config/pipescaler.yaml', 'config/pipescaler.yaml', ...PERIOD],
  ['status'],
  ['status', '--json'],
  ['pause', 'clickstream', '--for', '99999999999h'],
  ['api', 'services', 'list', ORG],
  ['api', 'pipes', 'scale', ORG, ORG, ORG, '--replicas', '2'],
];

describe('secrets in the output of every command', () => {
  it.each(COMMANDS.map((c) => [c.join(' '), c] as const))(
    '%s prints none',
    async (_, args) => {
      expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
      const out = await cli(args);
      expect(out.length).toBeGreaterThan(0);
      for (const marker of MARKERS) expect(out, marker).not.toContain(marker);
    },
    60_000,
  );

  it('run: the start lines and the failures after them print none', async () => {
    const run = await runUntil([], env, /"msg":"(scaling failed|[^"]*read failed|daemon started)/);
    expect(run.matched, run.stdout + run.stderr).toBe(true);
    for (const marker of MARKERS) expect(run.stdout + run.stderr, marker).not.toContain(marker);
  }, 60_000);
});
