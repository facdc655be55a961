// A refused command changes nothing: every argument is checked before the first write, so a
// `pause --for 99999999999h` that exits with an error leaves no pause in force (it used to store
// the pause and then fail on printing its end).
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/daemon/index.js';
import { loadConfig } from '../../src/config/index.js';
import { REDIS_URL, cleanupPrefix, runCli, uniquePrefix } from '../daemon/helpers.js';
import { runUntil } from './run-until.js';

const prefix = uniquePrefix('refused');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const store = new StateStore(redis, prefix);
/** clickstream of the shipped config: its pause is stored under its ids. */
const clickstream = loadConfig('config/pipescaler.yaml', process.env, 'redis').pipes.find(
  (p) => p.name === 'clickstream',
)!;
const env = { PIPESCALER_REDIS_PREFIX: prefix };

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

async function keys(): Promise<string[]> {
  return redis.keys(`${prefix}:*`);
}

describe('a refused command', () => {
  it.each([
    [['pause', 'clickstream', '--for', '99999999999h'], /^error: --for: "99999999999h" is longer than 366d/],
    [['pause', '--all', '--for', '99999999999h'], /^error: --for: "99999999999h" is longer than 366d/],
    [['pause', 'clickstream', '--for', 'soon'], /^error: --for: "soon" is not a duration/],
    [['pause', 'clickstream', '--reason', 'x\u001b[2Jy'], /^error: --reason: control characters are not allowed/],
    [['pause', 'clickstream', '--reason', 'r'.repeat(501)], /^error: --reason: 501 characters, at most 500/],
    [['pause', 'no-such-pipe'], /^error: unknown pipe "no-such-pipe"/],
  ])(
    '%j exits 1 and stores no pause',
    async (args, message) => {
      expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
      const r = await runCli(env, args);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
      expect(await store.operator.pause(clickstream)).toBeNull();
      expect(await keys()).toEqual([]);
    },
    60_000,
  );

  it('run with a bad --log-level or --log-format starts nothing and writes nothing', async () => {
    for (const args of [
      ['--log-level', 'loud'],
      ['--log-format', 'xml'],
    ]) {
      const run = await runUntil(args, env, /daemon started/, 20_000);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: --log-(level|format): "(loud|xml)" is not one of /);
    }
    expect(await keys()).toEqual([]);
  }, 60_000);

  it('a pause within the bounds is stored and says until when', async () => {
    const r = await runCli(env, ['pause', 'clickstream', '--for', '366d', '--reason', 'freeze']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^paused clickstream until \d{4}-\d\d-\d\dT.*Z: freeze\n$/);
    expect(await store.operator.pause(clickstream)).toMatchObject({ reason: 'freeze' });
  }, 60_000);
});
