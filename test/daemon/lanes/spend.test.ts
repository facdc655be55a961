// spend(): a turn that finds no unit of its key's budget holds the key's queue until the unit is due
// and goes back to its place (BullMQ's rate limit); the queue's Workers take it up again when the
// hold ends, also when their fetch was blocked waiting for a delayed job (a confirmation read queued
// for its instant). A job sent back into the prioritized set adds no marker, and a blocked fetch
// slept out BullMQ's block timeout (up to 10 s): in the chaos run a key's queue stood idle 10 s after
// a 389 ms wait, with a change and two settle reads in it. Real Redis, real time (BullMQ's).
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyBudget } from '../../../src/daemon/lanes/budget.js';
import type { KeyLane } from '../../../src/daemon/lanes/lane.js';
import { spend } from '../../../src/daemon/lanes/spend.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix, until } from '../helpers.js';

const prefix = uniquePrefix('spend');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/** A fetch of one of this file's Workers is blocked on its queue's marker (BZPOPMIN). */
async function blockedFetch(): Promise<boolean> {
  const clients = (await redis.client('LIST')) as string;
  return clients.split('\n').some((c) => c.includes(` name=${prefix}:`) && c.includes(' cmd=bzpopmin'));
}

describe('a turn sent back for its key budget', () => {
  it('runs again when the unit is due, while the Worker waits for a delayed job', async () => {
    const name = 'apply-spend';
    const queue = new Queue(name, { connection: redis, prefix });
    // one request per second: the unit taken here leaves the turn none until the next window
    const budget = new KeyBudget(redis, `${prefix}:budget`, { requests: 1, perMs: 1_000 });
    const lane = { keyName: 'default', keyId: 'k', queue, budget } as unknown as KeyLane;
    const runs: number[] = [];
    let sent = 0;
    const worker = new Worker(
      name,
      async (job) => {
        if (job.name !== 'turn') return 'later';
        runs.push(Date.now());
        // the Worker's next fetch waits for the delayed job (BullMQ blocks up to 10 s)
        if (runs.length === 1) await until(blockedFetch, 5_000, 'a blocked fetch');
        await spend(lane, async () => {
          sent += 1;
          return {};
        });
        return 'sent';
      },
      // as the daemon's lanes: a limiter so that BullMQ honors queue.rateLimit, concurrency > 1
      { connection: redis, prefix, concurrency: 5, limiter: { max: 1_000_000, duration: 1_000 } },
    );
    try {
      await queue.add('later', {}, { delay: 60_000 });
      // a key whose last window ended long ago: known, so this take opens a window
      await redis.hset(budget.key, 'end', 0);
      expect((await budget.take()).waitMs).toBe(0);
      await queue.add('turn', {}, { priority: 4 });
      await until(() => sent === 1, 4_000, 'the turn sent when its unit came');
      // sent back once (no unit), then taken up again within the window's second
      expect(runs).toHaveLength(2);
      expect(runs[1]! - runs[0]!).toBeLessThan(2_500);
    } finally {
      await worker.close(true);
      await queue.close();
    }
  }, 20_000);
});
