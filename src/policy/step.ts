// One evaluation step, shared by the daemon and simulate() so a simulated timeline is the daemon's
// timeline: decide() at an instant, the recommendations that decision leaves for scale-down
// stabilization, and what a sent change does to the pipe's record (its values and the stamp of
// each direction it moved, which the cooldowns read).
import type { ScalingValues } from '../api/index.js';
import { changeDirections, decide } from './decide.js';
import { recommendationsAfter, type Recommendations } from './recommendations.js';
import type { Decision, PipeView, Policy } from './types.js';

export interface Step {
  readonly decision: Decision;
  readonly recommendations: Recommendations;
}

/** decide() at `now`, and the pipe's recommendations after it. */
export function evaluateStep(policy: Policy, now: number, view: PipeView): Step {
  const decision = decide(policy, now, view);
  return { decision, recommendations: recommendationsAfter(policy, now, view.recommendations, decision) };
}

export interface Changed {
  readonly applied: ScalingValues;
  readonly lastChange: PipeView['lastChange'];
  readonly moves: { readonly up: boolean; readonly down: boolean };
}

/**
 * The pipe after `changes` were applied at `now`: the values, and `lastChange` stamped for each
 * direction the change moved a field in (both when one change moves fields both ways).
 * `reported` is what the platform answered, when it did (the daemon); simulate() has none.
 */
export function afterChange(
  applied: ScalingValues,
  lastChange: PipeView['lastChange'],
  changes: ScalingValues,
  now: number,
  reported?: ScalingValues,
): Changed {
  const moves = changeDirections(applied, changes);
  return {
    applied: reported ?? { ...applied, ...changes },
    lastChange: { ...lastChange, ...(moves.up ? { up: now } : {}), ...(moves.down ? { down: now } : {}) },
    moves,
  };
}
