// A lead slot's change goes at the slot's start, not at the pipe's first evaluation after it: the
// evaluation of a tick before the slot queues the pipe's turn for the slot's start (evaluate.ts
// queueLeadTurn), and that turn decides again and sends. At 10,000 pipes the evaluations wait
// behind each other for many ticks, and the changes went 6-12 s (of 1-s windows) after their
// slots, past the key's margin. Here no tick comes after the one before the slots: without the
// queued turn no scale-up is sent at all. The lead-time fleet (lead-fleet.ts) on real Redis and the
// embedded cloud, its daemon on the real clock with its ticks driven by the test.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/index.js';
import { createDaemon } from '../../src/daemon/index.js';
import { leadPlan, leadPlanSpan } from '../../src/policy/lead-plan.js';
import { FAST_WORKERS, REDIS_URL, cleanupPrefix, drained, uniquePrefix, until } from './helpers.js';
import { applyJobOptions, applyQueueName } from '../../src/daemon/lanes/queues.js';
import { leadFleet, type LeadFleet } from './lead-fleet.js';

const N = 8;
const prefixes: string[] = [];
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  for (const prefix of prefixes) await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/**
 * Runs the fleet to its baseline, queues a boundary 8 s ahead and ticks once, a second before the
 * first slot; `before` runs just before that tick. What each up pipe's scale-up did by T + 0.5 s.
 */
async function oneTickBeforeTheSlots(
  before: (fleet: LeadFleet, T: number, prefix: string) => Promise<void> = async () => {},
  evaluate: Parameters<typeof leadFleet>[2] = {},
): Promise<{
  fleet: LeadFleet;
  starts: number[];
  T: number;
  applied: Map<string, { at: number; replicas: number }[]>;
}> {
  const prefix = uniquePrefix('lead-turn');
  prefixes.push(prefix);
  const fleet = await leadFleet(N, prefix, evaluate);
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
    await drained([daemon]);
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
    await before(fleet, T, prefix);
    // One tick, a second before the first slot: its evaluations find no slot started.
    await until(() => Date.now() >= first - 1_000, 15_000, 'a second before the first slot');
    await daemon.tick(first - 1_000);
    await until(() => Date.now() >= T + 500, 15_000, 'the boundary');
    return { fleet, starts, T, applied };
  } finally {
    await daemon.stop({ timeoutMs: 2_000 });
    await cloud.close();
  }
}

function expectSentFromTheirSlots(
  r: Awaited<ReturnType<typeof oneTickBeforeTheSlots>>,
  { reads = false }: { reads?: boolean } = {},
): void {
  const { fleet, starts, T, applied } = r;
  for (const [i, p] of fleet.ups.entries()) {
    const up = applied.get(p.name)?.find((a) => a.replicas === 4);
    expect(up, p.name).toBeDefined();
    expect(up!.at, p.name).toBeGreaterThanOrEqual(starts[i]!);
    expect(up!.at, p.name).toBeLessThan(T);
  }
  // the scale-ups alone: the scale-downs wait for a tick at T, which never came
  // (and the reads the tick asked for, when it did)
  const patches = fleet.cloud.stats().requests.scalePipe;
  if (reads) expect(patches?.[200]).toBeGreaterThanOrEqual(fleet.ups.length);
  else expect(patches).toEqual({ 200: fleet.ups.length });
  expect(fleet.cloud.stats().rateLimited).toBe(0);
}

describe("a lead slot's turn", () => {
  it("sends each scale-up from its slot's start with no evaluation after it", async () => {
    expectSentFromTheirSlots(await oneTickBeforeTheSlots());
  }, 90_000);

  it("sends it from the slot's start when another turn holds the pipe's place", async () => {
    // Each up pipe's one pending turn is a confirmation read queued for T + 5 s: the scale-up's
    // turn queued for the slot is deduplicated onto it. It used to raise nothing, and the change
    // went when that read ran, after T (in the fleet bench, the slots' sends 13 s late).
    let queue: Queue | undefined;
    try {
      const r = await oneTickBeforeTheSlots(async (fleet, T, prefix) => {
        queue = new Queue(applyQueueName(fleet.config.api.keys.default!.keyId), { connection: redis, prefix });
        for (const p of fleet.ups) {
          const now = Date.now();
          const data = { pipe: p.name, tickAt: now, idempotencyKey: randomUUID(), direction: 'none', at: T + 5_000 };
          const opts = { ...applyJobOptions('confirm', p.name, 'none', now, now), delay: T + 5_000 - now };
          await queue.add('confirm', data, opts);
        }
      });
      expectSentFromTheirSlots(r);
    } finally {
      await queue?.close();
    }
  }, 90_000);

  it("sends it from the slot's start when the tick before it asked for a read", async () => {
    // Every pipe's reconcile read is due at the tick (reconcile every 4 s, the last read at the
    // baseline, 5 s or more before): the tick's step is a read, not a wait. It used to queue
    // nothing for the slot, and the change went at the pipe's first evaluation after the slot's
    // start (in the fleet bench 11-15 s after it, later the later the key's pipes are evaluated).
    const r = await oneTickBeforeTheSlots(async () => {}, { reconcileMs: 4_000 });
    expectSentFromTheirSlots(r, { reads: true });
  }, 90_000);
});
