// What a change's confirmation (confirmation.ts) reports: the `confirmed` event with its actuation
// latency, once per confirmed change; the `unconfirmed` event and outcome once per change of state
// (the limit passed with the target not in force; confirmed after all, replaced, or a hand change).
import type { PipeKind } from '../../api/index.js';
import type { PipeConfig } from '../../policy/index.js';
import type { DaemonContext } from './context.js';
import type { ActuationSample, SkippedSample } from '../lifecycle/confirmation.js';
import type { ConfirmationChange } from '../lifecycle/transition.js';
import type { PipeRecord } from '../model/record.js';

export function reportConfirmation(
  ctx: DaemonContext,
  pipe: PipeConfig,
  rec: PipeRecord,
  kind: PipeKind | null,
  change: ConfirmationChange,
  sample?: ActuationSample | SkippedSample,
): void {
  const { emitter } = ctx;
  const name = pipe.name;
  switch (change.is) {
    case 'confirmed':
      if (kind !== null)
        emitter.emit('confirmed', {
          pipe: name,
          kind,
          values: change.values,
          sentAt: change.sentAt,
          confirmedAt: change.at,
          actuationMs: sample && 'ms' in sample ? sample.ms : Math.max(0, change.at - change.sentAt),
          ...(sample && 'lowMs' in sample && sample.lowMs !== undefined ? { actuationLowMs: sample.lowMs } : {}),
          ...(sample && 'skipped' in sample ? { notSample: sample.skipped } : {}),
        });
      if (change.wasUnconfirmed)
        emitter.emit('unconfirmed', {
          pipe: name,
          kind,
          unconfirmed: false,
          reason: 'confirmed',
          target: change.values,
          sentAt: change.sentAt,
          at: change.at,
        });
      return;
    case 'unconfirmed': {
      const at = ctx.now();
      emitter.emit('unconfirmed', {
        pipe: name,
        kind,
        unconfirmed: true,
        reason: 'limit',
        target: change.target,
        sentAt: change.sentAt,
        at,
        resends: change.resends,
      });
      emitter.emit('outcome', {
        pipe: name,
        outcome: 'unconfirmed',
        at,
        reason: 'not_at_target',
        before: rec.applied,
        after: { ...rec.applied, ...change.target },
        target: change.target,
        key: pipe.key,
        message: `a change answered ${Math.round((at - change.sentAt) / 1000)} s ago is not in force yet; ${change.resends === 0 ? 'sent once more' : 'not sent again'}`,
      });
      return;
    }
    case 'dropped':
      emitter.emit('unconfirmed', {
        pipe: name,
        kind,
        unconfirmed: false,
        reason: change.reason,
        target: change.target,
        sentAt: rec.confirming?.sentAt ?? ctx.now(),
        at: ctx.now(),
      });
  }
}
