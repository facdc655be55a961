// Every request of a turn goes through spend(): a unit of the key's shared budget first (or the
// key's queue waits for the next window, the job back in its place with its priority and no
// attempt spent), then the send's mark (the window's first send moves its end, where the
// platform's window, which starts at the first request it receives, ends; a unit whose window is
// over by then takes one of the window in force, or the queue waits), then the call, written only
// while the mark holds (a process too busy to write it in time sends nothing: the job goes back to
// its place, UnitExpired), then what its answer said of the platform's window, given with the
// unit's instant so that the budget knows which window the answer belongs to.
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimitError, type Queue } from 'bullmq';
import { isApiError } from '../../api/index.js';
import type { BudgetSend } from './budget.js';
import type { KeyLane } from './lane.js';
import type { RedisClient } from '../store/redis-connection.js';

/**
 * A unit due within this many ms is waited for in the turn, which then sends at once: the queue's
 * wait, a job fetched again and its turn decided again took 10-20 ms past the window's opening
 * (more on a busy process), about 1.5 % of a 1-s window, at every window of a busy key.
 */
export const ARMED_WAIT_MS = 40;
/** The queue's wait ends this much before the unit is due: the turns fetched then are decided and
 *  waiting (ARMED_WAIT_MS) when the window opens. */
export const ARMED_LEAD_MS = 20;

/**
 * The request of a unit was not written by its `writeBy` (the process busy between the budget's
 * mark and the write: a reload parsing a large config, a stall): it would reach the platform after
 * the window it was counted in, and count in the next, which the budget may grant whole. Nothing
 * went out; the unit is spent. A RateLimitError: the job goes back to its place in the queue, its
 * attempts untouched, and takes a unit again.
 */
export class UnitExpired extends RateLimitError {}

/** The check a request of `unit` makes right before it is written (CallOptions.beforeSend): its
 *  mark still holds, or UnitExpired and nothing goes out. */
export function writeCheck(budget: KeyLane['budget'], unit: BudgetSend): () => void {
  return () => {
    if (!budget.inTime(unit)) throw new UnitExpired();
  };
}

export async function spend<
  T extends { readonly rateLimit?: { readonly remaining?: number; readonly resetSeconds?: number } | undefined },
>(lane: KeyLane, call: (beforeSend: () => void) => Promise<T>, opts: { read?: boolean } = {}): Promise<T> {
  const kind = opts.read ? 'read' : 'change';
  let taken = await lane.budget.take(kind);
  // At most twice: a window another turn (or replica) filled meanwhile goes to the queue's wait.
  for (let i = 0; i < 2 && taken.waitMs > 0 && taken.waitMs <= ARMED_WAIT_MS; i++) {
    await sleep(taken.waitMs);
    taken = await lane.budget.take(kind);
  }
  // The request goes out now, whatever time passed since the take: the budget learns of the send
  // (the window's first moves its end) and a stale unit is exchanged for one of the window in force.
  const unit: BudgetSend =
    taken.waitMs === 0 ? await lane.budget.send(taken.at, kind) : { ...taken, writeBy: -Infinity };
  const { waitMs, at } = unit;
  if (waitMs !== 0) {
    // No unit (positive), or the key's read share spent until its next credit (negative: at most
    // window / (readShare x requests), 4 s at 10 per 10 s). The queue waits that long and the job
    // goes back to the front of its priority (BullMQ's rate limit), so reads keep their order, the
    // one due longest first (a read that stepped aside to the delayed set came back behind every
    // other and could starve). A read is only taken when no change waits (priorities): a change
    // that comes meanwhile waits for that credit at most.
    await holdQueue(lane, waitMs > 0 ? Math.max(1, waitMs - ARMED_LEAD_MS) : -waitMs);
    throw new RateLimitError();
  }
  let res: T;
  try {
    res = await call(writeCheck(lane.budget, unit));
  } catch (err) {
    if (isApiError(err)) await lane.budget.observe(at, err.rateLimit, err.code === 'API_RATE_LIMITED').catch(() => {});
    throw err;
  }
  await lane.budget.observe(at, res.rateLimit).catch(() => {});
  return res;
}

/** The pending wake of each queue a hold was put on: when, and its timer. */
const wakes = new WeakMap<Queue, { readonly at: number; readonly timer: NodeJS.Timeout }>();

/**
 * Holds the key's queue for `ms` (BullMQ's rate limit: a job then thrown back with RateLimitError
 * keeps its place and priority), and wakes the queue's Workers when the hold ends. A job sent back
 * into the prioritized set adds no marker to wake a Worker, and a Worker whose fetch is blocked
 * waiting for the next delayed job (a confirmation read queued for its instant, a retry's backoff)
 * sleeps out BullMQ's block timeout, up to 10 s: in the chaos run a key's queue stood idle 10 s
 * after a 389 ms wait for the budget, a change and two settle reads in it. The wake is the marker
 * BullMQ adds for a job that is ready; one that comes while the hold still runs (extended since)
 * waits for the rest of it.
 */
export async function holdQueue(lane: Pick<KeyLane, 'queue' | 'budget'>, ms: number): Promise<void> {
  await lane.queue.rateLimit(ms);
  wakeAfter(lane.queue, lane.budget.redis, ms);
}

function wakeAfter(queue: Queue, redis: RedisClient, ms: number): void {
  const at = Date.now() + ms;
  const pending = wakes.get(queue);
  // an earlier wake finds a hold extended since and waits for the rest of it
  if (pending && pending.at <= at + WAKE_COALESCE_MS) return;
  if (pending) clearTimeout(pending.timer);
  const timer = setTimeout(() => {
    wakes.delete(queue);
    void wake(queue, redis).catch(() => {
      // the queue closed (a reload removed the key, a stop): nothing to wake
    });
  }, ms + WAKE_AFTER_MS);
  timer.unref();
  wakes.set(queue, { at, timer });
}

async function wake(queue: Queue, redis: RedisClient): Promise<void> {
  const left = await redis.pttl(queue.toKey('limiter'));
  if (left > 0) wakeAfter(queue, redis, left);
  else await redis.zadd(queue.toKey('marker'), 0, '0');
}

/** Holds ending within this many ms of each other share one wake. */
const WAKE_COALESCE_MS = 25;
/** The wake follows the hold's end by this much, so the limit has expired in Redis by then. */
const WAKE_AFTER_MS = 2;
