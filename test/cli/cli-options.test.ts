// The CLI speaks one way: every command that reads a config takes it as its argument or with
// -c/--config, diff takes --pipe, run takes --dry-run, --log-level and --log-format, and status
// exits 3 (saying how to start one) when no daemon is alive.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, cleanupPrefix, uniquePrefix, type CliResult } from '../daemon/helpers.js';
import { runUntil } from './run-until.js';

const runFile = promisify(execFile);
const prefix = uniquePrefix('cli-options');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const env = { PIPESCALER_REDIS_PREFIX: prefix };
// status reads a prefix no daemon of this file ran on (a stopped one's heartbeat lives 30 s)
const quiet = uniquePrefix('cli-options-quiet');
const CONFIG = 'config/pipescaler.yaml';
const PERIOD = ['--from', '2026-11-23T00:00:00Z', '--to', '2026-11-24T00:00:00Z'];

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  await cleanupPrefix(redis, quiet);
  redis.disconnect();
});

async function cli(...args: string[]): Promise<CliResult> {
  return cliWith(env, ...args);
}

async function cliWith(extra: Record<string, string>, ...args: string[]): Promise<CliResult> {
  expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
  try {
    const { stdout, stderr } = await runFile(process.execPath, ['dist/cli/main.js', ...args], {
      env: { ...process.env, ...extra },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as CliResult;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('-c/--config', () => {
  it('is taken by validate, plan and simulate, as the argument is', async () => {
    for (const args of [
      ['validate'],
      ['plan', '--offline', '--at', '2026-11-23T09:00:00Z'],
      ['simulate', '--offline', ...PERIOD],
    ]) {
      const [byArg, byOption, byLong] = await Promise.all([
        cli(...args, CONFIG),
        cli(...args, '-c', CONFIG),
        cli(...args, '--config', CONFIG),
      ]);
      expect(byArg.code, byArg.stderr).toBe(0);
      expect(byOption).toEqual(byArg);
      expect(byLong).toEqual(byArg);
    }
  }, 60_000);

  it('both given and different is an error naming both (recommend too)', async () => {
    const r = await cli('validate', CONFIG, '-c', 'other.yaml');
    expect(r).toMatchObject({ code: 1, stdout: '' });
    expect(r.stderr).toBe(`error: two config files given (${CONFIG} and -c other.yaml): give one\n`);
    const recommend = await cli('recommend', CONFIG, '-c', 'other.yaml', '--metrics', 'm.json', ...PERIOD);
    expect(recommend).toMatchObject({ code: 1, stderr: r.stderr });
  }, 30_000);
});

describe('diff --pipe', () => {
  it('narrows the diff to the named pipes, and refuses a name in neither config', async () => {
    const all = await cli('diff', CONFIG, CONFIG, ...PERIOD, '--offline', '--json');
    const one = await cli('diff', CONFIG, CONFIG, ...PERIOD, '--offline', '--json', '--pipe', 'clickstream');
    expect(all.code, all.stderr).toBe(0);
    expect(one.code, one.stderr).toBe(0);
    const pipes = (out: string) => (JSON.parse(out) as { pipes: { pipe: string }[] }).pipes.map((p) => p.pipe);
    expect(pipes(all.stdout).length).toBeGreaterThan(1);
    expect(pipes(one.stdout)).toEqual(['clickstream']);
    const bad = await cli('diff', CONFIG, CONFIG, ...PERIOD, '--offline', '--pipe', 'clickstrem');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: --pipe: no pipe named "clickstrem" in the config.*clickstream/);
  }, 60_000);
});

describe('run', () => {
  it('takes -c, --dry-run and --log-format json', async () => {
    const run = await runUntil(['-c', CONFIG, '--dry-run', '--log-format', 'json'], env, /"msg":"daemon started"/);
    expect(run.matched, run.stderr).toBe(true);
    const started = run.stdout
      .split('\n')
      .filter((l) => l.includes('"daemon started"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)[0];
    expect(started).toMatchObject({ dryRun: true, pipes: 10 });
  }, 60_000);

  it('takes --log-format pretty (lines for a person, not JSON)', async () => {
    const run = await runUntil([CONFIG, '--log-format', 'pretty'], env, /daemon started/);
    expect(run.matched, run.stderr).toBe(true);
    expect(run.stdout).not.toMatch(/^\{/m);
    expect(run.stdout).toMatch(/INFO.*daemon started/);
  }, 60_000);

  it('takes --log-level: debug lines appear, which the config (info) leaves out', async () => {
    const run = await runUntil(['--log-level', 'debug', '--log-format', 'json'], env, /"level":20/, 45_000);
    expect(run.matched, run.stdout).toBe(true);
  }, 60_000);
});

describe('status without a daemon', () => {
  it('exits 3 and says how to start one', async () => {
    const text = await cliWith({ PIPESCALER_REDIS_PREFIX: quiet }, 'status', '-c', CONFIG);
    expect(text.code).toBe(3);
    expect(text.stdout.split('\n').slice(0, 2)).toEqual([
      'no daemon alive (no heartbeat in the last 30 s): nothing is scaling these pipes',
      '  start one: pipescaler run -c <config> (the demo on the embedded cloud: npm start)',
    ]);
    const json = await cliWith({ PIPESCALER_REDIS_PREFIX: quiet }, 'status', '--json');
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout)).toHaveLength(10);
    expect(json.stderr).toContain('start one: pipescaler run');
  }, 30_000);
});
