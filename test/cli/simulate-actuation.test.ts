// `simulate` counts on the actuation the daemon measured, as `plan` and the daemon's lead plans do:
// the samples in Redis (the pipe's p95, its kind's, or the configured expectation), and says which
// one its scale-ups counted on; without Redis, one warning line, the configured expectation and
// exit 0 (the built CLI on the shipped config, --offline).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/daemon/index.js';
import { recordActuation } from '../../src/daemon/store/actuation-store.js';
import { DEMO, REDIS_URL, cleanupPrefix, runCli, uniquePrefix } from '../daemon/helpers.js';

const prefix = uniquePrefix('simulate-actuation');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const store = new StateStore(redis, prefix);

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

// a weekday morning: business-hours opens at 07:00 UTC
const PERIOD = ['--from', '2026-11-25T06:00:00Z', '--to', '2026-11-25T08:00:00Z'];
const simulate = (env: Record<string, string>, ...args: string[]) =>
  runCli({ PIPESCALER_REDIS_PREFIX: prefix, ...env }, [
    'simulate',
    '--offline',
    ...PERIOD,
    '--pipe',
    'orders-events',
    ...args,
  ]);

interface JsonChange {
  at: string;
  direction: string;
  expectedAt?: string;
  actuationMs?: number;
  actuationSource?: string;
  actuationSamples?: number;
  measuredP95Ms?: number;
  measuredRead?: boolean;
}
const ups = (stdout: string) => (JSON.parse(stdout) as JsonChange[]).filter((c) => c.direction === 'up');

describe('simulate with measured actuation', () => {
  it("counts on the pipe's p95 once it has enough samples, the configured expectation before, and says which", async () => {
    const before = await simulate({}, '--json');
    expect(before.code).toBe(0);
    expect(before.stderr).toBe('');
    const first0 = ups(before.stdout)[0]!;
    expect(first0).toMatchObject({ actuationMs: 0, actuationSource: 'configured', actuationSamples: 0 });
    expect(first0.expectedAt).toBeUndefined();

    const pipe = { organizationId: DEMO.org, serviceId: DEMO.analytics, pipeId: DEMO.pipes['orders-events'] };
    for (let i = 0; i < 20; i++)
      await recordActuation(redis, store.keys, { ...pipe, kind: 'stream' }, 60_000 + i * 1_000);
    const json = await simulate({}, '--json');
    expect(json.code).toBe(0);
    const first = ups(json.stdout)[0]!;
    expect(first).toMatchObject({
      actuationMs: 78_000,
      actuationSource: 'pipe',
      actuationSamples: 20,
      measuredP95Ms: 78_000,
    });
    // sent earlier than on the configured expectation (a step of 1m earlier at least), and at target by the boundary
    expect(Date.parse(first.at)).toBeLessThanOrEqual(Date.parse(first0.at) - 60_000);
    expect(Date.parse(first.expectedAt!)).toBe(Date.parse(first.at) + 78_000);
    expect(Date.parse(first.expectedAt!)).toBeLessThanOrEqual(Date.parse('2026-11-25T07:00:00Z'));

    const text = await simulate({});
    expect(text.stderr).toBe('');
    expect(text.stdout).toMatch(/^ {2}scale-ups count on 1m18s actuation: the pipe's p95 over its last 20 changes\n/m);
    expect(text.stdout).toMatch(
      /ahead of business-hours at 07:00:00Z \(slot from 06:5\d:\d\dZ\), at target by 06:5\d:\d\dZ, confirmed by 06:5\d:\d\dZ\]/,
    );
  }, 60_000);

  it('without Redis: one warning line, the configured expectation, exit 0', async () => {
    const noRedis = { PIPESCALER_REDIS_URL: 'redis://127.0.0.1:1' };
    const json = await simulate(noRedis, '--json');
    expect(json.code).toBe(0);
    expect(json.stderr).toMatch(
      /^warning: could not read Redis \(cannot reach Redis at 127\.0\.0\.1:1 db 0: [^\n]+\): the simulation counts on the configured actuation \(evaluate\.actuation\.expected\)\n$/,
    );
    expect(ups(json.stdout)[0]).toMatchObject({ actuationMs: 0, actuationSource: 'configured', measuredRead: false });
    const text = await simulate(noRedis);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^ {2}scale-ups count on 0s actuation: evaluate\.actuation\.expected, the measured ones not read\n/m,
    );
  }, 60_000);
});
