// pause, resume and status through the built bin: they talk to Redis only (the config gives its
// url; PIPESCALER_REDIS_PREFIX keeps this test's keys apart), and a daemon sees the flags.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { refOf, StateStore } from '../../src/daemon/index.js';
import { loadConfig } from '../../src/config/index.js';
import { Heartbeat } from '../../src/daemon/store/heartbeat.js';
import { REDIS_URL, cleanupPrefix, runCli, uniquePrefix, type CliResult } from './helpers.js';

const run = promisify(execFile);
// each case runs the bin several times (2-4 s each on a loaded machine)
const SLOW = 120_000;
const prefix = uniquePrefix('commands');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const store = new StateStore(redis, prefix);
const shipped = loadConfig('config/pipescaler.yaml', process.env, 'redis');
/** A pipe of the shipped config: pauses and overrides are stored under its ids. */
const pipe = (name: string) => shipped.pipes.find((p) => p.name === name)!;

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

async function cli(...args: string[]): Promise<CliResult> {
  return cliWith('config/pipescaler.yaml', ...args);
}

async function cliWith(config: string, ...args: string[]): Promise<CliResult> {
  return runCli({ PIPESCALER_REDIS_PREFIX: prefix }, args, config);
}

describe('pipescaler pause, resume, status', () => {
  it(
    'sets and clears the flags the daemon reads, and status shows them',
    async () => {
      expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
      const before = Date.now();
      const paused = await cli('pause', 'orders-events', '--for', '2h', '--reason', 'load test');
      expect(paused).toMatchObject({ code: 0, stderr: '' });
      expect(paused.stdout).toMatch(/^paused orders-events until .*: load test\n$/);
      const flag = await store.operator.pause(pipe('orders-events'));
      expect(flag).toMatchObject({ reason: 'load test', scope: 'pipe' });
      expect(flag!.until).toBeGreaterThanOrEqual(before + 2 * 3_600_000);
      expect(await redis.pttl(store.keys.pause(refOf(pipe('orders-events'))))).toBeGreaterThan(3_600_000);

      expect((await cli('pause', '--all', '--reason', 'freeze')).code).toBe(0);
      expect(await store.operator.pause(pipe('clickstream'))).toMatchObject({ reason: 'freeze', scope: 'all' });

      await store.write('orders-events', { kind: 'stream', state: 'Running', applied: { replicas: 2 } });
      const status = await cli('status', '--json');
      expect(status.code).toBe(3); // no daemon alive
      const rows = JSON.parse(status.stdout) as { pipe: string; paused: unknown; applied: unknown }[];
      expect(rows.find((r) => r.pipe === 'orders-events')).toMatchObject({
        applied: { replicas: 2 },
        paused: { reason: 'load test' },
      });
      expect(rows.find((r) => r.pipe === 'clickstream')).toMatchObject({ paused: { reason: 'freeze', scope: 'all' } });
      const table = await cli('status');
      expect(table.stdout).toMatch(/^PIPE\s+PLATFORM\s+READ\s+CHANGE\s+WINDOW\s+DECIDED\s+STATUS$/m);
      // never read by a daemon: no instant, so nothing said of when the platform showed it
      expect(table.stdout).toMatch(/^orders-events\s+2 repl\s+-\s+-\s+-\s+never\s+paused, \d+[mh] left: load test$/m);

      // one pipe resumed, the fleet's pause still holds it: said so
      expect((await cli('resume', 'orders-events')).stdout).toBe(
        'resumed orders-events; all pipes are still paused (pause --all: freeze): resume --all lifts that\n',
      );
      expect((await cli('resume', '--all')).stdout).toBe('resumed all pipes (lifted the pause of all pipes)\n');
      expect(await store.operator.pause(pipe('orders-events'))).toBeNull();
      expect(await store.operator.pause(pipe('clickstream'))).toBeNull();
      // nothing paused: resume says so (and succeeds: the pipe runs, as asked)
      expect(await cli('resume', 'orders-events')).toMatchObject({
        code: 0,
        stdout: 'orders-events is not paused: nothing to resume\n',
      });
      expect((await cli('resume', '--all')).stdout).toBe('nothing was paused\n');
    },
    SLOW,
  );

  it(
    'status: how old each row is, the skip reason, whether a daemon is alive, in 100 columns',
    async () => {
      const at = Date.now() - 65_000;
      const skipped = {
        at,
        action: 'skip',
        direction: 'none',
        windows: ['business-hours'],
        desired: {},
        changes: {},
        reasons: [
          { code: 'window', message: 'business-hours sets replicas 6' },
          { code: 'pipe_state', message: 'pipe is Stopped' },
        ],
      };
      await store.write('legacy-events', {
        kind: 'stream',
        state: 'Stopped',
        applied: { replicas: 1, replicaCpuMillicores: 125, replicaMemoryGb: 0.5 },
        lastReadAt: at,
        lastDecision: skipped as never,
      });
      const held = {
        ...skipped,
        action: 'none',
        reasons: [{ code: 'cooldown', message: 'scale-down cooldown until 10:05' }],
      };
      await store.write('orders-events', {
        kind: 'stream',
        state: 'Running',
        applied: { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
        desired: { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
        lastReadAt: at,
        lastDecision: held as never,
      });

      const none = await cli('status');
      expect(none.code).toBe(3);
      expect(none.stdout.split('\n').slice(0, 2)).toEqual([
        'no daemon alive (no heartbeat in the last 30 s): nothing is scaling these pipes',
        '  start one: pipescaler run -c <config> (the demo on the embedded cloud: npm start)',
      ]);
      expect(none.stdout).toMatch(/^legacy-events\s+Stopped\s+\d+s\s+-\s+business-hours\s+\d+s\s+pipe_state$/m);
      expect(none.stdout).toMatch(/^orders-events\s+6x1000m\/4GB\s+\d+s\s+=\s+business-hours\s+\d+s\s+cooldown$/m);
      // a pipe never read nor evaluated: no values, no instants
      expect(none.stdout).toMatch(/^nightly-s3\s+-\s+-\s+-\s+-\s+never\s+ok$/m);
      for (const line of none.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(100);

      const beat = new Heartbeat(redis, store.keys, 'replica-1', () => ({ pipes: 10, dryRun: false }));
      await beat.beat();
      try {
        const alive = await cli('status');
        expect(alive.stdout.split('\n')[0]).toMatch(/^daemons: 1 replica alive, last heartbeat \d+s ago$/);
        const wide = await cli('status', '--wide');
        expect(wide.stdout).toMatch(
          /^ {2}\S+ pid \d+, version \S+, up \d+s, heartbeat \d+s ago, 10 pipes \(replica-1\)$/m,
        );
        expect(wide.stdout).toMatch(/^legacy-events\s+default\s+Stopped\s+\d+[sm]\s/m);
        expect(wide.stdout).toMatch(
          /^ {4}platform: replicas=1 replicaCpuMillicores=125 replicaMemoryGb=0\.5 \(stream, Stopped\), read \S+Z$/m,
        );
        expect(Math.max(...wide.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(160);
        const json = await cli('status', '--json');
        expect(json.stderr).toBe('');
        const rows = JSON.parse(json.stdout) as { pipe: string; reason: string | null; ageSeconds: number | null }[];
        expect(rows.find((r) => r.pipe === 'legacy-events')).toMatchObject({ reason: 'pipe_state' });
        expect(rows.find((r) => r.pipe === 'legacy-events')!.ageSeconds).toBeGreaterThanOrEqual(65);
        expect(rows.find((r) => r.pipe === 'nightly-s3')).toMatchObject({ reason: null, ageSeconds: null });
      } finally {
        await beat.stop();
      }
      expect((await cli('status', '--json')).stderr).toBe(
        'warning: no daemon alive (no heartbeat in the last 30 s): nothing is scaling these pipes\n' +
          '  start one: pipescaler run -c <config> (the demo on the embedded cloud: npm start)\n',
      );
    },
    SLOW,
  );

  it(
    'status, pause and resume need only the Redis settings: no API variable, key file or Prometheus',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pipescaler-levers-'));
      try {
        const file = join(dir, 'production.yaml');
        cpSync('config/holidays', join(dir, 'holidays'), { recursive: true });
        writeFileSync(
          file,
          readFileSync('config/pipescaler.yaml', 'utf8')
            .replace('baseUrl: ${PIPESCALER_API_URL:-embedded}', 'baseUrl: ${PS_UNSET_BASE_URL}')
            .replace('keyId: ${PIPESCALER_KEY_ID:-}', 'keyId: ${PS_UNSET_KEY_ID}')
            .replace('keySecret: ${PIPESCALER_KEY_SECRET:-}', 'keySecretFile: /nonexistent/pipescaler-secret')
            .replace('url: ${PROMETHEUS_URL:-http://127.0.0.1:9090}', 'url: ${PS_UNSET_PROMETHEUS_URL}'),
        );
        // the daemon could not run it: validate says why
        const validate = await run(process.execPath, ['dist/cli/main.js', 'validate', file]).then(
          () => null,
          (e: unknown) => (e as { stderr: string }).stderr,
        );
        expect(validate).toMatch(/PS_UNSET_BASE_URL/);
        expect(validate).toMatch(/PS_UNSET_KEY_ID/);
        expect(validate).toMatch(/pipescaler-secret/);
        // the levers can
        const status = await cliWith(file, 'status');
        expect(status).toMatchObject({ code: 3, stderr: '' }); // it read Redis; no daemon is alive
        expect(status.stdout).toMatch(/^orders-events\s/m);
        expect(await cliWith(file, 'pause', 'clickstream', '--reason', 'x')).toMatchObject({
          code: 0,
          stdout: 'paused clickstream: x\n',
        });
        expect(await cliWith(file, 'resume', 'clickstream')).toMatchObject({
          code: 0,
          stdout: 'resumed clickstream\n',
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    SLOW,
  );

  it(
    'says in one line what is wrong with the arguments',
    async () => {
      const unknown = await cli('pause', 'no-such-pipe');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^error: unknown pipe "no-such-pipe" \(pipes: orders-events, .*\)\n$/);
      const both = await cli('resume');
      expect(both).toMatchObject({ code: 1, stderr: 'error: give a pipe name or --all\n' });
      const badFor = await cli('pause', 'orders-events', '--for', 'soon');
      expect(badFor).toMatchObject({ code: 1, stderr: 'error: --for: "soon" is not a duration (e.g. 30m, 2h)\n' });
    },
    SLOW,
  );
});
