// Lead time from measured actuation in the daemon: a pipe whose last scale-ups took 6 s from sent
// to confirmed at target (samples in Redis, as the confirm path records them) has its scale-up sent
// 6 s (and its confirmation reads) earlier than the budget alone would, so it is confirmed at
// target when its window opens. A small fleet
// on one key against the embedded cloud, the cron every second, the real clock injected.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/index.js';
import { recordActuation } from '../../src/daemon/store/actuation-store.js';
import { redisKeys } from '../../src/daemon/store/redis-keys.js';
import { LEAD_RATE_SHARE, leadPlan, leadPlanSpan } from '../../src/policy/lead-plan.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix, until } from './helpers.js';
import { leadFleet, startLeadDaemon } from './lead-fleet.js';

const N = 10;
const ACTUATION_MS = 6_000;
const prefix = uniquePrefix('lead-actuation');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('leadTime auto with measured actuation', () => {
  it("sends each scale-up its measured p95 earlier: by the boundary less the pipe's actuation", async () => {
    const fleet = await leadFleet(N, prefix, {
      actuation: { expectedMs: 0, maxMs: 600_000, minSamples: 3, firstReadMs: 1_000 },
    });
    const { cloud, ups, boundary } = fleet;
    // the up pipes' last three scale-ups took 6 s each (the down pipes have none: configured, 0)
    for (const p of ups)
      for (let i = 0; i < 3; i++) await recordActuation(redis, redisKeys(prefix), { ...p, kind: null }, ACTUATION_MS);
    const emitter = new DaemonEmitter();
    const applied = new Map<string, number>();
    emitter.on('decision', (d) => {
      if (d.result === 'applied' && d.after.replicas === 4) applied.set(d.pipe, Date.now());
    });
    const daemon = await startLeadDaemon(fleet, redis, prefix, emitter);
    try {
      const T = Math.ceil((Date.now() + 14_000) / 1_000) * 1_000;
      const next = boundary(T);
      const span = leadPlanSpan(Date.now());
      const measured = leadPlan(next, span.from, span.to, {
        actuationMs: (p) => (p.policy === 'up' ? ACTUATION_MS : undefined),
      });
      const budgetOnly = leadPlan(next, span.from, span.to);
      // a confirmation read's slot: one of the changes' lane, 90 % of the key's rate
      const { rateLimit } = next.api.keys.default!;
      const readMs = rateLimit.perMs / (rateLimit.requests * LEAD_RATE_SHARE);
      for (const p of ups) {
        const slot = measured.slots.get(p.name)![0]!;
        expect(slot).toMatchObject({ boundary: T, actuationMs: ACTUATION_MS });
        // at target its actuation after its slot, confirmed by a read after that, before T
        expect(slot.atTargetAt! - slot.start).toBeGreaterThanOrEqual(ACTUATION_MS);
        expect(slot.expectedAt - slot.atTargetAt!).toBeGreaterThanOrEqual(readMs - 1);
        expect(slot.expectedAt).toBeLessThanOrEqual(T);
        expect(slot.start).toBeLessThanOrEqual(budgetOnly.slots.get(p.name)![0]!.start - ACTUATION_MS);
      }
      expect(await daemon.reload(next)).toBe(true);
      await until(() => ups.every((p) => applied.has(p.name)), 30_000, 'every scale-up answered');
      // each went from its measured slot, answered by the boundary less its actuation
      for (const p of ups) {
        const at = applied.get(p.name)!;
        const slot = measured.slots.get(p.name)![0]!;
        expect(at, p.name).toBeGreaterThanOrEqual(slot.start - 1_000);
        expect(at, p.name).toBeLessThan(T - ACTUATION_MS);
      }
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 90_000);
});
