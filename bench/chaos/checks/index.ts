// What a chaos run must show beyond convergence, as pure functions over what was recorded: the
// observer's scaling PATCHes (with each 200's answer), the replicas' audit lines, the history the
// replicas left in Redis and the cloud's count of its real limiter's 429s. One file per check:
//  1. limit.ts: real 429s per key, each placed in its key's window.
//  2. record.ts: every change answered 200 recorded exactly once in the audit log.
//  3. history.ts: each pipe's history's change entries against its changes answered 200.
//  4. verdicts.ts: window verdicts the answers contradict, and starts given two.
//  5. drift.ts: drift the daemon reported of its own change.
import type { LimitedCheck } from './limit.js';
import type { RecordedOnceCheck } from './record.js';
import type { HistoryCheck } from './history.js';
import type { VerdictCheck } from './verdicts.js';
import type { DriftCheck } from './drift.js';

export { auditRecords, type AuditRecord } from './audit-lines.js';
export { atTarget, changes200, isChange, type PipeRef, type RestartEvent } from './changes.js';
export { keyRequests, placeLimited, realLimited, refusedRequest, type LimitedCheck } from './limit.js';
export { recordedOnce, type RecordedContext, type RecordedOnceCheck } from './record.js';
export { historyVsAnswers, type HistoryCheck } from './history.js';
export { answersByPipe, verdictsVsAnswers, type VerdictCheck } from './verdicts.js';
export { ownDrift, type DriftCheck } from './drift.js';

export interface ChaosChecks {
  readonly limited: LimitedCheck;
  readonly recorded: RecordedOnceCheck;
  readonly history: HistoryCheck;
  readonly verdicts: VerdictCheck;
  readonly drift: DriftCheck;
}

/** Which checks a run is held to (a check that does not hold yet can be printed, not failed). */
export type CheckName = 'limited' | 'recorded' | 'history' | 'verdicts' | 'drift';
export const CHECK_NAMES: readonly CheckName[] = ['limited', 'recorded', 'history', 'verdicts', 'drift'];

/** One line per check that failed, with its examples. */
export function checkFailures(c: ChaosChecks, held: readonly CheckName[] = CHECK_NAMES): string[] {
  const out: string[] = [];
  const more = (examples: readonly string[]) => (examples.length > 0 ? `:\n    ${examples.join('\n    ')}` : '');
  const on = (n: CheckName) => held.includes(n);
  if (on('limited') && c.limited.total > 0)
    out.push(
      `429s of the real limiter: ${Object.entries(c.limited.perKey)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}${more(c.limited.examples)}`,
    );
  if (on('recorded') && (c.recorded.missingCount > 0 || c.recorded.twiceCount > 0))
    out.push(
      `changes answered 200 not recorded once in the audit log: ${c.recorded.missingCount} with no line, ${c.recorded.twiceCount} twice${more([...c.recorded.missing, ...c.recorded.twice])}`,
    );
  if (on('history') && c.history.differ > 0)
    out.push(
      `history's change entries differ from the changes answered 200 on ${c.history.differ} pipes${more(c.history.examples)}`,
    );
  if (on('verdicts') && (c.verdicts.missedShown > 0 || c.verdicts.metUnshown > 0 || c.verdicts.twice > 0))
    out.push(
      `verdicts the answers contradict: ${c.verdicts.missedShown} missed shown at target, ${c.verdicts.metUnshown} met not shown, ${c.verdicts.twice} starts with two verdicts${more(c.verdicts.examples)}`,
    );
  if (on('drift') && c.drift.own > 0)
    out.push(`drift reported of the daemon's own change: ${c.drift.own}${more(c.drift.examples)}`);
  return out;
}
