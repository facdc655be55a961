// Lead time in the daemon: with leadTime auto, a window's scale-ups go from each pipe's slot in its
// key's lead plan and are all answered before the window opens; its scale-downs wait for it. A
// small fleet on one key against the embedded cloud's own limiter (10 per 1 s, the platform's
// ratio compressed), the daemon's cron ticking every second and its clock the real one, injected.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/index.js';
import { leadPlan, leadPlanSpan } from '../../src/policy/lead-plan.js';
import type { PipeConfig } from '../../src/policy/types.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix, until } from './helpers.js';
import { leadFleet, startLeadDaemon } from './lead-fleet.js';

const N = 40;
const prefix = uniquePrefix('lead');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('leadTime auto', () => {
  it('lands every scale-up by the boundary, and no scale-down before it', async () => {
    const fleet = await leadFleet(N, prefix);
    const { cloud, ups, downs, boundary } = fleet;
    const emitter = new DaemonEmitter();
    const applied = new Map<string, { at: number; replicas: number }[]>();
    emitter.on('decision', (d) => {
      if (d.result !== 'applied') return;
      applied.set(d.pipe, [...(applied.get(d.pipe) ?? []), { at: Date.now(), replicas: d.after.replicas ?? 0 }]);
    });
    const daemon = await startLeadDaemon(fleet, redis, prefix, emitter);
    try {
      // The boundary: at T the up pipes go to 4, the down pipes to 1.
      const T = Math.ceil((Date.now() + 12_000) / 1_000) * 1_000;
      const next = boundary(T);
      const span = leadPlanSpan(Date.now());
      const plan = leadPlan(next, span.from, span.to);
      // 20 changes at 90 % of 10 per s, the last two 1 s ticks before T; only the scale-ups have
      // slots at T (the scale-downs have theirs when their window ends, back up to the baseline)
      expect(ups.every((p) => plan.slots.get(p.name)![0]!.boundary === T)).toBe(true);
      expect(downs.every((p) => plan.slots.get(p.name)![0]!.boundary === T + 3_600_000)).toBe(true);
      cloud.resetStats();
      expect(await daemon.reload(next)).toBe(true);

      await until(() => Date.now() >= T + 500, 30_000, 'the boundary');
      // Every scale-up was answered before T, none before its slot's tick.
      for (const p of ups) {
        const up = applied.get(p.name)!.find((a) => a.replicas === 4);
        expect(up, p.name).toBeDefined();
        expect(up!.at, p.name).toBeLessThan(T);
        expect(up!.at, p.name).toBeGreaterThanOrEqual(plan.slots.get(p.name)![0]!.start - 1_000);
      }
      // No scale-down went before T; all of them go within the key's bound after it.
      const down = (p: PipeConfig) => applied.get(p.name)?.find((a) => a.replicas === 1);
      await until(() => downs.every((p) => down(p) !== undefined), 30_000, 'every scale-down answered');
      for (const p of downs) expect(down(p)!.at, p.name).toBeGreaterThanOrEqual(T);
      expect(downs.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 1)).toBe(true);
      // One change each, no 429: an early change is still one change.
      expect(cloud.stats().requests.scalePipe).toEqual({ 200: N });
      expect(cloud.stats().rateLimited).toBe(0);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 90_000);
});
