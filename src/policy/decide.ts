// decide(): one pure decision for one pipe at one instant. Same code serves the daemon, `plan` and
// `simulate`. Order: skips -> window or baseline target (raised by lead time) -> pipe bounds -> platform ranges
// (= the recommendation) -> behavior -> the hard limits again -> the fields of the pipe's kind ->
// compare with what is applied.
// The hard limits run again after behavior because behavior only holds at or steps from the
// applied value, and that value may lie outside bounds changed since it was applied: bounds and
// platform ranges are limits, behavior is smoothing, so the limits win (desired never leaves them).
// A decision that raises one field and lowers another keeps both moves (each field had its own
// cooldown and step) and reports direction 'up' (scale-ups go first); changeDirections() tells the
// daemon both directions so it can stamp both lastChange times.
import {
  clampToLimit,
  KIND_FIELDS,
  SCALABLE_PIPE_STATES,
  SCALING_FIELDS,
  SCALING_LIMITS,
  SERVICE_STATES_REFUSING_CHANGES,
  type ScalingField,
  type ScalingValues,
} from '../api/index.js';
import { applyBehavior } from './behavior.js';
import { applyFreezes } from './freeze.js';
import { overrideTarget } from './override.js';
import { leadHorizon, statesAhead, withLead } from './lead.js';
import { applyMetric } from './metric.js';
import { resolveTarget } from './target.js';
import type { Bounds, Decision, Direction, PipeView, Policy, Reason } from './types.js';
import { activeWindows } from './windows.js';
import { withArticle } from './words.js';

/** The reason this pipe must not be scaled now, or null. */
function skipReason(view: PipeView, now: number): Reason | null {
  if (view.kind === null) {
    return { code: 'unknown_pipe', message: 'pipe not read yet: first contact needed before scaling' };
  }
  if (view.kind === 'database') return null;
  if (view.paused !== undefined && (view.paused.until === undefined || now < view.paused.until)) {
    const until = view.paused.until === undefined ? '' : ` until ${new Date(view.paused.until).toISOString()}`;
    return { code: 'paused', message: `paused${until}: ${view.paused.reason}` };
  }
  if (view.serviceState !== undefined && SERVICE_STATES_REFUSING_CHANGES.has(view.serviceState)) {
    return {
      code: 'service_not_running',
      message: `service is ${view.serviceState}: the platform refuses scaling changes (424) until it runs again`,
    };
  }
  if (view.state === null || !SCALABLE_PIPE_STATES.has(view.state)) {
    return {
      code: 'pipe_state',
      message:
        view.state === null
          ? 'pipe state unknown: not scaling'
          : `pipe is ${view.state}: only ${[...SCALABLE_PIPE_STATES].join(', ')} pipes are scaled`,
    };
  }
  const notReady = Object.keys(view.endpoints)
    .sort()
    .filter((id) => view.endpoints[id] !== 'Ready');
  if (notReady.length > 0) {
    const each = notReady.map((id) => `${id} is ${view.endpoints[id]}`).join(', ');
    return { code: 'endpoint_not_ready', message: `reverse private endpoint not Ready: ${each}` };
  }
  return null;
}

/** Pipe bounds, then platform range; each clamp that moves the value says so. */
function clampHard(field: ScalingField, value: number, bounds: Bounds, reasons: Reason[], note: string): number {
  let v = value;
  const b = bounds[field];
  if (b !== undefined) {
    if (b.max !== undefined && v > b.max) {
      reasons.push({
        code: 'pipe_bound',
        field,
        bound: 'max',
        message: `${field} ${v} -> ${b.max}: pipe bound max ${b.max}${note}`,
      });
      v = b.max;
    } else if (b.min !== undefined && v < b.min) {
      reasons.push({
        code: 'pipe_bound',
        field,
        bound: 'min',
        message: `${field} ${v} -> ${b.min}: pipe bound min ${b.min}${note}`,
      });
      v = b.min;
    }
  }
  const clamped = clampToLimit(field, v);
  if (clamped !== v) {
    const limit = SCALING_LIMITS[field];
    const integer = limit.integer && !Number.isInteger(v) ? ', whole numbers' : '';
    reasons.push({
      code: 'platform_range',
      field,
      message: `${field} ${v} -> ${clamped}: platform range ${limit.min}..${limit.max}${integer}${note}`,
    });
  }
  return clamped;
}

/** Which directions the changes move in (a field whose applied value is unknown counts as up). */
export function changeDirections(applied: ScalingValues, changes: ScalingValues): { up: boolean; down: boolean } {
  let up = false;
  let down = false;
  for (const field of SCALING_FIELDS) {
    const next = changes[field];
    if (next === undefined) continue;
    const was = applied[field];
    if (was === undefined || next > was) up = true;
    else if (next < was) down = true;
  }
  return { up, down };
}

function list(values: ScalingValues): string {
  return SCALING_FIELDS.filter((f) => values[f] !== undefined)
    .map((f) => `${f} ${values[f]}`)
    .join(', ');
}

export function decide(policy: Policy, now: number, view: PipeView): Decision {
  const { active, winners } = activeWindows(policy.windows, now);
  const windows = winners.map((w) => w.name);
  const nothing = { windows, recommendation: {}, desired: {}, changes: {} };

  const skip = skipReason(view, now);
  if (skip !== null) return { action: 'skip', direction: 'none', ...nothing, reasons: [skip] };
  if (view.kind === 'database') {
    return {
      action: 'none',
      direction: 'none',
      ...nothing,
      reasons: [{ code: 'kind', message: 'database pipes are scaled service-wide' }],
    };
  }
  const { kind } = view;
  if (kind === null) throw new Error('decide: a pipe of unknown kind got past skipReason');
  const fields = KIND_FIELDS[kind];

  // Lead time: what the schedule sets up to the horizon raises the target now (lead.ts).
  const until = leadHorizon(policy, now, view.leadUntil);
  const ahead = until > now ? statesAhead(policy.windows, now, until) : [];
  const resolved = withLead(policy, now, ahead, resolveTarget(policy, active, winners, view.applied), view.applied);
  const reasons: Reason[] = [...resolved.reasons];
  // A metric picks the value of its field inside the window's (or baseline's) bounds.
  // A forecast looks ahead over the actuation time from the lead horizon on (scale-ups only).
  const metric = applyMetric(policy, now, view.metric, resolved.target, resolved.values, view.applied, fields, until);
  reasons.push(...metric.reasons);

  const recommendation: ScalingValues = {};
  // The override's values, for the fields it takes (not part of the recommendation: stabilization
  // remembers the policy's targets, so the policy is back as it was when the override ends).
  const overridden = overrideTarget(view.override, policy.behavior.overrides ?? 'any', now, metric.values, fields);
  for (const field of fields) {
    const value = metric.values[field];
    if (value !== undefined) recommendation[field] = clampHard(field, value, view.bounds, reasons, '');
  }

  const behavior = applyBehavior(policy.behavior, now, view, recommendation, fields);
  reasons.push(...behavior.reasons.filter((r) => r.field === undefined || !overridden.fields.includes(r.field)));

  const desired: ScalingValues = {};
  for (const field of fields) {
    const own = overridden.fields.includes(field) ? overridden.values[field] : undefined;
    const value = own ?? behavior.desired[field];
    const note = own !== undefined ? ' (limits outrank an override)' : ' (limits outrank behavior)';
    if (value !== undefined) desired[field] = clampHard(field, value, view.bounds, reasons, note);
  }
  reasons.push(...overridden.reasons);
  const frozen = applyFreezes(policy.freezes, now, view.applied, desired, fields, overridden.fields);
  Object.assign(desired, frozen.desired);
  reasons.push(...frozen.reasons);

  const ignored = SCALING_FIELDS.filter((f) => resolved.values[f] !== undefined && !fields.includes(f));
  if (ignored.length > 0) {
    reasons.push({
      code: 'kind',
      message: `${kind} pipes take only ${fields.join(', ')}: ignoring ${ignored.join(', ')}`,
    });
  }

  const changes: ScalingValues = {};
  for (const field of fields) {
    if (desired[field] !== undefined && desired[field] !== view.applied[field]) changes[field] = desired[field];
  }
  const moves = changeDirections(view.applied, changes);
  const direction: Direction = moves.up ? 'up' : moves.down ? 'down' : 'none';
  const changed = Object.keys(changes).length > 0;
  if (!changed) {
    reasons.push({
      code: 'unchanged',
      message:
        Object.keys(desired).length > 0
          ? `already applied: ${list(desired)}`
          : `the policy sets no field ${withArticle(kind)} pipe takes`,
    });
  }
  return {
    action: changed ? 'change' : 'none',
    direction,
    windows,
    recommendation,
    desired,
    changes,
    reasons,
    ...(metric.outcome ? { metric: metric.outcome } : {}),
    ...(resolved.lead ? { lead: resolved.lead } : {}),
    ...(frozen.outcome ? { freeze: frozen.outcome } : {}),
    ...(view.override && overridden.fields.length > 0
      ? { override: { id: view.override.id, until: view.override.until, fields: overridden.fields } }
      : {}),
  };
}
