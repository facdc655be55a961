// How fast a pipe may follow its recommendation, per field and per direction (a field going up
// vs down): scale-down stabilization first (it changes where the field is heading), then the
// cooldown of that direction (it holds the field), then maxStep (it shortens the move).
// A field whose applied value is unknown has nothing to step from or hold at: it takes the
// recommendation as is.
import type { ScalingField, ScalingValues } from '../api/index.js';
import type { Behavior, PipeView, Reason } from './types.js';
import { formatDuration } from './windows.js';

export type BehaviorView = Pick<PipeView, 'applied' | 'lastChange' | 'recommendations'>;

export interface BehaviorResult {
  readonly desired: ScalingValues;
  readonly reasons: Reason[];
}

/** Highest recommendation for `field` in [now - windowMs, now], the current one included. */
export function stabilizationFloor(
  recommendations: BehaviorView['recommendations'],
  field: ScalingField,
  now: number,
  windowMs: number,
  current: number,
): number {
  let floor = current;
  for (const r of recommendations) {
    const v = r.values[field];
    if (v !== undefined && r.at >= now - windowMs && r.at <= now && v > floor) floor = v;
  }
  return floor;
}

/** Milliseconds of cooldown left after a change at `last` (0 when none or over). */
export function cooldownRemaining(last: number | undefined, cooldownMs: number, now: number): number {
  if (last === undefined) return 0;
  return Math.max(0, last + cooldownMs - now);
}

function stepField(
  behavior: Behavior,
  now: number,
  view: BehaviorView,
  field: ScalingField,
  applied: number,
  recommended: number,
  reasons: Reason[],
): number {
  const up = recommended > applied;
  const dirName = up ? 'scale-up' : 'scale-down';
  let target = recommended;

  if (!up) {
    const { stabilizationMs } = behavior.scaleDown;
    const floor = stabilizationFloor(view.recommendations, field, now, stabilizationMs, recommended);
    if (floor > recommended) {
      target = Math.min(floor, applied);
      const why = `highest recommendation in the last ${formatDuration(stabilizationMs)} is ${floor}`;
      reasons.push({
        code: 'stabilization',
        field,
        message:
          target === applied
            ? `${field} stays at ${applied} instead of going down to ${recommended}: ${why}`
            : `${field} goes down to ${target}, not ${recommended}: ${why}`,
      });
      if (target === applied) return applied;
    }
  }

  const dir = up ? behavior.scaleUp : behavior.scaleDown;
  const remaining = cooldownRemaining(up ? view.lastChange.up : view.lastChange.down, dir.cooldownMs, now);
  if (remaining > 0) {
    reasons.push({
      code: 'cooldown',
      field,
      message: `${field} ${dirName} ${applied} -> ${target} held: ${dirName} cooldown ${formatDuration(dir.cooldownMs)}, ${formatDuration(remaining)} remaining`,
    });
    return applied;
  }

  const step = dir.maxStep[field];
  if (step !== undefined && Math.abs(target - applied) > step) {
    const limited = up ? applied + step : applied - step;
    reasons.push({
      code: 'max_step',
      field,
      message: `${field} ${dirName} ${applied} -> ${target} limited to ${limited}: ${dirName} maxStep ${step}`,
    });
    return limited;
  }
  return target;
}

/** The values the pipe should move to now, for the given fields of the recommendation. */
export function applyBehavior(
  behavior: Behavior,
  now: number,
  view: BehaviorView,
  recommendation: ScalingValues,
  fields: readonly ScalingField[],
): BehaviorResult {
  const desired: ScalingValues = {};
  const reasons: Reason[] = [];
  for (const field of fields) {
    const recommended = recommendation[field];
    if (recommended === undefined) continue;
    const applied = view.applied[field];
    desired[field] =
      applied === undefined || applied === recommended
        ? recommended
        : stepField(behavior, now, view, field, applied, recommended, reasons);
  }
  return { desired, reasons };
}
