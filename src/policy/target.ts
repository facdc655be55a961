// From the winning windows (or the baseline) to one number per field.
// Equal-priority winners combine field by field with max. A fixed value counts as the bounds
// {value, value}, so bounds combine as (max of mins, max of maxes): for any applied value a,
// clamp(a, max(l1, l2), max(h1, h2)) = max(clamp(a, l1, h1), clamp(a, l2, h2)), i.e. the combined
// target always resolves to the largest of what each winner alone would resolve to.
// A field no winner sets falls back to the baseline: a window that only raises replicas keeps the
// baseline CPU and memory rather than freezing whatever happens to be applied.
import { SCALING_FIELDS, type ScalingField, type ScalingValues } from '../api/index.js';
import type { FieldTarget, Policy, Reason, Target, Window } from './types.js';
import { describeWindow } from './windows.js';

export interface ResolvedTarget {
  /** The per-field targets in force: winners combined, the baseline for the rest. */
  readonly target: Target;
  /** Each targeted field resolved against the applied value. */
  readonly values: ScalingValues;
  readonly reasons: Reason[];
}

function bounds(t: FieldTarget): { min: number; max: number } {
  return 'value' in t ? { min: t.value, max: t.value } : { min: t.min, max: t.max };
}

/** Field-by-field max of several targets (see the header for fixed vs bounds). */
export function combineTargets(targets: readonly Target[]): Target {
  const out: Partial<Record<ScalingField, FieldTarget>> = {};
  for (const field of SCALING_FIELDS) {
    const combined = combineFieldTargets(targets.map((t) => t[field]));
    if (combined) out[field] = combined;
  }
  return out;
}

/** One field's targets combined (fixed values: the max; bounds: max of mins, max of maxes); none set: undefined. */
export function combineFieldTargets(targets: readonly (FieldTarget | undefined)[]): FieldTarget | undefined {
  const set = targets.filter((t): t is FieldTarget => t !== undefined);
  if (set.length === 0) return undefined;
  if (set.every((t) => 'value' in t)) return { value: Math.max(...set.map((t) => (t as { value: number }).value)) };
  const b = set.map(bounds);
  return { min: Math.max(...b.map((x) => x.min)), max: Math.max(...b.map((x) => x.max)) };
}

/** A fixed value is itself; bounds keep the applied value when it fits, else clamp it (min if unknown). */
export function resolveFieldTarget(t: FieldTarget, applied: number | undefined): number {
  if ('value' in t) return t.value;
  if (applied === undefined) return t.min;
  return Math.min(t.max, Math.max(t.min, applied));
}

export function describeFieldTarget(t: FieldTarget): string {
  return 'value' in t ? String(t.value) : `${t.min}..${t.max}`;
}

export function describeTarget(t: Target): string {
  const parts = SCALING_FIELDS.flatMap((f) => {
    const ft = t[f];
    return ft === undefined ? [] : [`${f} ${describeFieldTarget(ft)}`];
  });
  return parts.length > 0 ? parts.join(', ') : 'nothing';
}

function boundsReason(
  field: ScalingField,
  t: { min: number; max: number },
  applied: number | undefined,
  value: number,
): string {
  const range = `${field} between ${t.min} and ${t.max}`;
  if (applied === undefined) return `${range}: nothing applied is known, taking the minimum ${value}`;
  if (applied === value) return `${range}: keeps the applied ${applied}`;
  return `${range}: applied ${applied} moves to ${value}`;
}

/** The winners' combined target, the baseline for the fields they leave unset (no reasons). */
export function targetOf(policy: Policy, winners: readonly Window[]): Target {
  const fromWindows = combineTargets(winners.map((w) => w.target));
  const target: Partial<Record<ScalingField, FieldTarget>> = {};
  for (const field of SCALING_FIELDS) {
    const t = fromWindows[field] ?? policy.baseline[field];
    if (t !== undefined) target[field] = t;
  }
  return target;
}

/** The target at `now`: the winners' combined target, the baseline for fields they leave unset. */
export function resolveTarget(
  policy: Policy,
  active: readonly Window[],
  winners: readonly Window[],
  applied: ScalingValues,
): ResolvedTarget {
  const reasons: Reason[] = [];
  const fromWindows = combineTargets(winners.map((w) => w.target));
  const target: Partial<Record<ScalingField, FieldTarget>> = {};

  const [top] = winners;
  if (top === undefined) {
    reasons.push({
      code: 'baseline',
      message: `no window is active: baseline sets ${describeTarget(policy.baseline)}`,
    });
  } else {
    for (const w of active) {
      const message = winners.includes(w)
        ? `${describeWindow(w)} is active (priority ${w.priority}): sets ${describeTarget(w.target)}`
        : `${describeWindow(w)} is active but outranked (priority ${w.priority} < ${top.priority})`;
      reasons.push({ code: 'window', message });
    }
  }

  for (const field of SCALING_FIELDS) {
    const own = fromWindows[field];
    if (own !== undefined) {
      target[field] = own;
      const setters = winners.flatMap((w) => {
        const t = w.target[field];
        return t === undefined ? [] : [[w.name, t] as const];
      });
      if (setters.length > 1) {
        const each = setters.map(([name, t]) => `${name} ${describeFieldTarget(t)}`).join(', ');
        reasons.push({ code: 'window', field, message: `${field}: max of ${each} = ${describeFieldTarget(own)}` });
      }
    } else if (policy.baseline[field] !== undefined) {
      target[field] = policy.baseline[field];
      if (winners.length > 0) {
        reasons.push({
          code: 'baseline',
          field,
          message: `${field} ${describeFieldTarget(policy.baseline[field])} from the baseline: no winning window sets it`,
        });
      }
    }
  }

  const values: ScalingValues = {};
  for (const field of SCALING_FIELDS) {
    const t = target[field];
    if (t === undefined) continue;
    const value = resolveFieldTarget(t, applied[field]);
    values[field] = value;
    if ('min' in t) {
      const code = fromWindows[field] !== undefined ? 'window' : 'baseline'; // where the target came from, above
      reasons.push({ code, field, message: boundsReason(field, t, applied[field], value) });
    }
  }
  return { target, values, reasons };
}
