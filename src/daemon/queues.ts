// Queue names, job shapes and job options. One "evaluate" queue for the whole fleet; one apply
// queue per API key, so its Worker limiter is that key's platform limit and a 429 pauses only it.
import type { JobsOptions } from 'bullmq';
import type { Direction } from '../policy/types.js';
import { safeName } from './redis-keys.js';

export const EVALUATE_QUEUE = 'evaluate';

export function applyQueueName(keyId: string): string {
  return `apply-${safeName(keyId)}`;
}

export interface EvaluateJob {
  readonly pipe: string;
  /** The tick instant (epoch ms): decide() reads this clock, not the wall clock. */
  readonly tickAt: number;
}

/** A turn on the key's queue for one pipe: it reads the pipe when a read is due (first contact,
 *  reconcile), else sends the pipe's newest stored desire. The name is for queue listings. */
export type ApplyJobName = 'apply' | 'read';

export interface ApplyJob {
  readonly pipe: string;
  readonly tickAt: number;
  /** Made once per job, so every retry of the same change carries the same key. */
  readonly idempotencyKey: string;
  readonly direction: Direction;
}

/** Deterministic per pipe and tick: every replica enqueues the same id and BullMQ keeps one. */
export function evaluateJobId(pipe: string, tickAt: number, suffix = ''): string {
  return `${safeName(pipe)}-${Math.floor(tickAt / 1000)}${suffix}`;
}

/**
 * Work older than this is dropped rather than done: an evaluation left in Redis by a daemon that
 * was down, or a desire nobody has re-decided since. The next tick decides afresh (level-triggered),
 * so dropping loses nothing and avoids a flap to an old window's values.
 */
export const STALE_AFTER_MS = 5 * 60_000;

/** Kept long enough (seconds) that a slower replica's duplicate of the same tick is dropped. */
export const EVALUATE_KEEP_S = 3_600;

export const evaluateJobOptions = (jobId: string): JobsOptions => ({
  jobId,
  removeOnComplete: { age: EVALUATE_KEEP_S },
  removeOnFail: { age: EVALUATE_KEEP_S },
  attempts: 3,
  backoff: { type: 'exponential', delay: 500 },
});

// Lower number = earlier. Scale-ups go first: under a tight limit, capacity matters more than savings.
const PRIORITY: Record<Direction | 'read', number> = { up: 1, read: 2, none: 3, down: 4 };

export const APPLY_ATTEMPTS = 6;

export function applyJobOptions(name: ApplyJobName, pipe: string, direction: Direction): JobsOptions {
  return {
    priority: PRIORITY[name === 'read' ? 'read' : direction],
    // One pending turn per pipe: at most one active and one waiting, and the waiting job reads
    // the newest stored desire when it runs, so a newer decision always wins and a pipe's
    // requests never overlap.
    deduplication: { id: safeName(pipe), keepLastIfActive: true },
    attempts: APPLY_ATTEMPTS,
    backoff: { type: 'exponential', delay: 1_000, jitter: 0.5 },
    removeOnComplete: { age: EVALUATE_KEEP_S, count: 1_000 },
    removeOnFail: { age: 24 * 3_600, count: 1_000 },
  };
}
