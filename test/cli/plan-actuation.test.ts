// `plan` reads the actuation the daemon measured from Redis and says, for a pipe's next scale-up,
// when it may be sent, when it is expected at target and from what actuation: the pipe's p95, its
// kind's, or the configured expectation (the built CLI on the shipped config, --offline).
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../src/daemon/index.js';
import { recordActuation } from '../../src/daemon/store/actuation-store.js';
import { DEMO, REDIS_URL, cleanupPrefix, runCli, uniquePrefix } from '../daemon/helpers.js';

const prefix = uniquePrefix('plan-actuation');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const store = new StateStore(redis, prefix);

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

// a weekday morning before business-hours opens at 07:00 UTC
const AT = '2026-11-25T06:30:00Z';
const plan = (...args: string[]) =>
  runCli({ PIPESCALER_REDIS_PREFIX: prefix }, ['plan', '--offline', '--at', AT, '--pipe', 'orders-events', ...args]);

describe('plan with measured actuation', () => {
  it("names the pipe's p95 once it has enough samples, and the configured expectation before", async () => {
    const before = await plan('--json');
    expect(before.code).toBe(0);
    const slot0 = (JSON.parse(before.stdout) as { nextLeadSlot: Record<string, unknown> }[])[0]!.nextLeadSlot;
    expect(slot0).toMatchObject({ actuationMs: 0, actuationSource: 'configured', actuationSamples: 0 });

    const pipe = { organizationId: DEMO.org, serviceId: DEMO.analytics, pipeId: DEMO.pipes['orders-events'] };
    for (let i = 0; i < 20; i++)
      await recordActuation(redis, store.keys, { ...pipe, kind: 'stream' }, 60_000 + i * 1_000);
    const json = await plan('--json');
    const slot = (JSON.parse(json.stdout) as { nextLeadSlot: Record<string, unknown> }[])[0]!.nextLeadSlot;
    expect(slot).toMatchObject({
      boundary: '2026-11-25T07:00:00.000Z',
      actuationMs: 78_000,
      actuationSource: 'pipe',
      actuationSamples: 20,
      measuredP95Ms: 78_000,
    });
    // sent at least 78 s earlier than before (the other stream pipes count on their kind's p95 now,
    // 78 s too), expected confirmed at target (a read after it is) by the boundary less the margin
    expect(Date.parse(slot.start as string)).toBeLessThanOrEqual(Date.parse(slot0.start as string) - 78_000);
    expect(Date.parse(slot.expectedAt as string)).toBeLessThanOrEqual(Date.parse('2026-11-25T06:59:00Z'));
    expect(Date.parse(slot.atTargetAt as string)).toBeLessThan(Date.parse(slot.expectedAt as string));
    // the capacity it is expected to spend early: 2 -> 6 replicas (0.5 -> 1 core, 2 -> 4 GB each),
    // in force at its send slot plus the 78 s counted on, until the boundary
    const earlyMin = (Date.parse('2026-11-25T07:00:00Z') - Date.parse(slot.start as string) - 78_000) / 60_000;
    expect(earlyMin).toBeGreaterThan(0);
    const early = slot.early as Record<string, number>;
    expect(early.replicaMinutes).toBeCloseTo(4 * earlyMin, 6);
    expect(early.coreMinutes).toBeCloseTo(5 * earlyMin, 6);
    expect(early.gbMinutes).toBeCloseTo(20 * earlyMin, 6);
    expect(slot.short).toEqual({ replicaMinutes: 0, coreMinutes: 0, gbMinutes: 0, slotMinutes: 0 });
    const text = await plan();
    expect(text.stderr).toBe('');
    expect(text.stdout).toMatch(
      /expected at target by 06:5\d:\d\dZ, confirmed by 06:5\d:\d\dZ \(1m18s actuation: the pipe's p95 over its last 20 changes\)\n/,
    );
    expect(text.stdout).toMatch(
      /\n {2}early +[\d.]+ replica-min, [\d.]+ core-min, [\d.]+ GB-min early expected: in force \d+m\d+s before the boundary/,
    );
  }, 60_000);
});
