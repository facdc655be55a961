// plan, simulate and diff tell the story the daemon tells. With a daemon running on the embedded
// default, plan and simulate read the cloud it scales (its heartbeat names it), so an override it
// applied is "send nothing"; without one they read the fixtures; each says in one line what it
// read. A pipe of an idle service (archive-events) is skipped with service_not_running by the
// daemon, plan, simulate and diff alike. The built daemon and CLI on the shipped config, a Redis
// prefix of this file's, telemetry on a free port; waits on the daemon's state, never on sleeps.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL, cleanupPrefix, runCli, uniquePrefix } from '../daemon/helpers.js';

const SLOW = 150_000;
const prefix = uniquePrefix('running-cloud');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const env = { PIPESCALER_REDIS_PREFIX: prefix, PIPESCALER_TELEMETRY_LISTEN: '127.0.0.1:0' };
const cli = (...args: string[]) => runCli(env, args);
const SKIP = 'service_not_running: service is idle';

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/** The built bin with exactly these arguments (diff takes its configs as arguments, not -c). */
async function bin(args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['dist/cli/main.js', ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout };
  } catch (err) {
    return err as { code: number; stdout: string };
  }
}

interface StatusRow {
  pipe: string;
  applied: Record<string, number> | null;
  reason: string | null;
}

async function statusRow(pipe: string): Promise<StatusRow | undefined> {
  const r = await cli('status', '--json');
  if (r.stdout === '') return undefined;
  return (JSON.parse(r.stdout) as StatusRow[]).find((row) => row.pipe === pipe);
}

/** archive-events as plan, simulate and diff tell it: skipped, its service idle. */
async function expectArchiveSkipped(read: RegExp): Promise<void> {
  const plan = await cli('plan', '--pipe', 'archive-events');
  expect(plan.stdout.split('\n')[1]).toMatch(read);
  expect(plan.stdout).toMatch(/^ {2}send +nothing: skipped$/m);
  expect(plan.stdout).toContain(`why      ${SKIP}`);
  const sim = await cli(
    'simulate',
    '--pipe',
    'archive-events',
    '--from',
    '2026-11-24T00:00:00Z',
    '--to',
    '2026-11-25T00:00:00Z',
  );
  expect(sim.stdout.split('\n')[1]).toMatch(read);
  expect(sim.stdout).toContain(`archive-events: 0 changes (${SKIP}`);
  const diff = await bin([
    'diff',
    'config/pipescaler.yaml',
    'config/pipescaler.yaml',
    '--pipe',
    'archive-events',
    '--from',
    '2026-11-24T00:00:00Z',
    '--to',
    '2026-11-25T00:00:00Z',
  ]);
  expect(diff.stdout.split('\n')[1]).toBe(
    'read: fixtures config/cloud.yaml (diff starts both configs from them, whatever a running daemon changed since)',
  );
  expect(diff.stdout).toContain(`archive-events: same (skipped: ${SKIP}`);
}

describe('plan, simulate and diff against a running demo daemon', () => {
  it(
    'read the cloud the daemon scales, say what they read, and tell archive-events as the daemon does',
    async () => {
      // no daemon: the fixtures, and the line says so
      await expectArchiveSkipped(/^read: fixtures config\/cloud\.yaml \(no daemon running on this Redis prefix\)$/);
      const before = await cli('plan', '--pipe', 'orders-events');
      expect(before.stdout).toMatch(/^ {2}pipe +stream, Running, replicas 2,/m);

      const daemon = spawn(process.execPath, ['dist/cli/main.js', 'run', '-c', 'config/pipescaler.yaml'], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      daemon.stdout.on('data', (b: Buffer) => (log += b.toString()));
      const exited = once(daemon, 'exit');
      try {
        await expect.poll(() => log.includes('"msg":"embedded cloud started"'), { timeout: 30_000 }).toBe(true);
        const url = /"url":"(http:\/\/127\.0\.0\.1:\d+)","fixtures"/.exec(log)?.[1];
        expect(url).toBeDefined();

        const set = await cli('override', 'orders-events', '--set', 'replicas=8', '--for', '1h', '--reason', 'test');
        expect(set.code).toBe(0);
        // the daemon applies it at its next tick (every 30 s) and says so in status
        await expect
          .poll(async () => (await statusRow('orders-events'))?.applied?.replicas, { timeout: 70_000, interval: 1_000 })
          .toBe(8);
        const plan = await cli('plan', '--pipe', 'orders-events');
        expect(plan.code).toBe(0);
        expect(plan.stdout.split('\n')[1]).toBe(`read: the embedded cloud at ${url} (the running daemon's)`);
        expect(plan.stdout).toMatch(/^ {2}pipe +stream, Running, replicas 8,/m);
        expect(plan.stdout).toMatch(/^ {2}send +nothing$/m);

        // the daemon's own story of archive-events, once it has listed the services
        await expect
          .poll(async () => (await statusRow('archive-events'))?.reason, { timeout: 70_000, interval: 1_000 })
          .toBe('service_not_running');
        expect(log).toMatch(/"pipe":"archive-events".*"result":"skipped","reason":"service_not_running"/);
        await expectArchiveSkipped(new RegExp(`^read: the embedded cloud at ${url} \\(the running daemon's\\)$`));
      } finally {
        daemon.kill('SIGTERM');
        await exited;
      }
    },
    SLOW,
  );
});
