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

function budget() {
  const clock = { now: T0 };
  const b = new KeyBudget(redis, `${prefix}:ps:budget:k${n++}`, LIMIT, () => clock.now);
  const platform = new FixedWindowLimiter(LIMIT, () => clock.now);
  const refused: number[] = [];
  /** `count` takes at `at` ms after T0; each unit's request reaches the platform at once. */
  const send = async (at: number, count: number) => {
    clock.now = T0 + at;
    const units: (BudgetTake & { headers: Record<string, string> })[] = [];
    for (let i = 0; i < count; i++) {
      const unit = await b.take();
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
    const { b, clock, send, refused } = budget();
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
    const { b, clock, send } = budget();
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
    const { b, clock, send, answer, refused } = budget();
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
