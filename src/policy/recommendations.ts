// The recommendations a pipe keeps for scale-down stabilization, one rule for the daemon and for
// simulate. Stabilization only asks "the highest recommendation of a field within the window"
// (behavior.ts), so a value that a later one equals or beats can never be that answer again: it
// is dropped (a sliding-window maximum). What is left is exact for any window length, and small:
// per field at most one entry per distinct value (replicas: 10), whatever the tick or the window.
// A stored list need not be in time order (a clock stepped back, replicas whose clocks differ), so
// the rule goes by each entry's time, never by its place in the list: an older entry stored after
// a newer one must not take the newer one out of the window with it.
import { SCALING_FIELDS, type ScalingValues } from '../api/index.js';
import type { Decision, PipeView, Policy } from './types.js';

export type Recommendations = PipeView['recommendations'];

/**
 * `list` in time order, without entries older than `keepFrom` and without values a later entry
 * equals or beats. An entry after `now` beats nothing: it does not count until its time
 * (stabilizationFloor), and the one it would beat still does.
 */
export function pruneRecommendations(list: Recommendations, keepFrom: number, now = Infinity): Recommendations {
  const recent = list.filter((r) => r.at >= keepFrom).sort((a, b) => a.at - b.at);
  const out: { at: number; values: ScalingValues }[] = [];
  const best: ScalingValues = {};
  for (let i = recent.length - 1; i >= 0; i--) {
    const r = recent[i];
    if (r === undefined) continue;
    const values: ScalingValues = {};
    let kept = false;
    for (const f of SCALING_FIELDS) {
      const v = r.values[f];
      if (v === undefined) continue;
      const later = best[f];
      if (later !== undefined && later >= v) continue;
      values[f] = v;
      if (r.at <= now) best[f] = v;
      kept = true;
    }
    if (kept) out.push({ at: r.at, values });
  }
  return out.reverse();
}

/** The list after a decision at `now`: a skip keeps it as is; otherwise the recommendation joins. */
export function recommendationsAfter(
  policy: Pick<Policy, 'behavior'>,
  now: number,
  previous: Recommendations,
  decision: Pick<Decision, 'action' | 'recommendation'>,
): Recommendations {
  if (decision.action === 'skip') return previous;
  const keepFrom = now - policy.behavior.scaleDown.stabilizationMs;
  const added =
    Object.keys(decision.recommendation).length > 0
      ? [...previous, { at: now, values: decision.recommendation }]
      : previous;
  return pruneRecommendations(added, keepFrom, now);
}
