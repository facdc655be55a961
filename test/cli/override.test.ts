// `pipescaler override`, `resume --orphaned` and what `status` shows, through the built bin against
// the real Redis (PIPESCALER_REDIS_PREFIX keeps this file's keys apart). A refused command writes
// nothing; state of a pipe that left the config is listed by status and lifted by resume --orphaned.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { refOf, StateStore } from '../../src/daemon/index.js';
import { REDIS_URL, cleanupPrefix, runCli, uniquePrefix, type CliResult } from '../daemon/helpers.js';

const SLOW = 120_000;
const prefix = uniquePrefix('override-cli');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const store = new StateStore(redis, prefix);
const shipped = loadConfig('config/pipescaler.yaml', process.env, 'redis');
const pipe = (name: string) => shipped.pipes.find((p) => p.name === name)!;

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/** The built bin with exactly these arguments (simulate takes its config as an argument, not -c). */
async function bin(args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['dist/cli/main.js', ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as CliResult;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const cli = (...args: string[]): Promise<CliResult> => runCli({ PIPESCALER_REDIS_PREFIX: prefix }, args);

describe('pipescaler override', () => {
  it(
    'sets, supersedes, lists and cancels; status shows the one in force',
    async () => {
      const set = await cli(
        'override',
        'orders-events',
        '--set',
        'replicas=8',
        '--for',
        '2h',
        '--reason',
        'incident 4711',
      );
      expect(set).toMatchObject({ code: 0, stderr: '' });
      expect(set.stdout).toMatch(/^override orders-events: replicas 8 until \S+Z: incident 4711\n/);
      const first = await store.operator.override(pipe('orders-events'));
      expect(first).toMatchObject({
        values: { replicas: 8 },
        reason: 'incident 4711',
        source: 'operator',
        mode: 'set',
      });
      expect(first!.until - first!.setAt).toBe(2 * 3_600_000);

      const next = await cli(
        'override',
        'orders-events',
        '--set',
        'replicas=10',
        '--set',
        'replicaCpuMillicores=1000',
        '--until',
        new Date(Date.now() + 3_600_000).toISOString(),
        '--step',
        'replicas=2',
        '--every',
        '5m',
      );
      expect(next.code).toBe(0);
      expect(next.stdout).toMatch(/ {2}supersedes replicas 8 until \S+: incident 4711\n/);
      expect((await store.operator.override(pipe('orders-events')))?.ramp).toMatchObject({
        step: { replicas: 2 },
        everyMs: 300_000,
      });

      expect((await cli('override', '--list')).stdout).toMatch(
        /^orders-events: replicas 10, cpu 1000m until \S+ \(operator\): override by operator\n$/,
      );
      expect((await cli('status')).stdout).toMatch(/^orders-events\s.*\soverride 10x1000m \(\d+/m);
      expect((await cli('status', '--wide')).stdout).toMatch(
        /^ {4}status: override replicas=10 replicaCpuMillicores=1000 until \S+Z, ramp replicas=2 every 5m: override by operator$/m,
      );
      const json = JSON.parse((await cli('status', '--json')).stdout) as { pipe: string; override: unknown }[];
      expect(json.find((r) => r.pipe === 'orders-events')?.override).toMatchObject({ values: { replicas: 10 } });

      expect((await cli('override', 'orders-events', '--cancel')).stdout).toMatch(
        /^cancelled the override of orders-events \(replicas 10, cpu 1000m: override by operator\)/,
      );
      expect((await cli('override', 'orders-events', '--cancel')).stdout).toBe(
        'orders-events has no override in force: nothing to cancel\n',
      );
      expect((await cli('override', '--list')).stdout).toBe('no overrides in force\n');
    },
    SLOW,
  );

  it(
    'refuses a wrong argument with one line naming it, and writes nothing',
    async () => {
      const refused: [string[], string][] = [
        [['--set', 'replica=8', '--for', '1h'], '--set: unknown field "replica"; did you mean "replicas"?'],
        [['--set', 'replicas=0', '--for', '1h'], '--set: replicas'],
        [['--set', 'replicas=8'], 'give how long it lasts'],
        [['--set', 'replicas=8', '--for', '1h', '--until', '2030-01-01T00:00:00Z'], 'give how long it lasts'],
        [
          ['--set', 'replicas=8', '--until', '2020-01-01T00:00:00Z'],
          '--until: 2020-01-01T00:00:00.000Z is not in the future',
        ],
        [['--set', 'replicas=8', '--for', '60d'], 'an override lasts at most 30d'],
        [['--set', 'replicas=8', '--for', '1h', '--step', 'replicas=2'], '--step: needs --every'],
        [['--set', 'concurrency=4', '--for', '1h'], 'a stream pipe takes'],
        // the limit of pause's reason, one definition for both (it took 100,000 characters)
        [
          ['--set', 'replicas=8', '--for', '1h', '--reason', 'r'.repeat(100_000)],
          '--reason: 100000 characters, at most 500',
        ],
        [
          ['--set', 'replicas=8', '--for', '1h', '--reason', 'x\u001b[2Jy'],
          '--reason: control characters are not allowed',
        ],
        [['--set', 'replicas=8', '--for', '1h', '--reason', ' '], '--reason: give a reason'],
      ];
      for (const [args, message] of refused) {
        const r = await cli('override', 'orders-events', ...args);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr, args.join(' ')).toContain(message);
        expect(r.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
      }
      expect((await cli('override', 'no-such-pipe', '--set', 'replicas=8', '--for', '1h')).stderr).toMatch(
        /^error: unknown pipe "no-such-pipe"/,
      );
      expect(await store.operator.override(pipe('orders-events'))).toBeNull();
    },
    SLOW,
  );

  it(
    'status lists the pause and override of a pipe the config no longer has; resume --orphaned lifts them',
    async () => {
      expect((await cli('pause', 'clickstream', '--reason', 'incident 9')).code).toBe(0);
      expect((await cli('override', 'clickstream', '--set', 'replicas=4', '--for', '1h')).code).toBe(0);
      const dir = mkdtempSync(join(tmpdir(), 'pipescaler-orphans-'));
      try {
        // the same config with clickstream given other ids (as if it were replaced): its state is orphaned
        const file = join(dir, 'pipescaler.yaml');
        const text = readFileSync('config/pipescaler.yaml', 'utf8').replaceAll(
          pipe('clickstream').pipeId,
          'b1000000-0000-4000-8000-0000000000ff',
        );
        cpSync('config/holidays', join(dir, 'holidays'), { recursive: true });
        writeFileSync(file, text);
        const other = (...args: string[]) => runCli({ PIPESCALER_REDIS_PREFIX: prefix }, args, file);
        const status = await other('status');
        expect(status.code).toBe(3); // no daemon alive: status says so with its own exit code
        expect(status.stdout).toContain(
          `orphaned: ${refOf(pipe('clickstream'))} (was clickstream): paused: incident 9; override replicas 4 until `,
        );
        expect(status.stdout).toMatch(/^clickstream\s.*\sok$/m);
        expect((await other('resume', '--orphaned')).stdout).toMatch(
          new RegExp(`^lifted ${refOf(pipe('clickstream'))} \\(was clickstream\\)`),
        );
        expect((await other('status')).stdout).not.toContain('orphaned');
        expect((await other('resume', '--orphaned')).stdout).toBe(
          'nothing orphaned: every pause and override belongs to a pipe of the config\n',
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      expect(await store.operator.pause(pipe('clickstream'))).toBeNull();
    },
    SLOW,
  );

  it(
    'plan shows the stored overrides with their end and reason, a what-if on top supersedes one, and without Redis it says so in one line',
    async () => {
      expect(
        (await cli('override', 'orders-events', '--set', 'replicas=8', '--for', '2h', '--reason', 'incident 4711'))
          .code,
      ).toBe(0);
      // a change made by hand kept by onDrift: adoptAsFloor, as the daemon stores it
      const now = Date.now();
      await store.operator.setOverride(
        pipe('clickstream'),
        {
          id: 'by-hand',
          values: { replicas: 2 },
          setAt: now,
          until: now + 3_600_000,
          reason: 'manual',
          source: 'manual',
          mode: 'floor',
        },
        now,
      );
      const stored = await store.operator.override(pipe('orders-events'));
      const until = new Date(stored!.until).toISOString();
      const plan = await cli('plan', '--pipe', 'orders-events', 'clickstream', 'nightly-s3');
      expect(plan).toMatchObject({ code: 0, stderr: '' });
      const block = (name: string) => plan.stdout.split('\n\n').find((b) => b.startsWith(`${name} `)) ?? '';
      expect(block('orders-events')).toContain(
        `\n  override  replicas 8 until ${until} (stored: pipescaler override): incident 4711\n`,
      );
      // the daemon would send it: the plan decides with it (with the window's other fields when the
      // wall clock is in business hours in Berlin: the override sets replicas alone)
      expect(block('orders-events')).toMatch(/\n {2}send +replicas 8(, cpu 1000m, memory 4GB)? \(up\)\n/);
      expect(block('clickstream')).toMatch(
        /\n {2}override +floor replicas 2 until \S+Z \(stored: a change made by hand, onDrift\): manual; the target is at or above it\n/,
      );
      expect(block('nightly-s3')).not.toContain('override');

      const json = JSON.parse((await cli('plan', '--json', '--pipe', 'orders-events')).stdout) as {
        pipeOverride?: { origin: string; values: object; until: string; reason: string };
        override?: { fields: string[] };
      }[];
      expect(json[0]?.pipeOverride).toMatchObject({
        origin: 'stored',
        values: { replicas: 8 },
        until,
        reason: 'incident 4711',
      });
      expect(json[0]?.override?.fields).toEqual(['replicas']);

      // a what-if for the same pipe stands in for the stored one, as a newer override does in the daemon
      const from = new Date(now - 60_000).toISOString();
      const to = new Date(now + 3_600_000).toISOString();
      const whatIf = await cli(
        'plan',
        '--pipe',
        'orders-events',
        '--override',
        `orders-events:replicas=5@${from}..${to}`,
      );
      expect(whatIf.code).toBe(0);
      expect(whatIf.stdout).toContain(
        `  override  replicas 5 until ${to} (what-if --override); supersedes the stored replicas 8 until ${until}: incident 4711\n`,
      );
      expect(whatIf.stdout).toMatch(/\n {2}send +replicas 5(, cpu 1000m, memory 4GB)? \(up\)\n/);

      // no Redis: the plan still comes, with one line saying what it could not read
      const noRedis = await runCli({ PIPESCALER_REDIS_PREFIX: prefix, PIPESCALER_REDIS_URL: 'redis://127.0.0.1:1' }, [
        'plan',
        '--pipe',
        'orders-events',
      ]);
      expect(noRedis.code).toBe(0);
      expect(noRedis.stderr).toMatch(
        /^warning: could not read Redis \(cannot reach Redis at 127\.0\.0\.1:1 db 0: [^\n]+\): the plan shows no stored override and counts on the configured actuation \(evaluate\.actuation\.expected\)\n$/,
      );
      expect(noRedis.stdout).toMatch(/^orders-events {2}policy /m);
      expect(noRedis.stdout).not.toContain('override');

      await cli('override', 'orders-events', '--cancel');
      await store.operator.cancelOverride(pipe('clickstream'));
    },
    SLOW,
  );

  it(
    'simulate --override shows an override before it is set, and checks it first',
    async () => {
      const sim = await bin([
        'simulate',
        'config/pipescaler.yaml',
        '--offline',
        '--pipe',
        'orders-events',
        '--from',
        '2026-11-24T15:00:00Z',
        '--to',
        '2026-11-24T19:00:00Z',
        '--override',
        'orders-events:replicas=8@2026-11-24T16:00:00Z..2026-11-24T18:00:00Z',
      ]);
      expect(sim.code).toBe(0);
      const lines = sim.stdout.split('\n').filter((l) => l.includes('(2026-11-24T1'));
      expect(lines.find((l) => l.includes('(2026-11-24T16:00Z)'))).toMatch(
        /up\s+replicas \d+->8\s+\[override until 18:00:00Z: simulated override\]/,
      );
      expect(lines.find((l) => l.includes('(2026-11-24T18:00Z)'))).toMatch(/down\s+replicas 8->\d+/);
      const bad = await bin([
        'simulate',
        'config/pipescaler.yaml',
        '--offline',
        '--from',
        '2026-11-24T15:00:00Z',
        '--to',
        '2026-11-24T19:00:00Z',
        '--override',
        'orders-events:replicas=8@2026-11-24T18:00:00Z..2026-11-24T16:00:00Z',
      ]);
      expect(bad).toMatchObject({
        code: 1,
        stderr: 'error: --override: 2026-11-24T16:00:00Z is not after 2026-11-24T18:00:00Z\n',
      });
    },
    SLOW,
  );
});
