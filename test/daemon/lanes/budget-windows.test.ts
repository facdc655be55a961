// The key's budget against the platform's fixed window (the embedded cloud's limiter) when answers
// come late: an answer belongs to the window its unit was taken in. One of a window already over
// never moves the window in force nor opens a new one; one of the window in force, however late,
// never lets a unit go after the platform's window may have ended. And requests sent after their
// take (a unit that waited, a slow process): the platform's window starts at the first request it
// receives, so the window's first send moves its end, and a unit whose window is over by its send
// takes one of the window in force. The platform's window starts when that request reaches it, after
// its mark: until an answer of the window tells its end, each send moves the latest end to its
// write-by + the margin + the window, and a request the write bound let pass reaches the platform
// inside it (written late, or the first lost on its way). On the real limit (10 per 10 s), on a
// clock of the test's own; each request reaches the platform as it is sent (send(), right after its
// take unless said), its answer observed only where said.
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
      const sent = await sendLater(at, [unit], by);
      units.push(...sent);
    }
    return units;
  };
  /** `count` takes at `at` ms after T0, none sent yet. */
  const takeOnly = async (at: number, count: number, by: KeyBudget = b) => {
    clock.now = T0 + at;
    const units: BudgetTake[] = [];
    for (let i = 0; i < count; i++) {
      const unit = await by.take();
      if (unit.waitMs === 0) units.push(unit);
    }
    return units;
  };
  /** The requests of units taken earlier go out at `at` (each marked as the daemon's spend() does):
   *  those the budget lets go reach the platform, with the instant of the unit they went on. */
  async function sendLater(at: number, units: readonly BudgetTake[], by: KeyBudget = b) {
    clock.now = T0 + at;
    const out: (BudgetTake & { headers: Record<string, string> })[] = [];
    for (const unit of units) {
      const go = await by.send(unit.at);
      if (go.waitMs !== 0) continue;
      const { allowed, headers } = platform.take('key')!;
      if (!allowed) refused.push(at);
      out.push({ ...go, headers });
    }
    return out;
  }
  const answer = (headers: Record<string, string>) => ({
    remaining: Number(headers['x-ratelimit-remaining']),
    resetSeconds: Number(headers['x-ratelimit-reset']),
  });
  /** The unit's request answered at once (`at` ms after T0): the window's end is told. */
  const answered = async (at: number, unit: BudgetTake & { headers: Record<string, string> }) => {
    clock.now = T0 + at;
    await b.observe(unit.at, answer(unit.headers));
  };
  /** A request marked earlier reaches the platform at `at` ms after T0. */
  const arrive = (at: number) => {
    clock.now = T0 + at;
    if (!platform.take('key')!.allowed) refused.push(at);
  };
  return { b, clock, send, takeOnly, sendLater, answer, answered, arrive, refused };
}

describe('an answer of a window already over', () => {
  it('processed late, it neither moves the window in force nor opens a new one: 10 per platform window, not 20', async () => {
    const { b, clock, send, answered, refused } = await budget();
    const first = await send(0, 10);
    expect(first).toHaveLength(10);
    await answered(0, first[0]!);
    // the platform's second window opens with the first of these, at +10.15 s: until +20.15 s
    const second = await send(10_150, 10);
    expect(second).toHaveLength(10);
    await answered(10_150, second[0]!);
    // an answer of the first window (its Reset 10 ms), processed 300 ms late
    clock.now = T0 + 10_450;
    await b.observe(first[9]!.at, { remaining: 0, resetSeconds: 0.01 });
    for (const at of [10_600, 12_000, 20_000, 20_150 + 99]) expect(await send(at, 10), `at +${at} ms`).toEqual([]);
    expect(await send(20_150 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('a 429 of it empties what is left of the window in force, and moves nothing', async () => {
    const { b, clock, send, answered } = await budget();
    const first = await send(0, 1);
    await answered(0, first[0]!);
    const second = await send(10_150, 2);
    expect(second).toHaveLength(2);
    await answered(10_150, second[0]!);
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

  it('a replica that heard of a window waits a window and a margin too: another may have opened a later one', async () => {
    const { b, clock, send, answer, refused } = await budget();
    const other = new KeyBudget(redis, b.key, LIMIT, () => clock.now);
    // the platform's window +0 to +10 s: one request of this replica, 8 of the other
    const [mine] = await send(0, 1);
    expect(await send(0, 8, other)).toHaveLength(8);
    // this replica's answer, processed 500 ms late: as far as it tells, the window ends at +10.5 s
    clock.now = T0 + 500;
    await b.observe(mine!.at, answer(mine!.headers));
    // the other's last request of the window, answered at once: the window ends at +10 s
    const [last] = await send(5_000, 1, other);
    await other.observe(last!.at, answer(last!.headers));
    // so the other replica opens the platform's next window at +10.1 s and fills it (to +20.1 s)
    expect(await send(10_000 + 100, 10, other)).toHaveLength(10);
    // Redis loses the hash: what this replica heard of (+10.5 s) is an older window's end
    clock.now = T0 + 10_200;
    await redis.del(b.key);
    expect(await send(10_200, 10)).toEqual([]);
    expect(await send(10_500 + 100, 10)).toEqual([]);
    // a window and a margin from the first take after the loss, then the Reset's resolution
    expect(await send(10_200 + 10_100 + 99, 10)).toEqual([]);
    expect(await send(10_200 + 10_100 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });
});

describe('a request sent after its take', () => {
  it("the window's first send moves its end: taken at +0, sent at +3 s, nothing more until +13 s", async () => {
    const { b, send, takeOnly, sendLater, answered, refused } = await budget();
    const units = await takeOnly(0, 10);
    expect(units).toHaveLength(10);
    // the requests go out 3 s later: the platform's window is +3 s to +13 s
    const sent = await sendLater(3_000, units);
    expect(sent).toHaveLength(10);
    // as far as the marks tell, it may start as late as a request's write bound (2.5 s) and its
    // way to the platform (the margin, 0.1 s) after them
    expect(await b.view()).toEqual({ end: T0 + 15_600, left: 0 });
    // an answer tells where it ends
    await answered(3_000, sent[0]!);
    expect(await b.view()).toEqual({ end: T0 + 13_000, left: 0 });
    // our window, opened at +0, would have ended at +10 s; the platform's still counts
    expect(await send(10_500, 10)).toEqual([]);
    expect(await send(13_000 + 99, 10)).toEqual([]);
    expect(await send(13_000 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('once an answer told the end, a later send of the same window does not move it', async () => {
    const { b, takeOnly, sendLater, answered, send, refused } = await budget();
    const units = await takeOnly(0, 3);
    const [first] = await sendLater(1_000, units.slice(0, 1));
    await answered(1_000, first!);
    expect(await sendLater(6_000, units.slice(1))).toHaveLength(2);
    expect(await b.view()).toEqual({ end: T0 + 11_000, left: 7 });
    expect(await send(11_099, 1)).toEqual([]);
    expect(await send(11_100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it("a window's first send may come near its end: the platform's window starts with it", async () => {
    const { b, takeOnly, sendLater, send, refused } = await budget();
    const [unit] = await takeOnly(0, 1);
    expect(await sendLater(9_950, [unit!])).toHaveLength(1);
    // no answer: its write bound and its way to the platform counted (2.6 s)
    expect(await b.view()).toEqual({ end: T0 + 22_550, left: 9 });
    expect(await send(10_200, 9)).toHaveLength(9);
    expect(await send(10_300, 1)).toEqual([]);
    // so do those of the nine: any of them may be the first to reach the platform
    expect(await send(22_800 + 99, 10)).toEqual([]);
    expect(await send(22_800 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('a unit of a window that ended before its send is not spent on it: it takes one of the window in force', async () => {
    const { b, clock, takeOnly, sendLater, send, refused } = await budget();
    const [stale] = await takeOnly(0, 1);
    // another replica opens the next window at +10.2 s and sends its ten at once
    const other = new KeyBudget(redis, b.key, LIMIT, () => clock.now);
    expect(await send(10_200, 10, other)).toHaveLength(10);
    // the unit taken at +0 goes out at +10.3 s: the window in force has nothing left, it waits
    expect(await sendLater(10_300, [stale!])).toEqual([]);
    expect(await b.view()).toEqual({ end: T0 + 20_200 + 2_600, left: 0 });
    expect(refused).toEqual([]);
  });

  it('a stale unit sent while the window in force has units left takes one of them', async () => {
    const { b, takeOnly, sendLater, refused } = await budget();
    const [stale] = await takeOnly(0, 1);
    // nobody took anything since: the send at +10.3 s opens the next window on the unit it takes
    const [went] = await sendLater(10_300, [stale!]);
    expect(went!.at).toBe(T0 + 10_300);
    expect(await b.view()).toEqual({ end: T0 + 20_300 + 2_600, left: 9 });
    expect(refused).toEqual([]);
  });

  it('a unit sent within the margin before the end, after a request of its window went, waits for the next window', async () => {
    const { b, takeOnly, sendLater, answered, send, refused } = await budget();
    const units = await takeOnly(0, 2);
    const [first] = await sendLater(0, units.slice(0, 1));
    await answered(0, first!);
    // +9.95 s: it could reach the platform after +10 s and count in its next window
    expect(await sendLater(9_950, units.slice(1))).toEqual([]);
    expect(await b.view()).toEqual({ end: T0 + 10_000, left: 8 });
    expect(await send(10_100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('Redis loses the hash between a take and its send: the send waits a window and a margin, as a take would', async () => {
    const { b, clock, takeOnly, sendLater, send, refused } = await budget();
    const units = await takeOnly(0, 6);
    expect(await sendLater(0, units.slice(0, 3))).toHaveLength(3);
    clock.now = T0 + 3_000;
    await redis.del(b.key);
    expect(await sendLater(4_000, units.slice(3))).toEqual([]);
    // nothing is known of the platform's window: the send wrote the hash, as a take after a wipe
    expect(await b.view()).toEqual({ end: T0 + 4_000 + 10_100, left: 0 });
    expect(await send(14_100 + 99, 10)).toEqual([]);
    expect(await send(14_100 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });
});

describe("the platform's window starts when a request reaches it, after its mark", () => {
  it("the window's first request written 300 ms after its mark: the platform counts from +0.3 s, nothing of ours goes before +10.3 s (nor, with no answer, before +12.9 s)", async () => {
    const { b, clock, takeOnly, sendLater, send, arrive, refused } = await budget();
    const units = await takeOnly(0, 10);
    // the first is marked at +0 (our window's earliest end +10 s), its process busy until +0.3 s
    clock.now = T0;
    const first = await b.send(units[0]!.at);
    expect(first.waitMs).toBe(0);
    clock.now = T0 + 300;
    expect(b.inTime(first)).toBe(true);
    arrive(300);
    // the other nine go at once: the platform's window +0.3 s to +10.3 s holds ten
    expect(await sendLater(300, units.slice(1))).toHaveLength(9);
    // its answers are slow (none yet): +10.15 s is past our window's earliest end and its margin,
    // and inside the platform's window
    expect(await send(10_150, 10)).toEqual([]);
    // each of the ten may have been the first to reach the platform: +0.3 s + 2.5 s + 0.1 s + 10 s
    expect(await send(12_900 + 99, 10)).toEqual([]);
    expect(await send(12_900 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('a request the write bound let pass is written within it; later, it is not written', async () => {
    const { b, clock, takeOnly } = await budget();
    const units = await takeOnly(0, 2);
    clock.now = T0;
    const first = await b.send(units[0]!.at);
    clock.now = T0 + 2_500;
    expect(b.inTime(first)).toBe(true);
    clock.now = T0 + 2_501;
    expect(b.inTime(first)).toBe(false);
  });

  it("the window's first request lost on its way (never counted): the platform's window starts with the next one, at +4 s", async () => {
    const { b, clock, takeOnly, sendLater, send, refused } = await budget();
    const units = await takeOnly(0, 10);
    clock.now = T0;
    // marked and written at +0, reset before the platform counted it
    expect((await b.send(units[0]!.at)).waitMs).toBe(0);
    // the nine others go at +4 s: the platform's window +4 s to +14 s
    expect(await sendLater(4_000, units.slice(1))).toHaveLength(9);
    expect(await send(10_150, 10)).toEqual([]);
    expect(await send(14_000 + 2_600 + 99, 10)).toEqual([]);
    expect(await send(14_000 + 2_600 + 100, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });

  it('once an answer of the window told its end, no bound: a request may be written until the margin before it', async () => {
    const { b, clock, takeOnly, sendLater, answered, send, refused } = await budget();
    const units = await takeOnly(0, 10);
    const [first] = await sendLater(0, units.slice(0, 1));
    await answered(50, first!);
    // its answer at +50 ms: the platform's window ends at +10 s (and at +10.05 s at the latest)
    expect(await b.view()).toEqual({ end: T0 + 10_050, left: 0 });
    clock.now = T0 + 5_000;
    const later = await b.send(units[1]!.at);
    clock.now = T0 + 9_900;
    expect(b.inTime(later)).toBe(true);
    expect(await b.view()).toEqual({ end: T0 + 10_050, left: 0 });
    expect(await send(10_150 - 1, 10)).toEqual([]);
    expect(await send(10_150, 10)).toHaveLength(10);
    expect(refused).toEqual([]);
  });
});
