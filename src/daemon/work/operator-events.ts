// The daemon's side of operator state: an override coming into force or leaving it, and a freeze
// starting or ending to hold a change, are noticed by the evaluations (the CLI only writes Redis)
// and emitted once, fleet-wide (the pipe's record remembers what was seen); a change made by hand
// is judged by the policy's onDrift rule (policy/drift.ts) and, for hold and adoptAsFloor, kept
// as an automatic override with reason `manual`.
import { randomUUID } from 'node:crypto';
import type { ScalingValues } from '../../api/index.js';
import { onDriftAction, overrideValuesAt, type Decision, type PipeConfig, type Policy } from '../../policy/index.js';
import type { DaemonContext } from './context.js';
import type { StoredOverrideValue, PipeRecord } from '../model/record.js';

/** Emit 'override' when the override in force at `at` is not the one the last evaluation saw.
 *  What it saw is written only while the marker names `state`, the state the evaluation read
 *  (state-store.ts write): false, nothing written or emitted, when Redis lost it since. */
export async function noteOverride(
  ctx: DaemonContext,
  pipe: string,
  rec: PipeRecord,
  override: StoredOverrideValue | null,
  at: number,
  state = '',
): Promise<boolean> {
  const live = override !== null && overrideValuesAt(override, at) !== null ? override : null;
  const seen = rec.overrideSeen;
  if ((live?.id ?? null) === (seen?.id ?? null)) return true;
  const overrideSeen = live
    ? { id: live.id, until: live.until, source: live.source, values: live.values, reason: live.reason }
    : null;
  if (!(await ctx.store.write(pipe, { overrideSeen }, state))) return false;
  if (seen && !live) {
    ctx.emitter.emit('override', { pipe, action: at >= seen.until ? 'expired' : 'cancelled', ...seen });
    return true;
  }
  if (live) {
    const { id, until, source, values, reason } = live;
    ctx.emitter.emit('override', { pipe, action: seen ? 'superseded' : 'set', id, until, source, values, reason });
  }
  return true;
}

/** Emit 'freeze' when the freezes holding the pipe's change are not those the last evaluation saw
 *  (written, and emitted, only while the marker names `state`, as noteOverride). */
export async function noteFreeze(
  ctx: DaemonContext,
  pipe: string,
  rec: PipeRecord,
  decision: Decision,
  state = '',
): Promise<void> {
  const now = decision.freeze?.freezes ?? null;
  const seen = rec.freezeSeen;
  if ((now?.join('\u0000') ?? null) === (seen?.join('\u0000') ?? null)) return;
  if (!(await ctx.store.write(pipe, { freezeSeen: now }, state))) return;
  if (decision.freeze) ctx.emitter.emit('freeze', { pipe, action: 'held', ...decision.freeze });
  else if (seen) ctx.emitter.emit('freeze', { pipe, action: 'released', freezes: seen });
}

/**
 * A drift was found (what pipescaler last applied vs what the platform reports): count it, emit
 * it, and apply the policy's onDrift rule. With hold or adoptAsFloor the hand-made values become
 * an override with reason `manual` and the new reference for drift, so the next read does not
 * find the same drift again. An operator's override in force is kept: the hand change is reverted
 * to it. Where the daemon finds a drift it calls this (turn-answer.ts, both places). Its writes go in only
 * while the marker names `state`, the state the turn read (state-store.ts): null, nothing written or
 * emitted, when Redis lost it since (the drift was found against a record that is gone).
 */
export async function handleDrift(
  ctx: DaemonContext,
  pipe: PipeConfig,
  expected: ScalingValues,
  actual: ScalingValues,
  state = '',
): Promise<'revert' | 'hold' | 'adoptAsFloor' | null> {
  if ((await ctx.store.increment(pipe.name, 'drifts', state)) === null) return null;
  const policy: Policy | undefined = ctx.config().policies[pipe.policy];
  const now = ctx.now();
  const rule = policy?.behavior.onDrift?.kind ?? 'revert';
  let result: 'revert' | 'hold' | 'adoptAsFloor' = 'revert';
  if (policy && rule !== 'revert') {
    const current = await ctx.store.operator.override(pipe);
    const operatorInForce = current?.source === 'operator' && overrideValuesAt(current, now) !== null;
    const action = onDriftAction(policy, now, expected, actual, randomUUID());
    if (!operatorInForce && action.action === 'override') {
      if (!(await ctx.store.operator.setOverrideInState(pipe, action.override, now, state)).set) return null;
      if (!(await ctx.store.write(pipe.name, { lastApplied: actual, desired: null }, state))) return null;
      result = rule;
    }
  }
  ctx.emitter.emit('drift', { pipe: pipe.name, expected, actual, onDrift: result });
  return result;
}
