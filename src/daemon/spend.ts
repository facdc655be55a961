// Every request of a turn goes through spend(): a unit of the key's shared budget first (or the
// key's queue waits for the next window, the job back in its place with its priority and no
// attempt spent), then the call, then what its answer said of the platform's window.
import { RateLimitError } from 'bullmq';
import { isApiError } from '../api/index.js';
import type { KeyLane } from './context.js';

export async function spend<
  T extends { readonly rateLimit?: { readonly remaining?: number; readonly resetSeconds?: number } | undefined },
>(lane: KeyLane, call: () => Promise<T>, opts: { read?: boolean } = {}): Promise<T> {
  const waitMs = await lane.budget.take(opts.read ? 'read' : 'change');
  if (waitMs !== 0) {
    // No unit (positive), or the key's read share spent until its next credit (negative: at most
    // window / (readShare x requests), 4 s at 10 per 10 s). The queue waits that long and the job
    // goes back to the front of its priority (BullMQ's rate limit), so reads keep their order, the
    // one due longest first (a read that stepped aside to the delayed set came back behind every
    // other and could starve). A read is only taken when no change waits (priorities): a change
    // that comes meanwhile waits for that credit at most.
    await lane.queue.rateLimit(Math.abs(waitMs));
    throw new RateLimitError();
  }
  let res: T;
  try {
    res = await call();
  } catch (err) {
    if (isApiError(err)) await lane.budget.observe(err.rateLimit, err.code === 'API_RATE_LIMITED').catch(() => {});
    throw err;
  }
  await lane.budget.observe(res.rateLimit).catch(() => {});
  return res;
}
