// Overrides: an operator's (or onDrift's) values for some fields, standing in for the policy's
// target until they expire. Pure: the values in force at an instant, ramp included, and how they
// replace the target in decide(). What an override passes and what it does not
// (docs/decisions.md#overrides): it replaces the schedule's and the metric's target and is not
// smoothed by the policy's behavior (cooldown, stabilization, maxStep; its own --step ramps it)
// nor held by a freeze; the pipe's bounds, the platform's ranges and the pipe's state (skips,
// pauses) still apply. `behavior.overrides: scaleUpOnly` makes every override a floor.
import { SCALING_FIELDS, type ScalingField, type ScalingValues } from '../api/index.js';
import type { Override, OverridesAllowed, Reason } from './types.js';

/** The override's values at `now` (ramp applied), or null when it is not in force. */
export function overrideValuesAt(o: Override, now: number): ScalingValues | null {
  if (now < o.setAt || now >= o.until) return null;
  const out: ScalingValues = {};
  for (const field of SCALING_FIELDS) {
    const target = o.values[field];
    if (target === undefined) continue;
    out[field] = rampValue(o, field, target, now);
  }
  return out;
}

function rampValue(o: Override, field: ScalingField, target: number, now: number): number {
  const step = o.ramp?.step[field];
  const start = o.ramp?.start[field];
  if (o.ramp === undefined || step === undefined || start === undefined || step <= 0) return target;
  // the first step goes at once; one more each `everyMs`
  const moved = step * (Math.floor((now - o.setAt) / o.ramp.everyMs) + 1);
  return target >= start ? Math.min(target, start + moved) : Math.max(target, start - moved);
}

/** "replicas 8, replicaCpuMillicores 1000" */
export function describeValues(values: ScalingValues): string {
  return SCALING_FIELDS.filter((f) => values[f] !== undefined)
    .map((f) => `${f} ${values[f]}`)
    .join(', ');
}

/**
 * The target with the override's fields put in (decide() then clamps to bounds and ranges), and
 * the reasons that say so. `fields`: those the pipe's kind takes. A floor (or any override under
 * scaleUpOnly) only raises a field.
 */
export function overrideTarget(
  o: Override | undefined,
  allowed: OverridesAllowed,
  now: number,
  target: ScalingValues,
  fields: readonly ScalingField[],
): { values: ScalingValues; fields: ScalingField[]; reasons: Reason[] } {
  const values = o === undefined ? null : overrideValuesAt(o, now);
  if (o === undefined || values === null) return { values: target, fields: [], reasons: [] };
  const out: ScalingValues = { ...target };
  const taken: ScalingField[] = [];
  const reasons: Reason[] = [];
  const floor = o.mode === 'floor' || allowed === 'scaleUpOnly';
  const who = o.source === 'manual' ? 'a change made by hand' : 'override';
  for (const field of fields) {
    const v = values[field];
    if (v === undefined) continue;
    const policy = target[field];
    if (floor && policy !== undefined && policy >= v) continue;
    out[field] = v;
    taken.push(field);
    const ramp = v !== o.values[field] ? ` (ramping to ${o.values[field]})` : '';
    const kind = floor ? 'floor' : 'sets';
    reasons.push({
      code: 'override',
      field,
      message: `${who} ${kind} ${field} ${v}${ramp} until ${new Date(o.until).toISOString()}: ${o.reason}`,
    });
  }
  return { values: out, fields: taken, reasons };
}
