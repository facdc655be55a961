// The one short reason of a decision's outcome: the `reason` of the decisions metric, of the audit
// line, of the history entry and of a notification. Every one of them takes it from here, so a
// change is called the same thing everywhere (docs/decisions.md#the-reason-label-of-the-decisions-metric).
import { SKIP_REASON_CODES, type Decision, type Reason } from './types.js';

/** The skip code of a skip decision: the first of its reasons that is a skip code. */
export function skipCode(d: Pick<Decision, 'reasons'>): string {
  const skip = d.reasons.find((r) => (SKIP_REASON_CODES as readonly string[]).includes(r.code));
  return skip?.code ?? d.reasons[0]?.code ?? 'skip';
}

/** A pipe bound that pushed a value the way the decision moves: a max lowered it on a scale-down,
 *  a min raised it on a scale-up. A bound that only held a move short (a min on a scale-down) is
 *  not its cause. */
const boundCaused = (direction: Decision['direction'], r: Reason): boolean =>
  r.code === 'pipe_bound' && ((direction === 'down' && r.bound === 'max') || (direction === 'up' && r.bound === 'min'));

/** The outcome's reason: the skip code, else what set the target the change moves to. */
export function outcomeReason(d: Pick<Decision, 'action' | 'direction' | 'reasons' | 'windows'>): string {
  if (d.action === 'skip') return skipCode(d);
  if (d.reasons.some((r) => r.code === 'metric_unavailable')) return 'metric_unavailable';
  if (d.reasons.some((r) => boundCaused(d.direction, r))) return 'pipe_bound';
  // A scale-up sent ahead of its window (lead time), or raised by a forecast.
  if (d.direction === 'up' && d.reasons.some((r) => r.code === 'lead_time')) return 'lead_time';
  if (d.direction === 'up' && d.reasons.some((r) => r.code === 'forecast')) return 'forecast';
  return d.windows.length > 0 ? 'window' : 'baseline';
}
