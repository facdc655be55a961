// A lead slot's change goes at the slot's start, not at the pipe's first evaluation after it: the
// evaluation of a tick before the slot queues the pipe's turn for the slot's start (evaluate.ts
// queueLeadTurn), and that turn decides again and sends. At 10,000 pipes the evaluations wait
// behind each other for many ticks, and the changes went 6-12 s (of 1-s windows) after their
// slots, past the key's margin. Here no tick comes after the one before the slots: without the
// queued turn no scale-up is sent at all. The lead-time fleet (lead-fleet.ts) on real Redis and the
// embedded cloud, its daemon on the real clock with its ticks driven by the test.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/index.js';
import { createDaemon } from '../../src/daemon/index.js';
import { leadPlan, leadPlanSpan } from '../../src/policy/lead-plan.js';
import { FAST_WORKERS, REDIS_URL, cleanupPrefix, uniquePrefix, until } from './helpers.js';
import { leadFleet } from './lead-fleet.js';

const N = 8;
const prefix = uniquePrefix('lead-turn');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe("a lead slot's turn", () => {
  it("sends each scale-up from its slot's start with no evaluation after it", async () => {
    const fleet = await leadFleet(N, prefix);
    const { cloud, pipes, ups, boundary } = fleet;
    const emitter = new DaemonEmitter();
    const applied = new Map<string, { at: number; replicas: number }[]>();
    emitter.on('decision', (d) => {
      if (d.result !== 'applied') return;
      applied.set(d.pipe, [...(applied.get(d.pipe) ?? []), { at: Date.now(), replicas: d.after.replicas ?? 0 }]);
    });
    const daemon = createDaemon({
      config: fleet.config,
      redis,
      prefix,
      emitter,
      now: () => Date.now(),
      watch: false,
      schedule: false,
      workerOptions: FAST_WORKERS,
    });
    await daemon.start();
    try {
      // the cold start (1 -> 2), ticked by the test
      await until(
        async () => {
          await daemon.tick(Date.now());
          return pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2);
        },
        30_000,
        'every pipe at the baseline',
      );
      const T = Math.ceil((Date.now() + 8_000) / 1_000) * 1_000;
      const next = boundary(T);
      const span = leadPlanSpan(Date.now());
      const plan = leadPlan(next, span.from, span.to);
      const starts = ups.map((p) => plan.slots.get(p.name)![0]!.start);
      const first = Math.min(...starts);
      // the plan's slots: the last two 1-s ticks before T, within the two ticks after the tick below
      expect(Math.max(...starts)).toBeLessThan(T - 1_000);
      expect(Math.max(...starts) - first).toBeLessThan(1_000);
      cloud.resetStats();
      expect(await daemon.reload(next)).toBe(true);
      // One tick, a second before the first slot: its evaluations find no slot started.
      await until(() => Date.now() >= first - 1_000, 15_000, 'a second before the first slot');
      await daemon.tick(first - 1_000);
      await until(() => Date.now() >= T + 500, 15_000, 'the boundary');
      for (const [i, p] of ups.entries()) {
        const up = applied.get(p.name)?.find((a) => a.replicas === 4);
        expect(up, p.name).toBeDefined();
        expect(up!.at, p.name).toBeGreaterThanOrEqual(starts[i]!);
        expect(up!.at, p.name).toBeLessThan(T);
      }
      // the scale-ups alone: the scale-downs wait for a tick at T, which never came
      expect(cloud.stats().requests.scalePipe).toEqual({ 200: ups.length });
      expect(cloud.stats().rateLimited).toBe(0);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 90_000);
});
