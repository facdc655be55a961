// Lead time: a window's scale-ups may start before the window does. decide() takes the target as
// the field-wise max (combineTargets) of what the schedule sets from now up to a horizon,
// `leadUntil`: a scale-up due by then goes now, and scale-downs never lead (a max only raises), so
// they still wait for the window's end and the stabilization. The horizon is now + a fixed
// `behavior.scaleUp.leadTime`, or for `auto` the pipe's slot in its key's lead plan (lead-plan.ts).
import { SCALING_FIELDS, type ScalingField, type ScalingValues } from '../api/index.js';
import { combineFieldTargets, resolveFieldTarget, targetOf, type ResolvedTarget } from './target.js';
import type { FieldTarget, LeadOutcome, Policy, Reason, Window } from './types.js';
import { activeWindows, formatDuration, nextBoundary } from './windows.js';

/** A boundary ahead of now and the windows that win from it on. */
export interface StateAhead {
  readonly at: number;
  readonly winners: readonly Window[];
}

/** The instant up to which the schedule's targets count now: the caller's (auto's plan), else
 *  now + a fixed lead time; auto without a plan leads nothing. */
export function leadHorizon(policy: Policy, now: number, leadUntil: number | undefined): number {
  if (leadUntil !== undefined) return Math.max(now, leadUntil);
  const lead = policy.behavior.scaleUp.leadTime ?? 'auto';
  return lead === 'auto' ? now : now + lead;
}

/** Every boundary in (now, until] with the windows that win from it on. */
export function statesAhead(windows: readonly Window[], now: number, until: number): StateAhead[] {
  const out: StateAhead[] = [];
  for (let t = nextBoundary(windows, now, until); t !== null; t = nextBoundary(windows, t, until)) {
    out.push({ at: t, winners: activeWindows(windows, t).winners });
  }
  return out;
}

export interface LeadResult extends ResolvedTarget {
  readonly lead?: LeadOutcome;
}

/**
 * The target now raised by what the schedule sets at each state ahead: per field the combined
 * target of now and those states (fixed values: the max; bounds: max of mins, max of maxes), so
 * the value it resolves to is the largest of each. A field it raises says why (`lead_time`).
 */
export function withLead(
  policy: Policy,
  now: number,
  ahead: readonly StateAhead[],
  resolved: ResolvedTarget,
  applied: ScalingValues,
): LeadResult {
  const [soonest] = ahead;
  if (soonest === undefined) return resolved;
  const targets = ahead.map((s) => targetOf(policy, s.winners));
  const target: Partial<Record<ScalingField, FieldTarget>> = { ...resolved.target };
  const values: ScalingValues = { ...resolved.values };
  const reasons: Reason[] = [...resolved.reasons];
  let first: StateAhead | null = null;
  for (const field of SCALING_FIELDS) {
    const set = targets.map((t) => t[field]);
    if (set.every((t) => t === undefined)) continue;
    const combined = combineFieldTargets([resolved.target[field], ...set]);
    if (!combined) continue; // never: some state ahead sets the field
    target[field] = combined;
    const was = resolved.values[field];
    const value = resolveFieldTarget(combined, applied[field]);
    values[field] = value;
    if (was !== undefined && value <= was) continue;
    // The first state ahead that asks for this value is the one the pipe is made ready for.
    const state =
      ahead.find((_, i) => {
        const t = set[i];
        return t !== undefined && resolveFieldTarget(t, applied[field]) === value;
      }) ?? soonest;
    if (first === null || state.at < first.at) first = state;
    reasons.push({
      code: 'lead_time',
      field,
      message: `${field} ${was ?? '?'} -> ${value} ahead of ${describeState(state)} in ${formatDuration(state.at - now)}: scale-ups lead by ${describeLead(policy)}`,
    });
  }
  if (first === null) return { target, values, reasons };
  return { target, values, reasons, lead: { boundary: first.at, windows: first.winners.map((w) => w.name) } };
}

function describeState(s: StateAhead): string {
  const names = s.winners.length > 0 ? s.winners.map((w) => w.name).join('+') : 'the baseline';
  return `${names} at ${new Date(s.at).toISOString()}`;
}

/** "auto (the key's lead plan)" or "5m". */
export function describeLead(policy: Policy): string {
  const lead = policy.behavior.scaleUp.leadTime ?? 'auto';
  return lead === 'auto' ? "auto (the key's lead plan)" : formatDuration(lead);
}
