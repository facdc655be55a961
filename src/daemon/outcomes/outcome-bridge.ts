// The daemon's events as outcomes (src/history/outcomes.ts): the one place that says which of
// today's events is which outcome, so history and notifications read one event, `outcome`, and a
// new kind of outcome is one more emit of it (from the code that knows) rather than a new
// listener in each reporter. Events that are outcomes already (`outcome` itself) pass untouched.
import type { Outcome } from '../../history/index.js';
import type { Config } from '../../config/index.js';
import { pipeByName } from '../model/pipe-index.js';
import { verdictText } from './verdict-text.js';
import type { DaemonEmitter, DaemonEvents } from '../model/events.js';

/** Reason codes of a move held back with nothing sent. */
const HOLDS: ReadonlySet<string> = new Set(['cooldown', 'stabilization']);

export interface BridgeOptions {
  readonly now: () => number;
  readonly config: () => Config;
}

/** Emits `outcome` for each decision, pause, drift, override, freeze, parking and reload; returns the unsubscribe. */
export function bridgeOutcomes(emitter: DaemonEmitter, { now, config }: BridgeOptions): () => void {
  /** Pipes with a drift found and no change applied since: the next applied one corrects it. */
  const drifted = new Set<string>();
  /** The end of each pause this replica saw start: a resume at or after it is the pause running out. */
  const pauseUntil = new Map<string, number>();
  /** The hold (cooldown, stabilization) each pipe's last evaluation here reported, to report a change only. */
  const holds = new Map<string, string>();
  const keyOf = (pipe: string): { key?: string } => {
    const key = pipeByName(config(), pipe)?.key;
    return key === undefined ? {} : { key };
  };
  const emit = (o: Outcome): void => {
    emitter.emit('outcome', o);
  };

  const onDecision = (d: DaemonEvents['decision']): void => {
    // a change's line written by a later turn, its sender dead: the instant of its 200
    const at = d.answeredAt ?? now();
    const base = {
      pipe: d.pipe,
      at,
      reason: d.reason,
      before: d.before,
      after: d.after,
      windows: d.windows,
      ...keyOf(d.pipe),
      ...(d.target !== undefined ? { target: d.target } : {}),
      ...(d.requestId !== undefined ? { requestId: d.requestId } : {}),
    };
    if (d.result === 'applied') {
      // one change, one outcome: a read reported it landed before its late 200
      if (d.outcomeReported !== undefined) return;
      emit({ ...base, outcome: 'applied' });
      if (drifted.delete(d.pipe)) emit({ ...base, outcome: 'drift_corrected', reason: 'applied' });
    } else if (d.result === 'failed') {
      // a read that failed says so ("the confirmation read failed"): nothing was to change
      emit({ ...base, outcome: 'failed', ...(d.message !== undefined ? { message: d.message } : {}) });
    } else if (d.result === 'skipped') {
      // why it did not scale: the skip's own sentence ("cooldown until 12:03")
      const skip = d.reasons.find((r) => r.code === d.reason) ?? d.reasons[0];
      emit({ ...base, outcome: 'skipped', ...(skip ? { message: skip.message } : {}) });
    } else if (d.result === 'dry_run') {
      emit({ ...base, outcome: 'dry_run' });
    }
  };
  // A move held back by a cooldown or stabilization sends nothing and is no `decision`, but it is
  // the answer to "why did it not scale": a `skipped` with the hold's code, once per hold (the
  // history collapses the same hold reported by another replica).
  const onEvaluation = ({ pipe, decision }: DaemonEvents['evaluation']): void => {
    const hold = decision.action === 'none' ? decision.reasons.find((r) => HOLDS.has(r.code)) : undefined;
    const id = hold ? `${hold.code}/${hold.field ?? ''}` : '';
    if ((holds.get(pipe) ?? '') === id) return;
    if (!hold) {
      holds.delete(pipe);
      return;
    }
    holds.set(pipe, id);
    emit({
      pipe,
      at: now(),
      outcome: 'skipped',
      reason: hold.code,
      windows: decision.windows,
      // the time left changes every tick; the hold is the same
      message: hold.message.replace(/, \S+ remaining$/, ''),
      ...keyOf(pipe),
    });
  };
  const onPaused = ({ pipe, paused, reason, until }: DaemonEvents['paused']): void => {
    const at = now();
    if (paused) {
      if (until !== undefined) pauseUntil.set(pipe, until);
      else pauseUntil.delete(pipe);
      emit({
        pipe,
        at,
        outcome: 'paused',
        reason: until === undefined ? 'paused' : 'paused_until',
        ...(reason !== undefined ? { message: reason } : {}),
        ...keyOf(pipe),
      });
      return;
    }
    const end = pauseUntil.get(pipe);
    pauseUntil.delete(pipe);
    const expired = end !== undefined && at >= end;
    emit({
      pipe,
      at,
      outcome: expired ? 'pause_expired' : 'resumed',
      reason: expired ? 'expired' : 'resumed',
      ...keyOf(pipe),
    });
  };
  const onDrift = ({ pipe, expected, actual, onDrift }: DaemonEvents['drift']): void => {
    drifted.add(pipe);
    const kept = onDrift === 'hold' || onDrift === 'adoptAsFloor';
    emit({
      pipe,
      at: now(),
      outcome: 'drift_found',
      reason: kept ? `drift_${onDrift}` : 'drift',
      before: expected,
      after: actual,
      ...(kept ? { message: `changed by hand: kept (onDrift ${onDrift}) as an override with reason manual` } : {}),
      ...keyOf(pipe),
    });
  };
  // an override set, superseded, expired or cancelled (once fleet-wide: operator-events.ts)
  const onOverride = ({ pipe, action, values, until, reason, source }: DaemonEvents['override']): void =>
    emit({
      pipe,
      at: now(),
      outcome: 'override',
      reason: action,
      target: values,
      message: `${source === 'manual' ? 'kept by hand' : 'override'} until ${new Date(until).toISOString()}: ${reason}`,
      ...keyOf(pipe),
    });
  const onFreeze = (f: DaemonEvents['freeze']): void =>
    emit({
      pipe: f.pipe,
      at: now(),
      outcome: 'freeze',
      reason: f.action,
      ...(f.action === 'held'
        ? {
            target: f.held,
            message: `freeze ${f.freezes.join(', ')} holds it until ${new Date(f.until).toISOString()}`,
          }
        : { message: `freeze ${f.freezes.join(', ')} no longer holds it` }),
      ...keyOf(f.pipe),
    });
  // a window start's verdict (verdicts.ts): a warning when the pipe was late or missed it
  const onVerdict = (v: DaemonEvents['verdict']): void =>
    emit({
      pipe: v.pipe,
      at: v.at,
      outcome: 'verdict',
      reason: v.verdict,
      windows: v.windows,
      target: v.target,
      message: verdictText(v),
      ...(v.verdict === 'late' || v.verdict === 'missed' ? { severity: 'warning' as const } : {}),
      ...keyOf(v.pipe),
    });
  const onParked = ({ pipe, code, message }: DaemonEvents['parked']): void =>
    emit({ pipe, at: now(), outcome: 'parked', reason: code, message, ...keyOf(pipe) });
  const onReload = ({ result, changes }: DaemonEvents['config:reload']): void => {
    if (result !== 'success' || !changes) return;
    const at = now();
    const cfg = config();
    const policies = new Set([...changes.policiesChanged, ...changes.policiesAdded]);
    const reasons = new Map<string, string>();
    for (const p of changes.pipesAdded) reasons.set(p, 'pipe_added');
    for (const p of changes.pipesChanged) reasons.set(p, 'pipe_changed');
    for (const p of cfg.pipes)
      if (!reasons.has(p.name) && policies.has(p.policy)) reasons.set(p.name, 'policy_changed');
    for (const [pipe, reason] of reasons) {
      const p = pipeByName(cfg, pipe);
      emit({ pipe, at, outcome: 'reload', reason, ...(p ? { key: p.key, message: `policy ${p.policy}` } : {}) });
    }
  };

  emitter.on('decision', onDecision);
  emitter.on('evaluation', onEvaluation);
  emitter.on('paused', onPaused);
  emitter.on('drift', onDrift);
  emitter.on('override', onOverride);
  emitter.on('freeze', onFreeze);
  emitter.on('parked', onParked);
  emitter.on('verdict', onVerdict);
  emitter.on('config:reload', onReload);
  return () => {
    emitter.off('decision', onDecision);
    emitter.off('evaluation', onEvaluation);
    emitter.off('paused', onPaused);
    emitter.off('drift', onDrift);
    emitter.off('override', onOverride);
    emitter.off('freeze', onFreeze);
    emitter.off('parked', onParked);
    emitter.off('verdict', onVerdict);
    emitter.off('config:reload', onReload);
  };
}
