// The production install, as the image and docs/deploy.md make it: `npm ci --omit=dev
// --omit=optional` of this package.json and lock file (offline, from npm's cache) beside a copy of
// dist/ and config/. It holds what the daemon and the CLI need against the platform and neither
// the embedded cloud's server (fastify, ajv) nor pino-pretty; the CLI works, and what needs the
// missing parts says so in one line: the cloud refuses with the command that adds it, a terminal's
// log stays JSON with a notice. The committed SBOM (config/sbom.cdx.json) is npm's for this
// install. Needs `npm run build` first.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve('.');
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-prod-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return spawnSync(cmd, args, { cwd: dir, encoding: 'utf8', timeout: 110_000, env });
}

let installed: string[] = [];

beforeAll(() => {
  expect(existsSync(join(ROOT, 'dist/cli/main.js')), 'build first: npm run build').toBe(true);
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(dir, f));
  // Copies, not symlinks: node resolves a symlinked dist/ from its real folder, whose
  // node_modules has everything.
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'config'), join(dir, 'config'), { recursive: true });
  const ci = run('npm', [
    'ci',
    '--omit=dev',
    '--omit=optional',
    '--offline',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
  ]);
  if (ci.status !== 0) throw new Error(`npm ci exited ${String(ci.status)}\n${ci.stderr}`);
  const ls = run('npm', ['ls', '--all', '--parseable']);
  installed = ls.stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((p) => p.slice(p.lastIndexOf('node_modules/') + 'node_modules/'.length));
}, 120_000);

describe('the production install', () => {
  it("holds the daemon's and the CLI's packages, not the embedded cloud's server nor pino-pretty", () => {
    expect(installed).toEqual(expect.arrayContaining(['bullmq', 'ioredis', 'undici', 'pino', 'commander', 'zod']));
    for (const left of ['fastify', 'ajv', 'light-my-request', 'pino-pretty', 'colorette']) {
      expect(installed).not.toContain(left);
    }
    // The count for the record: 90 packages while fastify and pino-pretty were dependencies.
    console.log(`production install: ${String(installed.length)} packages`);
    expect(installed.length).toBeLessThan(60);
  });

  it('validates a config against the platform', () => {
    const r = run(process.execPath, ['dist/cli/main.js', 'validate', 'config/pipescaler.yaml'], {
      ...process.env,
      PIPESCALER_API_URL: 'https://api.example.invalid',
      PIPESCALER_KEY_ID: 'key-id',
      PIPESCALER_KEY_SECRET: 'key-secret-value',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^ok/);
    expect(r.status).toBe(0);
  });

  it('refuses the embedded cloud in one line that says how to add it', () => {
    const r = run(process.execPath, ['dist/cli/main.js', 'cloud', '--port', '0']);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(
      'error: the embedded cloud needs its server, the optional dependency fastify, which this install left out ' +
        "(npm ci --omit=optional): run `npm install --include=optional`, or set api.baseUrl to the platform's URL",
    );
  });

  it('logs JSON lines at a terminal without pino-pretty, and says why once', () => {
    const code = `const { createLogger } = await import('./dist/telemetry/index.js');
const log = createLogger({ pretty: true });
log.info('first');
log.info('second');`;
    const r = run(process.execPath, ['--input-type=module', '-e', code]);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe(
      'pipescaler: pino-pretty (an optional dependency) is not installed, so the log stays JSON lines; ' +
        '`npm install --include=optional` adds it\n',
    );
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(['first', 'second']);
  });

  it('is what the committed SBOM lists (node .ci/generate-sbom.mjs after a change of the lock file)', () => {
    const r = run(process.execPath, [join(ROOT, '.ci/generate-sbom.mjs'), '--check', '--installed', dir]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
