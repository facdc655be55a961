// The request budget of one API key, shared by every replica through one Redis hash and paced to
// the platform's own window as its answers report it (X-RateLimit-Remaining, X-RateLimit-Reset).
// Every request of the daemon takes one unit first (spend.ts); no unit, no request.
//
// The platform counts a fixed window per key that starts at the first request after the last
// window ended. The hash holds our view of it (epoch ms, Redis clock): `start`, the instant a take
// opened it (its id); `end`, the latest the platform's window may end; `early`, the earliest; and
// `left`; `sent`, the instant the window's first request went out (none yet: absent). A take after
// `end` opens a new window of ours, one from the margin before `early` on waits for it. Every
// request is marked as it goes out (SEND): the window's first moves both ends to no earlier than its
// send + the window, since the platform's window starts at the first request it receives, however
// long after its take the unit was sent; a unit whose window is over by then (or about to be) is
// stale, and takes a unit of the window in force instead (or waits). Every answer comes with its
// unit's instant: one of the window in force corrects the ends and what is left from its headers,
// so the phase and the count follow the platform's, whoever else spent from the same key; one of
// an older window (a unit taken before `start`) moves nothing.
//
// No hash means nothing is known of the platform's window: a new key, or Redis lost its data while
// the platform still counts what was sent. Then nothing goes for a window and a margin: any window
// the platform had in force ends within it, and any request of a unit taken before has reached
// the platform; the next window is whole and no 429 comes of it. What one replica heard of a
// window's end is no shorter way: another replica may have opened a later window since, which
// the lost hash alone knew of. The hash is kept a day after its last use, so an idle key is not a
// new one.
import type { Result } from 'ioredis';
import { defineLua } from '../store/lua.js';
import type { RedisClient } from '../store/redis-connection.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** TAKE: key, limit, window ms, margin ms before the end, margin ms after it, read share, '1' for a
     *  read, the instant ('' for Redis' clock): [0 or the ms to wait, the take's instant]. */
    pipescalerBudgetTake(
      key: string,
      requests: number,
      perMs: number,
      marginMs: number,
      afterEndMs: number,
      readShare: number,
      read: '0' | '1',
      now: number | '',
    ): Result<[number, number], Context>;
    /** OBSERVE: key, remaining, reset ms, limit, window ms, '1' for a 429, the instant its unit was
     *  taken, the instant ('' for Redis' clock): the window's end when the answer was of the window
     *  in force, else 0. */
    pipescalerBudgetObserve(
      key: string,
      remaining: number,
      resetMs: number,
      requests: number,
      perMs: number,
      rateLimited: '0' | '1',
      takenAt: number,
      now: number | '',
    ): Result<number, Context>;
    /** SEND: TAKE's arguments, then the instant the unit was taken: the unit's request goes out now.
     *  [0, the instant of the unit sent (its own, or a unit of the window in force taken instead of
     *  a stale one), the ms from now within which its request must be written] or [the ms to wait,
     *  the instant, 0]. */
    pipescalerBudgetSend(
      key: string,
      requests: number,
      perMs: number,
      marginMs: number,
      afterEndMs: number,
      readShare: number,
      read: '0' | '1',
      now: number | '',
      takenAt: number,
    ): Result<[number, number, number], Context>;
  }
}

/** No request marked nor written in the last `margin` ms before a window's earliest end (a unit's
 *  instant plus its answer's Reset: early by the unit's request's way to the platform): a request
 *  written then may reach the platform after the window ended and count in the next one. Its way
 *  from the write to the platform is what the margin covers; the time from its mark to its write is
 *  checked (send(), inTime()). 1 % of the window, 25 ms at least. */
export function marginMs(perMs: number): number {
  return Math.max(25, Math.round(perMs * 0.01));
}

/** The Reset header's resolution: seconds with two decimals (docs/platform-api.md). */
export const RESET_RESOLUTION_MS = 10;

/**
 * None before `afterEndMs` after the window's latest end as the answers report it. That end is
 * never early by more than the Reset's rounding (it is the answer's processing plus its Reset, and
 * the platform counted it earlier), so the Reset's resolution suffices: 1 % of the window, 10 ms at
 * least. (25 ms, the other margin's floor, cost a compressed 1-s window 2.5 % of the key's rate.)
 */
export function afterEndMs(perMs: number): number {
  return Math.max(RESET_RESOLUTION_MS, Math.round(perMs * 0.01));
}

/** A 429's or an answer's X-RateLimit-Reset beyond this is not believed: the window instead. */
export function maxResetMs(perMs: number): number {
  return Math.min(2 * perMs, 60_000);
}

/**
 * Seconds from X-RateLimit-Reset, bounded: at most twice the key's window and 60 s; a larger or
 * missing/unparsable value is the window (an epoch time read as seconds froze a key for decades).
 */
export function boundedResetMs(resetSeconds: number | undefined, perMs: number): { ms: number; valid: boolean } {
  if (resetSeconds === undefined || !Number.isFinite(resetSeconds) || resetSeconds < 0)
    return { ms: perMs, valid: false };
  const ms = Math.ceil(resetSeconds * 1000);
  return ms > maxResetMs(perMs) ? { ms: perMs, valid: false } : { ms: Math.max(1, ms), valid: true };
}

/** How long a key's hash is kept after its last take or answer: a day, so that an idle key's next
 *  request is not taken for a new key's (which waits a window). */
const KEPT_MS = 86_400_000;

// A script's instant: Redis' clock, one for every replica; a budget given a clock of its own (tests)
// passes its instant as the script's last argument instead.
const now = (arg: number) => `local now = tonumber(ARGV[${arg}])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

// The take, shared by TAKE and SEND: key, the instant, limit, window ms, margin ms before the end,
// margin ms after the end, read share, true for a read. Returns {wait, instant}: wait 0 when a unit was taken at that instant (its answer gives it
// back to OBSERVE), else the ms to wait (negative: a read whose share is spent, changes may go).
// Reads earn share x limit credits per window's length of time (`rc` as of `rt`), at most one
// window's worth plus one, so the share holds on average, not in bursts; by time, not per window
// opened, so the gaps between the platform's windows (the margins, the answers' latency) do not
// cost reads their share. A take that opens a window clears `sent`: none of its requests has gone.
// With no hash, the window the take writes counts as sent (its end is already the latest any
// window of the platform's may have): no send moves it.
const TAKE_FN = `
local function take(key, now, limit, win, margin, after, shareRatio, read)
  local h = redis.call('HMGET', key, 'end', 'left', 'rc', 'rt', 'early')
  local e = tonumber(h[1]) or 0
  local left = tonumber(h[2]) or 0
  local early = tonumber(h[5]) or e
  local share = shareRatio * limit
  local rc = tonumber(h[3]) or (share + 1)
  local rt = tonumber(h[4]) or now
  rc = math.min(rc + share * math.max(0, now - rt) / win, share + 1)
  if not h[1] then
    local e0 = now + margin + win
    redis.call('HSET', key, 'end', e0, 'early', e0, 'left', 0, 'rc', rc, 'rt', now, 'start', now, 'sent', now)
    redis.call('PEXPIRE', key, ${KEPT_MS})
    return {e0 + after - now, now}
  end
  local opened = false
  if now >= e + after then
    opened = true
    e = now + win
    early = e
    left = limit
  elseif now >= early - margin then
    return {e + after - now, now}
  end
  if left <= 0 then return {e + after - now, now} end
  if read and rc < 1 then return {-math.max(1, math.ceil((1 - rc) * win / share)), now} end
  if read then rc = rc - 1 end
  redis.call('HSET', key, 'end', e, 'early', early, 'left', left - 1, 'rc', rc, 'rt', now)
  if opened then
    redis.call('HSET', key, 'start', now)
    redis.call('HDEL', key, 'sent')
  end
  redis.call('PEXPIRE', key, ${KEPT_MS})
  return {0, now}
end
`;

// KEYS[1] budget hash; ARGV limit, window ms, margin ms before the end, margin ms after the end,
// read share, 1 for a read, the instant ('' for Redis' clock). Returns take()'s {wait, instant}.
const TAKE = `
${now(7)}${TAKE_FN}
return take(KEYS[1], now, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]),
  tonumber(ARGV[5]), ARGV[6] == '1')
`;

// KEYS[1]; ARGV as TAKE's, then the instant the unit was taken. The request of that unit goes out
// now. The platform's window starts at the first request it receives, not when our window opened:
// the window's first send (`sent` none yet) moves both ends to no earlier than now + the window,
// so no window of ours opens while the platform's may still be in force, however long the unit
// waited between its take and its send. A unit is stale when its window is no longer the one in
// force (taken before `start`, or no hash: Redis lost it), when that window is over (now from
// the margin after its latest end on), or when a request of it has gone and its earliest end is
// within the margin (the request may reach the platform after the window ended and count in the
// next, which our count would not hold): a stale unit is not sent on its window's count; it takes
// a unit of the window in force instead (take(): it may open one, or wait, and a read spends a
// credit again), and that unit goes now. The mark holds only if the request is written to the
// connection by the margin before the window's earliest end (as it stands after the mark): the
// script returns the ms left until then, and a request not written within them is not written at
// all (spend.ts: its process was too slow to go on, it would reach the platform after the window
// ended). Returns {0, the instant of the unit sent, the ms it must be written within} or take()'s
// wait.
const SEND = `
${now(7)}${TAKE_FN}
local win = tonumber(ARGV[2])
local margin = tonumber(ARGV[3])
local after = tonumber(ARGV[4])
local taken = tonumber(ARGV[8])
local function mark(unit)
  local m = redis.call('HMGET', KEYS[1], 'end', 'early', 'sent')
  local e = tonumber(m[1]) or 0
  local early = tonumber(m[2]) or e
  if not tonumber(m[3]) then
    e = math.max(e, now + win)
    early = math.max(early, now + win)
    redis.call('HSET', KEYS[1], 'end', e, 'early', early, 'sent', now)
    redis.call('PEXPIRE', KEYS[1], ${KEPT_MS})
  end
  return {0, unit, early - margin - now}
end
local h = redis.call('HMGET', KEYS[1], 'end', 'early', 'start', 'sent')
local e = tonumber(h[1])
if e then
  local early = tonumber(h[2]) or e
  local first = tonumber(h[4])
  if taken >= (tonumber(h[3]) or 0) and now < e + after and (not first or now < early - margin) then
    return mark(taken)
  end
end
local r = take(KEYS[1], now, tonumber(ARGV[1]), win, margin, after, tonumber(ARGV[5]), ARGV[6] == '1')
if r[1] == 0 then return mark(r[2]) end
return {r[1], r[2], 0}
`;

// KEYS[1]; ARGV remaining (-1 unknown), reset ms (-1 unknown), limit, window ms, 1 for a 429, the
// instant its unit was taken, the instant ('' for Redis' clock). An answer of a unit
// taken before the window in force opened is an older window's: it never moves the window nor
// opens one (processed late, now + Reset would place the old window's end inside the new one, and
// the next take would open a window the platform does not have); a 429 of it empties what is left,
// nothing more. An answer of the window in force sets both ends from its Reset. With no hash, no
// answer can say which window its unit counted in: none is kept (the next take waits a window).
const OBSERVE = `
${now(7)}local remaining = tonumber(ARGV[1])
local reset = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local win = tonumber(ARGV[4])
local taken = tonumber(ARGV[6])
local h = redis.call('HMGET', KEYS[1], 'end', 'left', 'start', 'early')
local e = tonumber(h[1])
local left = tonumber(h[2])
local early = tonumber(h[4]) or e
if not e or taken < (tonumber(h[3]) or 0) then
  if not e or ARGV[5] ~= '1' then return 0 end
  redis.call('HSET', KEYS[1], 'left', 0)
  return 0
end
if reset < 0 then
  if ARGV[5] ~= '1' then return 0 end
  e = math.max(e, now + win)
  left = 0
elseif ARGV[5] == '1' then
  e = math.max(e, now + reset)
  left = 0
else
  e = now + reset
  early = taken + reset
  if remaining >= 0 then left = math.min(left or remaining, remaining) end
end
redis.call('HSET', KEYS[1], 'end', e, 'early', math.min(early or e, e), 'left', left or limit)
redis.call('PEXPIRE', KEYS[1], ${KEPT_MS})
return e
`;

const BUDGET_COMMANDS = [
  { name: 'pipescalerBudgetTake', numberOfKeys: 1, lua: TAKE },
  { name: 'pipescalerBudgetObserve', numberOfKeys: 1, lua: OBSERVE },
  { name: 'pipescalerBudgetSend', numberOfKeys: 1, lua: SEND },
] as const;

export interface BudgetLimit {
  readonly requests: number;
  readonly perMs: number;
}

/** A take's result: `waitMs` 0 when a unit was taken at `at`. */
export interface BudgetTake {
  readonly waitMs: number;
  readonly at: number;
}

/** A send's result: as a take's, and when `waitMs` is 0 the instant (on the budget's own clock,
 *  `KeyBudget.localNow()`) by which its request must be written, or not at all. */
export interface BudgetSend extends BudgetTake {
  readonly writeBy: number;
}

export interface BudgetAnswer {
  readonly remaining?: number | undefined;
  readonly resetSeconds?: number | undefined;
}

/** One key's budget. `limit` may change on reload (set it again). */
export class KeyBudget {
  /** Share of the budget reads may take (evaluate.readShare). */
  public readShare = 0.25;

  constructor(
    /** The connection the budget's scripts run on (the daemon's). */
    readonly redis: RedisClient,
    readonly key: string,
    public limit: BudgetLimit,
    /** Absent: Redis' clock (the daemon). Tests drive the budget on a clock of their own. */
    private readonly clock?: () => number,
  ) {
    defineLua(redis, BUDGET_COMMANDS);
  }

  /** The take and send scripts' arguments after the key: the limit, its margins, the read share,
   *  the unit's kind and the test clock. */
  private unitArgs(kind: 'change' | 'read') {
    const { requests, perMs } = this.limit;
    return [
      requests,
      perMs,
      marginMs(perMs),
      afterEndMs(perMs),
      this.readShare,
      kind === 'read' ? '1' : '0',
      this.clock?.() ?? '',
    ] as const;
  }

  /** waitMs 0: a unit was taken at `at` (Redis' clock), the request may go now and its answer is
   *  observed with that instant. Else the ms to wait before asking again; negative for a read whose
   *  share is spent while changes could still go. */
  async take(kind: 'change' | 'read' = 'change'): Promise<BudgetTake> {
    const [waitMs, at] = await this.redis.pipescalerBudgetTake(this.key, ...this.unitArgs(kind));
    return { waitMs, at };
  }

  /**
   * Right before the request of the unit taken at `takenAt` goes out, however long after the take
   * (a process slow to go on, a unit held): the window's first send moves its end to the send + the
   * window, where the platform's window ends. A stale unit (its window over, or within the
   * margin of its end with a request gone) is not sent on that window's count: a unit of the window
   * in force is taken instead, the same kind. waitMs 0: send now and observe the answer with `at`
   * (the unit's, or the one taken instead), provided the request is written by `writeBy`
   * (`inTime()`: checked right before its first byte is written); else no request: wait as take()
   * says.
   */
  async send(takenAt: number, kind: 'change' | 'read' = 'change'): Promise<BudgetSend> {
    // Read before the script runs, so the time from here to the write bounds the time from the mark
    // (in Redis, later) to the write.
    const asked = this.localNow();
    const [waitMs, at, writeWithinMs] = await this.redis.pipescalerBudgetSend(
      this.key,
      ...this.unitArgs(kind),
      takenAt,
    );
    return { waitMs, at, writeBy: asked + writeWithinMs };
  }

  /** The budget's own clock for a send's `writeBy`: the test clock, else the process' monotonic one. */
  localNow(): number {
    return this.clock?.() ?? performance.now();
  }

  /** The request of this send may still be written: its window will not be over when it arrives. */
  inTime(unit: BudgetSend): boolean {
    return unit.waitMs === 0 && this.localNow() <= unit.writeBy;
  }

  /** What the answer to the request of the unit taken at `takenAt` said of the platform's window
   *  (any status); a 429 empties the window. Only an answer of the window in force moves it. */
  async observe(takenAt: number, answer: BudgetAnswer | undefined, rateLimited = false): Promise<void> {
    const { requests, perMs } = this.limit;
    const reset = answer?.resetSeconds;
    const resetMs = reset !== undefined && reset * 1000 <= maxResetMs(perMs) ? Math.ceil(reset * 1000) : -1;
    const remaining = answer?.remaining ?? -1;
    if (resetMs < 0 && !rateLimited) return;
    await this.redis.pipescalerBudgetObserve(
      this.key,
      remaining,
      resetMs,
      requests,
      perMs,
      rateLimited ? '1' : '0',
      takenAt,
      this.clock?.() ?? '',
    );
  }

  /** For status and tests: our current view of the window. */
  async view(): Promise<{ end: number; left: number } | null> {
    const [end, left] = await this.redis.hmget(this.key, 'end', 'left');
    return end === null || left === null ? null : { end: Number(end), left: Number(left) };
  }
}
