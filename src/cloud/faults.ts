// Fault injection: per operation (and, where a rule names them, for some pipes only), a chance of
// latency and of one failure (reset, 500, 503, 429).
import type { Operation } from '../api/index.js';
import type { FaultConfig, FaultRule } from './fixtures-schema.js';

export type FaultKind = 'reset' | 'error500' | 'error503' | 'error429' | 'latency' | 'late' | 'stuck';
export const FAULT_KINDS: readonly FaultKind[] = [
  'reset',
  'error500',
  'error503',
  'error429',
  'latency',
  'late',
  'stuck',
];

export interface FaultPlan {
  readonly delayMs: number;
  readonly failure: 'reset' | 'error500' | 'error503' | 'error429' | null;
  /** Hold the request until the client gives up, at most this long, then carry it out. */
  readonly lateMaxMs: number | null;
  /** The change the request makes never takes effect. */
  readonly stuck: boolean;
}

const NONE: FaultPlan = { delayMs: 0, failure: null, lateMaxMs: null, stuck: false };
const FAILURES = ['reset', 'error500', 'error503', 'error429'] as const;

/**
 * What to inject for one request. Draws from `random` in a fixed order so a test can script it:
 * one draw for latency (and one for its length) when the rule has latency, then one draw that
 * picks at most one failure, the probabilities stacked in the order reset, 500, 503, 429; then,
 * when no failure was picked, one draw for `late` and one for `stuck` when the rule has them.
 */
export function planFaults(faults: FaultConfig, op: Operation, random: () => number, pipeId?: string): FaultPlan {
  const rule: FaultRule | undefined = faults[op] ?? faults.default;
  if (!rule) return NONE;
  // a rule for some pipes only: a request naming no pipe, or another, gets none (and draws nothing)
  if (rule.pipes && !rule.pipes.some((id) => id.toLowerCase() === pipeId?.toLowerCase())) return NONE;
  let delayMs = 0;
  if (rule.latency && random() < rule.latency.probability) {
    const { minMs, maxMs } = rule.latency;
    delayMs = minMs + random() * (maxMs - minMs);
  }
  let failure: FaultPlan['failure'] = null;
  if (FAILURES.some((k) => (rule[k] ?? 0) > 0)) {
    const r = random();
    let edge = 0;
    for (const k of FAILURES) {
      edge += rule[k] ?? 0;
      if (r < edge) {
        failure = k;
        break;
      }
    }
  }
  const answered = failure === null;
  const lateMaxMs = answered && rule.late && random() < rule.late.probability ? rule.late.maxMs : null;
  const stuck = answered && rule.stuck !== undefined && rule.stuck > 0 && random() < rule.stuck;
  return delayMs === 0 && failure === null && lateMaxMs === null && !stuck
    ? NONE
    : { delayMs, failure, lateMaxMs, stuck };
}
