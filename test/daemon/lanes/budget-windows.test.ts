// The key's budget against the platform's fixed window (the embedded cloud's limiter) when answers
// come late: an answer belongs to the window its unit was taken in. One of a window already over
// never moves the window in force nor opens a new one; one of the window in force, however late,
// never lets a unit go after the platform's window may have ended. On the real limit (10 per 10 s),
// on a clock of the test's own; each request reaches the platform as its unit is taken.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { FixedWindowLimiter } from '../../../src/cloud/rate-limit.js';
import { KeyBudget, type BudgetTake } from '../../../src/daemon/lanes/budget.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('budget-windows');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const LIMIT = { requests: 10, perMs: 10_000 };
const T0 = Date.parse('2026-11-23T10:00:00Z');
let n = 0;

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/** A key whose last window ended long ago (known: its next take opens a window). */
async function budget() {
  const clock = { now: T0 };
  const b = new KeyBudget(redis, `${prefix}:ps:budget:k${n++}`, LIMIT, () => clock.now);
  const platform = new FixedWindowLimiter(LIMIT, () => clock.now);
  await redis.hset(b.key, 'end', 0);
  const refused: number[] = [];
  /** `count` takes at `at` ms after T0 (by `by`, another replica's view of the same key if given);
   *  each unit's request reaches the platform at once. */
  const send = async (at: number, count: number, by: KeyBudget = b) => {
    clock.now = T0 + at;
    const units: (BudgetTake & { headers: Record<string, string> })[] = [];
    for (let i = 0; i < count; i++) {
      const unit = await by.take();
      if (unit.waitMs !== 0) continue;
      const { allowed, headers } = platform.take('key')!;
      if (!allowed) refused.push(at);
      units.push({ ...unit, headers });
    }
    return units;
  };
  const answer = (headers: Record<string, string>) => ({
    remaining: Number(headers['x-ratelimit-remaining']),
    resetSeconds: Number(headers['x-ratelimit-reset']),
  });
  return { b, clock, send, answer, refused };
}

describe('an answer of a window already over', () => {
  it('processed late, it neither moves the window in force nor opens a new one: 10 per platform window, not 20', async () => {
    const { b, clock, send, refused } = await budget();
    const first = await send(0, 10);
    expect(first).toHaveLength(10);
    // the platform's second window opens with the first of these, at +10.15 s: until +20.15 s
    expect(await send(10_150, 10)).toHaveLength(10);
    // an answer of the first window (its Reset 10 ms), processed 300 ms late
    clock.now = T0 + 10_450;
    await b.observe(first[9]!.at, { remaining: 0, resetSeconds: 0.01 });
    for (const at of [10_600, 12_000, 20_000, 20_150 + 99]) expect(await send(at, 10), `at +${at} ms`).toEqual([]);
    expect(await send(20_150 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('a 429 of it empties what is left of the window in force, and moves nothing', async () => {
    const { b, clock, send } = await budget();
    const first = await send(0, 1);
    expect(await send(10_150, 2)).toHaveLength(2);
    clock.now = T0 + 10_400;
    await b.observe(first[0]!.at, { remaining: 0, resetSeconds: 0.01 }, true);
    expect(await send(10_500, 1)).toEqual([]);
    expect(await b.view()).toEqual({ end: T0 + 20_150, left: 0 });
    expect(await send(20_150 + 100, 10)).toHaveLength(10);
  });
});

describe('a late answer of the window in force', () => {
  it("no unit goes after the platform's window may have ended, though the late answer puts its end later", async () => {
    const { b, clock, send, answer, refused } = await budget();
    const [unit] = await send(0, 1);
    // its answer (9 left, 10 s to go) processed 5 s late: the window may end at +15 s as far as
    // that answer tells, and at +10 s as its unit's instant tells
    clock.now = T0 + 5_000;
    await b.observe(unit!.at, answer(unit!.headers));
    // past the platform's end, nothing: a unit now would count in its next window, and so would
    // the next window's of ours
    expect(await send(9_950, 5)).toEqual([]);
    expect(await send(10_050, 9)).toEqual([]);
    // the next window opens after the latest end the answers allow
    expect(await send(15_099, 1)).toEqual([]);
    expect(await send(15_100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });
});

describe('Redis loses the hash while the platform still counts its window', () => {
  it('a replica that heard nothing of it waits a window and a margin: 10 per platform window, not 16', async () => {
    const { b, clock, send, refused } = await budget();
    expect(await send(0, 6)).toHaveLength(6);
    clock.now = T0 + 3_000;
    await redis.del(b.key);
    // a replica that has heard nothing of this window (just started)
    const other = new KeyBudget(redis, b.key, LIMIT, () => clock.now);
    expect(await send(3_000, 10, other)).toEqual([]);
    // the platform's window ends at +10 s; ours is known to be over at +3 s + 10.1 s, the next after
    // the Reset's resolution
    expect(await send(13_100 + 99, 10, other)).toEqual([]);
    expect(await send(13_100 + 100, 10, other)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('a replica that heard of the window in force waits for its end instead: no 429, the next window whole', async () => {
    const { b, clock, send, answer, refused } = await budget();
    const before = await send(0, 10);
    clock.now = T0 + 200;
    await b.observe(before[9]!.at, answer(before[9]!.headers));
    await redis.del(b.key);
    expect(await send(4_000, 10)).toEqual([]);
    // its answer, processed 200 ms late, puts the end at +10.2 s at the latest
    expect(await send(10_000 + 200 + 99, 10)).toEqual([]);
    expect(await send(10_000 + 200 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });
});
