// A pipe whose calls keep failing backs off (docs/architecture.md#a-pipes-lifecycle): pure, its
// state in the pipe's record (failures, retryAt); lifecycle.ts backingOff reads it.
import { retryDelayMs } from './queues.js';
import type { PipeRecord } from './state-store.js';

/**
 * A call of the pipe failed (5xx, timeout, reset, network: what a retry may cure), the
 * `failures`-th in a row: its next attempt waits exponentially longer (1 s, 2 s, 4 s... with
 * jitter, `draw` in [0, 1)), never longer than its reconcile period, and no new turn is queued
 * before it (lifecycle.ts backingOff). Five pipes failing so spend a few requests a period, not
 * the key's budget. A change whose outcome is unknown counts not: its settle read is its next call.
 */
export function afterCallFailure(
  failures: number,
  now: number,
  reconcileMs: number,
  draw: () => number = Math.random,
): { readonly write: Pick<PipeRecord, 'failures' | 'retryAt'>; readonly delayMs: number } {
  // 2^40 s is past any reconcile period (and keeps the jittered product finite).
  const delayMs = Math.min(retryDelayMs(Math.min(failures, 40), draw), reconcileMs);
  return { write: { failures, retryAt: now + delayMs }, delayMs };
}
