// pause, resume and status through the built bin: they talk to Redis only (the config gives its
// url; PIPESCALER_REDIS_PREFIX keeps this test's keys apart), and a daemon sees the flags.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/daemon/index.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from './helpers.js';

const run = promisify(execFile);
const prefix = uniquePrefix('commands');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const store = new StateStore(redis, prefix);

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['dist/cli/main.js', ...args, '-c', 'config/pipescaler.yaml'], {
      env: { ...process.env, PIPESCALER_REDIS_PREFIX: prefix },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('pipescaler pause, resume, status', () => {
  it('sets and clears the flags the daemon reads, and status shows them', async () => {
    expect(existsSync('dist/cli/main.js'), 'build first: npx tsc -p .').toBe(true);
    const before = Date.now();
    const paused = await cli('pause', 'orders-events', '--for', '2h', '--reason', 'load test');
    expect(paused).toMatchObject({ code: 0, stderr: '' });
    expect(paused.stdout).toMatch(/^paused orders-events until .*: load test\n$/);
    const flag = await store.pause('orders-events');
    expect(flag).toMatchObject({ reason: 'load test', scope: 'pipe' });
    expect(flag!.until).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
    expect(await redis.pttl(store.keys.pause('orders-events'))).toBeGreaterThan(3_600_000);

    expect((await cli('pause', '--all', '--reason', 'freeze')).code).toBe(0);
    expect(await store.pause('clickstream')).toMatchObject({ reason: 'freeze', scope: 'all' });

    await store.write('orders-events', { kind: 'stream', state: 'Running', applied: { replicas: 2 } });
    const status = await cli('status', '--json');
    expect(status.code).toBe(0);
    const rows = JSON.parse(status.stdout) as { pipe: string; paused: unknown; applied: unknown }[];
    expect(rows.find((r) => r.pipe === 'orders-events')).toMatchObject({ applied: { replicas: 2 }, paused: { reason: 'load test' } });
    expect(rows.find((r) => r.pipe === 'clickstream')).toMatchObject({ paused: { reason: 'freeze', scope: 'all' } });
    const table = await cli('status');
    expect(table.stdout).toMatch(/^PIPE\s+KIND\/STATE\s+APPLIED/);
    expect(table.stdout).toMatch(/orders-events\s+stream\/Running\s+replicas=2/);

    expect((await cli('resume', '--all')).code).toBe(0);
    expect(await store.pause('orders-events')).toBeNull();
    expect(await store.pause('clickstream')).toBeNull();
  });

  it('says in one line what is wrong with the arguments', async () => {
    const unknown = await cli('pause', 'no-such-pipe');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: unknown pipe "no-such-pipe" \(pipes: orders-events, .*\)\n$/);
    const both = await cli('resume');
    expect(both).toMatchObject({ code: 1, stderr: 'error: give a pipe name or --all\n' });
    const badFor = await cli('pause', 'orders-events', '--for', 'soon');
    expect(badFor).toMatchObject({ code: 1, stderr: 'error: --for: "soon" is not a duration (e.g. 30m, 2h)\n' });
  });
});
