// A pipe whose calls keep failing backs off (docs/architecture.md#a-pipes-lifecycle): pure, its
// state in the pipe's record (failures, retryAt); next-step.ts backingOff reads it.
import type { PipeRecord } from '../model/record.js';

/** The jitter: each delay is stretched by up to half at random, never cut, so that the pipes of
 *  one outage do not retry in step and no retry comes before its doubling's instant. */
const JITTER = 0.5;

/**
 * A call of the pipe failed (5xx, timeout, reset, network, a read's answer that does not parse:
 * what a retry may cure), the `failures`-th in a row: its next attempt (the job's retry, or the
 * next turn an evaluation queues: next-step.ts backingOff) waits `baseMs` (its key's budget window)
 * doubled for each failure in a row, stretched by up to half at random (`draw` in [0, 1)), and
 * never longer than its reconcile period. A failing pipe so spends at most one of its key's units
 * in the window it failed in and in the next, then one every 2, 4, 8... windows: five failing
 * pipes on a key of 10 requests per 10 s take at most 20 of its 60 units in their first minute,
 * and a few a reconcile period after (test/daemon/backoff-budget.test.ts). From a 1 s base, the
 * job's six attempts spent 30 of those 60 units in 31 s. A change whose outcome is unknown counts
 * not: its settle read is its next call.
 */
export function afterCallFailure(
  failures: number,
  now: number,
  reconcileMs: number,
  baseMs: number,
  draw: () => number = Math.random,
): { readonly write: Pick<PipeRecord, 'failures' | 'retryAt'>; readonly delayMs: number } {
  const delayMs = backoffMs(failures, baseMs, reconcileMs, draw);
  return { write: { failures, retryAt: now + delayMs }, delayMs };
}

/** The one backoff formula: `baseMs` doubled for each failure in a row, stretched by up to half
 *  at random, never longer than `capMs`. */
export function backoffMs(failures: number, baseMs: number, capMs: number, draw: () => number = Math.random): number {
  // 2^40 windows is past any reconcile period (and keeps the product finite).
  const doubled = Math.max(1, baseMs) * 2 ** (Math.min(Math.max(failures, 1), 40) - 1);
  return Math.floor(Math.min(doubled * (1 + JITTER * draw()), capMs));
}
