// The Lua scripts of a key's request budget (budget.ts), on one Redis hash shared by every
// replica: TAKE a unit, SEND (a unit's request goes out now), OBSERVE an answer. What the hash
// holds and why: budget.ts. Registered once per client (store/lua.ts) and sent by digest.
import type { Result } from 'ioredis';

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
    /** SEND: TAKE's arguments, then the write bound (ms) of a window no answer has told, then the
     *  instant the unit was taken: the unit's request goes out now.
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
      writeBoundMs: number,
      takenAt: number,
    ): Result<[number, number, number], Context>;
  }
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
// cost reads their share. A take that opens a window clears `sent` and `told`: none of its requests
// has gone, no answer of it has come.
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
    redis.call('HDEL', key, 'sent', 'told')
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

// KEYS[1]; ARGV as TAKE's, then the write bound of a window no answer has told (ms), then the
// instant the unit was taken. The request of that unit goes out now. The platform's window starts
// at the first request it receives, not when our window opened, nor at the mark: the window's
// first send (`sent` none yet) moves its earliest end to no earlier than now + the window, so no
// window of ours opens while the platform's may still be in force, however long the unit waited
// between its take and its send. Until an answer of the window has told its end (`told`), any of
// its requests may be the first the platform receives (the one marked first written late, or lost
// before the platform counted it): each is written within the write bound or not at all, and moves
// the latest end to no earlier than its write-by + the margin (its way to the platform) + the
// window. A unit is stale when its window is no longer the one in force (taken before `start`, or
// no hash: Redis lost it), when that window is over (now from the margin after its latest end on),
// or when a request of it has gone and its earliest end is within the margin (the request may reach the platform after the window ended and count in the
// next, which our count would not hold): a stale unit is not sent on its window's count; it takes
// a unit of the window in force instead (take(): it may open one, or wait, and a read spends a
// credit again), and that unit goes now. The mark holds only if the request is written to the
// connection by the margin before the window's earliest end (as it stands after the mark), and,
// while no answer has told the window's end, within the write bound: the script returns the ms
// left until then, and a request not written within them is not written at all (spend.ts: its
// process was too slow to go on, it would reach the platform after the window ended, or after the
// latest end the mark counted on). Returns {0, the instant of the unit sent, the ms it must be
// written within} or take()'s wait.
const SEND = `
${now(7)}${TAKE_FN}
local win = tonumber(ARGV[2])
local margin = tonumber(ARGV[3])
local after = tonumber(ARGV[4])
local bound = tonumber(ARGV[8])
local taken = tonumber(ARGV[9])
local function mark(unit)
  local m = redis.call('HMGET', KEYS[1], 'end', 'early', 'sent', 'told')
  local e = tonumber(m[1]) or 0
  local early = tonumber(m[2]) or e
  if m[4] then return {0, unit, early - margin - now} end
  if not tonumber(m[3]) then
    early = math.max(early, now + win)
    redis.call('HSET', KEYS[1], 'sent', now)
  end
  local within = math.min(early - margin - now, bound)
  e = math.max(e, early, now + within + margin + win)
  redis.call('HSET', KEYS[1], 'end', e, 'early', early)
  redis.call('PEXPIRE', KEYS[1], ${KEPT_MS})
  return {0, unit, within}
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
// nothing more. An answer of the window in force sets both ends from its Reset, and marks the
// window told (`told`: its end no longer hangs on which of its requests reached the platform
// first; a 429's Reset may be of the platform's next window, so it tells nothing). With no hash, no
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
  redis.call('HSET', KEYS[1], 'told', 1)
end
redis.call('HSET', KEYS[1], 'end', e, 'early', math.min(early or e, e), 'left', left or limit)
redis.call('PEXPIRE', KEYS[1], ${KEPT_MS})
return e
`;

export const BUDGET_COMMANDS = [
  { name: 'pipescalerBudgetTake', numberOfKeys: 1, lua: TAKE },
  { name: 'pipescalerBudgetObserve', numberOfKeys: 1, lua: OBSERVE },
  { name: 'pipescalerBudgetSend', numberOfKeys: 1, lua: SEND },
] as const;
