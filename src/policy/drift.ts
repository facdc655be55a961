// What to do with a change made by hand (drift: the platform reports values pipescaler did not
// send), by the policy's `behavior.onDrift`: revert it (the default), keep it as an automatic
// override with reason `manual` for a while (hold), or keep it as a floor until the current window
// ends (adoptAsFloor). Pure: the daemon calls it where it detects drift and stores the override.
import { SCALING_FIELDS, type ScalingValues } from '../api/index.js';
import type { Override } from './types.js';
import type { Policy } from './types.js';
import { activeWindows, nextBoundary, occurrenceAt } from './windows.js';

export type DriftAction = { readonly action: 'revert' } | { readonly action: 'override'; readonly override: Override };

/** The longest a floor adopted outside any window lasts: up to the next boundary, at most this. */
const FLOOR_WITHOUT_WINDOW_MS = 24 * 3_600_000;

/**
 * The drift rule. `expected`: what pipescaler last applied; `actual`: what the platform reports.
 * Only the fields that differ are kept (a hold or a floor of the others would pin them for nothing).
 * `id`: the new override's id (the caller's, so this stays pure).
 */
export function onDriftAction(
  policy: Policy,
  now: number,
  expected: ScalingValues,
  actual: ScalingValues,
  id: string,
): DriftAction {
  const rule = policy.behavior.onDrift ?? { kind: 'revert' };
  if (rule.kind === 'revert') return { action: 'revert' };
  const values: ScalingValues = {};
  for (const f of SCALING_FIELDS) {
    const v = actual[f];
    if (v !== undefined && expected[f] !== undefined && v !== expected[f]) values[f] = v;
  }
  if (Object.keys(values).length === 0) return { action: 'revert' };
  const base = { id, values, setAt: now, reason: 'manual', source: 'manual' as const };
  if (rule.kind === 'hold')
    return { action: 'override', override: { ...base, until: now + rule.durationMs, mode: 'set' } };
  return { action: 'override', override: { ...base, until: currentWindowEnd(policy, now), mode: 'floor' } };
}

/** The end of the winning windows' occurrences at `now`; outside any window, the next boundary. */
function currentWindowEnd(policy: Policy, now: number): number {
  const ends = activeWindows(policy.windows, now).winners.flatMap((w) => {
    const occ = occurrenceAt(w, now);
    return occ === null ? [] : [occ.end];
  });
  if (ends.length > 0) return Math.max(...ends);
  return nextBoundary(policy.windows, now, now + FLOOR_WITHOUT_WINDOW_MS) ?? now + FLOOR_WITHOUT_WINDOW_MS;
}
