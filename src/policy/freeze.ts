// Freeze windows: times when a policy sends no scale-down (scope scaleDown) or no change at all
// (scope all), recurring in a time zone or one-off. A freeze is a window without a target, so it
// starts and ends (DST included) exactly as windows do (windows.ts). A change a freeze holds is
// not lost: the decision keeps wanting it, and it goes out at the first tick after the freeze
// ends. Pure.
import type { ScalingField, ScalingValues } from '../api/index.js';
import type { Freeze, FreezeOutcome, FreezeScope, Reason } from './types.js';
import { describeWindow, nextBoundary, occurrenceAt } from './windows.js';

/** The freezes in force at `now`, each with the end of its occurrence. */
export function activeFreezes(freezes: readonly Freeze[], now: number): { freeze: Freeze; end: number }[] {
  return freezes.flatMap((freeze) => {
    const occ = occurrenceAt(freeze.window, now);
    return occ === null ? [] : [{ freeze, end: occ.end }];
  });
}

/** The next instant in (after, limit] at which a freeze starts or ends, or null. */
export function nextFreezeBoundary(freezes: readonly Freeze[], after: number, limit: number): number | null {
  return freezes.length === 0
    ? null
    : nextBoundary(
        freezes.map((f) => f.window),
        after,
        limit,
      );
}

/**
 * `desired` with every move a freeze forbids held at the applied value. A field whose applied
 * value is unknown is not held (there is no move to judge), nor are `exempt` fields (an override's).
 */
export function applyFreezes(
  freezes: readonly Freeze[] | undefined,
  now: number,
  applied: ScalingValues,
  desired: ScalingValues,
  fields: readonly ScalingField[],
  exempt: readonly ScalingField[],
): { desired: ScalingValues; reasons: Reason[]; outcome?: FreezeOutcome } {
  const active = freezes && freezes.length > 0 ? activeFreezes(freezes, now) : [];
  if (active.length === 0) return { desired, reasons: [] };
  const out: ScalingValues = { ...desired };
  const held: ScalingValues = {};
  const reasons: Reason[] = [];
  const names = new Set<string>();
  let until = 0;
  for (const field of fields) {
    const want = desired[field];
    const was = applied[field];
    if (want === undefined || was === undefined || want === was || exempt.includes(field)) continue;
    const up = want > was;
    const by = active.filter((a) => a.freeze.scope === 'all' || !up);
    if (by.length === 0) continue;
    out[field] = was;
    held[field] = want;
    const end = Math.max(...by.map((a) => a.end));
    until = Math.max(until, end);
    for (const a of by) names.add(a.freeze.window.name);
    const what = by.map((a) => `${describeWindow(a.freeze.window)}, ${scopeText(a.freeze.scope)}`).join('; ');
    reasons.push({
      code: 'freeze',
      field,
      message: `${field} ${up ? 'scale-up' : 'scale-down'} ${was} -> ${want} held until ${new Date(end).toISOString()}: freeze ${what}`,
    });
  }
  if (reasons.length === 0) return { desired, reasons };
  return { desired: out, reasons, outcome: { freezes: [...names], held, until } };
}

function scopeText(scope: FreezeScope): string {
  return scope === 'all' ? 'no changes' : 'no scale-downs';
}

/** "release (Europe/Berlin, mon,tue 09:00-11:00), no scale-downs": for plan and diff. */
export function describeFreeze(f: Freeze): string {
  return `${describeWindow(f.window)}, ${scopeText(f.scope)}`;
}
