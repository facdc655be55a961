// The request budget of one API key, shared by every replica through one Redis hash and paced to
// the platform's own window as its answers report it (X-RateLimit-Remaining, X-RateLimit-Reset).
// Every request of the daemon takes one unit first (spend.ts); no unit, no request.
//
// The platform counts a fixed window per key that starts at the first request after the last
// window ended. The hash holds our view of it (epoch ms, Redis clock): `start`, the instant a take
// opened it (its id); `end`, the latest the platform's window may end; `early`, the earliest; and
// `left`; `sent`, the instant the window's first request went out (none yet: absent); `told`, set
// once an answer of the window gave its end. A take after `end` opens a new window of ours, one
// from the margin before `early` on waits for it. Every request is marked as it goes out (SEND):
// the window's first moves the earliest end to no earlier than its send + the window, since the
// platform's window starts at the first request it receives, however long after its take the unit
// was sent; a unit whose window is over by then (or about to be) is stale, and takes a unit of the
// window in force instead (or waits). The platform's window starts when that request reaches it,
// after its mark: until an answer tells the window's end, every send (the one marked first may be
// written late, or lost on its way) is written within a bound (writeBoundMs) or not at all, and
// moves the latest end to its write-by + the margin + the window. Every answer comes with its
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
import { defineLua } from '../store/lua.js';
import type { RedisClient } from '../store/redis-connection.js';
import { BUDGET_COMMANDS } from './budget-scripts.js';

/** No request marked nor written in the last `margin` ms before a window's earliest end (a unit's
 *  instant plus its answer's Reset: early by the unit's request's way to the platform): a request
 *  written then may reach the platform after the window ended and count in the next one. Its way
 *  from the write to the platform is what the margin covers; the time from its mark to its write is
 *  checked (send(), inTime()). 1 % of the window, 25 ms at least. */
export function marginMs(perMs: number): number {
  return Math.max(25, Math.round(perMs * 0.01));
}

/**
 * Until an answer of its window has told the window's end, a request is written within this many ms
 * of its mark, or not at all: the platform's window starts when the first of them reaches it, so
 * each such send moves the window's latest end to its write-by + the margin + the window (before,
 * the end counted from the first mark alone: a chaos run's window started 29 ms or more after it
 * on the platform, and two requests of the budget's next window were refused there, 52 in one).
 * A quarter of the window, 250 ms at least (the time from the mark to the write includes getting a
 * connection; 100 ms was passed on a loaded machine). Its cost falls on a window no answer tells
 * while it runs (a busy window's first answer comes well within it and lifts the bound).
 */
export function writeBoundMs(perMs: number): number {
  return Math.max(250, Math.round(perMs * 0.25));
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
   * window, where the platform's window ends at the earliest; until an answer of the window told
   * its end, every send moves its latest end to its write-by + the margin + the window. A stale unit (its window over, or within the
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
      writeBoundMs(this.limit.perMs),
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
