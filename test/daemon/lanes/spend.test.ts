// spend(): a turn that finds no unit of its key's budget holds the key's queue until the unit is due
// and goes back to its place (BullMQ's rate limit); the queue's Workers take it up again when the
// hold ends, also when their fetch was blocked waiting for a delayed job (a confirmation read queued
// for its instant). A job sent back into the prioritized set adds no marker, and a blocked fetch
// slept out BullMQ's block timeout (up to 10 s): in the chaos run a key's queue stood idle 10 s after
// a 389 ms wait, with a change and two settle reads in it. Real Redis, real time (BullMQ's).
// And a request that goes out after its unit was taken (the turn's process slow to go on): its send
// is what the budget counts the platform's window from, and a unit whose window ended before the
// send is not spent on it. Those on a clock of the test's own, against the platform's fixed window.
import { Queue, RateLimitError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FixedWindowLimiter } from '../../../src/cloud/rate-limit.js';
import { KeyBudget } from '../../../src/daemon/lanes/budget.js';
import type { KeyLane } from '../../../src/daemon/lanes/lane.js';
import { spend } from '../../../src/daemon/lanes/spend.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix, until } from '../helpers.js';

const prefix = uniquePrefix('spend');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

// The budgets of the clocked cases: a hold's wake (spend.ts) may fire after the file ended, on a
// connection closed by then (its error is swallowed), so it leaves no key behind.
const clocked = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
  clocked.disconnect();
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

/** A budget whose take's caller goes on only when `gate` opens (a slow process between the take
 *  and the request), on the test's clock. */
class SlowBudget extends KeyBudget {
  gate: Promise<void> | null = null;
  taken = 0;
  onTake: (() => void) | null = null;
  override async take(kind?: 'change' | 'read') {
    const unit = await super.take(kind);
    this.taken += 1;
    this.onTake?.();
    if (this.gate) await this.gate;
    return unit;
  }
}

describe('a request that goes out after its unit was taken', () => {
  const LIMIT = { requests: 10, perMs: 10_000 };
  const T0 = Date.parse('2026-11-23T10:00:00Z');
  let k = 0;
  const setup = async () => {
    const clock = { now: T0 };
    const key = `${prefix}:ps:budget:late${k++}`;
    const budget = new SlowBudget(clocked, key, LIMIT, () => clock.now);
    // a key whose last window ended long ago: its next take opens a window
    await clocked.hset(key, 'end', 0);
    const platform = new FixedWindowLimiter(LIMIT, () => clock.now);
    const refused: number[] = [];
    const queue = { rateLimit: async () => {}, toKey: (s: string) => `${prefix}:late${k}:${s}` };
    const lane = { keyName: 'default', keyId: 'k', queue, budget } as unknown as KeyLane;
    /** One turn's request through spend(): true when it reached the platform. */
    const request = (by: KeyLane = lane, busy: (() => Promise<void>) | null = null) =>
      spend(by, async (beforeSend) => {
        // the process busy between the budget's mark and the write, then the client's check
        await busy?.();
        beforeSend();
        const { allowed, headers } = platform.take('key')!;
        if (!allowed) refused.push(clock.now - T0);
        // answered at once: the budget hears the window's end
        return {
          rateLimit: {
            remaining: Number(headers['x-ratelimit-remaining']),
            resetSeconds: Number(headers['x-ratelimit-reset']),
          },
        };
      }).then(
        () => true,
        (err: unknown) => {
          if (err instanceof RateLimitError) return false;
          throw err;
        },
      );
    /** `count` turns take their units now and go on only once the gate opens. */
    const held = async (count: number) => {
      let open!: () => void;
      budget.gate = new Promise((r) => (open = r));
      const all = new Promise<void>((r) => {
        const start = budget.taken;
        budget.onTake = () => {
          if (budget.taken - start === count) r();
        };
      });
      const turns = Array.from({ length: count }, () => request());
      await all;
      budget.gate = null;
      budget.onTake = null;
      return { turns, open };
    };
    /** Another replica's lane on the same key's budget. */
    const otherLane = () =>
      ({
        keyName: 'default',
        keyId: 'k',
        queue: { rateLimit: async () => {}, toKey: (s: string) => `${prefix}:other${k}:${s}` },
        budget: new KeyBudget(clocked, key, LIMIT, () => clock.now),
      }) as unknown as KeyLane;
    return { clock, budget, lane, request, held, refused, otherLane };
  };

  it("the window's first request counts the platform's window from its send: units taken at +0, sent at +3 s, none more at +10.5 s", async () => {
    const { clock, request, held, refused } = await setup();
    const { turns, open } = await held(10);
    clock.now = T0 + 3_000;
    open();
    expect(await Promise.all(turns)).toEqual(Array(10).fill(true));
    // our window opened at +0; the platform's, opened by the first of these, lasts until +13 s
    clock.now = T0 + 10_500;
    for (let i = 0; i < 10; i++) expect(await request(), `request ${i} at +10.5 s`).toBe(false);
    clock.now = T0 + 13_100;
    for (let i = 0; i < 10; i++) expect(await request()).toBe(true);
    expect(refused).toEqual([]);
  });

  it('a unit taken in a window that ended before its send is not spent on it: the turn waits for a unit of the window in force', async () => {
    const { clock, budget, request, held, refused } = await setup();
    const { turns, open } = await held(1);
    // meanwhile another replica opens the next window at +10.2 s and sends ten at once
    clock.now = T0 + 10_200;
    const other = new KeyBudget(clocked, budget.key, LIMIT, () => clock.now);
    const otherLane = {
      keyName: 'default',
      keyId: 'k',
      queue: { rateLimit: async () => {}, toKey: (s: string) => `${prefix}:other:${s}` },
      budget: other,
    } as unknown as KeyLane;
    for (let i = 0; i < 10; i++) expect(await request(otherLane)).toBe(true);
    // the turn taken at +0 goes on at +10.3 s
    clock.now = T0 + 10_300;
    open();
    expect(await Promise.all(turns)).toEqual([false]);
    expect(refused).toEqual([]);
  });

  it("a request marked near its window's end and written after it ended (the process stalled) is not written: 10 per platform window, not 19", async () => {
    const { clock, lane, request, refused, otherLane } = await setup();
    // the window opens at +0 with one request, which moves its end to +10 s
    expect(await request()).toBe(true);
    // at +9.85 s, before the margin, nine more are marked; their process stalls until +10.15 s
    clock.now = T0 + 9_850;
    let resume!: () => void;
    const stall = new Promise<void>((r) => (resume = r));
    let marked = 0;
    const late = Array.from({ length: 9 }, () =>
      request(lane, () => {
        marked += 1;
        return stall;
      }),
    );
    await until(() => marked === 9, 2_000, 'nine units marked');
    // meanwhile another replica opens the next window at +10.15 s and sends ten at once
    clock.now = T0 + 10_150;
    const other = otherLane();
    for (let i = 0; i < 10; i++) expect(await request(other), `request ${i} of the next window`).toBe(true);
    resume();
    // the nine would have reached the platform in its new window, after the ten: held back instead
    expect(await Promise.all(late)).toEqual(Array(9).fill(false));
    expect(refused).toEqual([]);
  });
});
