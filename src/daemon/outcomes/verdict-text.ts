// A window verdict in words, for the audit line, the history and notifications, and `status --wide`.
import {
  describeMinutes,
  formatDuration,
  isNoMinutes,
  type CapacityMinutes,
  type Exclusion,
} from '../../policy/index.js';
import type { StoredVerdict } from '../model/record.js';

const EXCLUDED: Readonly<Record<Exclusion, string>> = {
  paused: 'the pipe was paused',
  override: 'an override was in force',
  freeze: 'a freeze held its change',
  dry_run: 'dry run: nothing is sent',
  state_lost: "Redis lost the daemon's state around it and no read showed the target by then",
  unseen: 'the pipe was first read only after',
  outcome_unknown: "its change's answer was lost and no read showed the target by then",
};
/** The same looked up by a stored reason (one an older version wrote included). */
const EXCLUDED_TEXT: Readonly<Partial<Record<string, string>>> = EXCLUDED;

/** The capacity a verdict reports, first so a cut message keeps it: ", 60 replica-min early" or
 *  ", 12 replica-min short"; nothing when the step spent none (or an older verdict has none). */
function capacityPart(early: CapacityMinutes | undefined, short: CapacityMinutes | undefined): string {
  const parts: string[] = [];
  if (early && !isNoMinutes(early)) parts.push(`${describeMinutes(early)} early`);
  if (short && !isNoMinutes(short)) parts.push(`${describeMinutes(short)} short`);
  return parts.length === 0 ? '' : `, ${parts.join('; ')}`;
}

/** "late by 3m, 12 replica-min short: business at 2026-11-23T09:00:00.000Z wanted replicas 6,
 *  confirmed 09:03:00Z". */
export function verdictText(
  v: Pick<
    StoredVerdict,
    'verdict' | 'boundary' | 'windows' | 'target' | 'lateMs' | 'confirmedAt' | 'reason' | 'deadline' | 'early' | 'short'
  >,
): string {
  const spent = capacityPart(v.early, v.short);
  const start = `${v.windows.join('+') || 'the baseline'} at ${new Date(v.boundary).toISOString()}`;
  const wanted = Object.entries(v.target)
    .map(([f, n]) => `${f} ${n}`)
    .join(', ');
  const confirmed = v.confirmedAt === undefined ? '' : `, confirmed ${new Date(v.confirmedAt).toISOString()}`;
  switch (v.verdict) {
    case 'met':
      return `at target by the boundary${spent}: ${start} wanted ${wanted}${confirmed}`;
    case 'late':
      return `late by ${formatDuration(v.lateMs ?? 0)}${spent}: ${start} wanted ${wanted}${confirmed}`;
    case 'missed':
      return v.reason === 'superseded'
        ? `missed${spent}: ${start} wanted ${wanted}, not confirmed before the next window start`
        : `missed${spent}: ${start} wanted ${wanted}, not confirmed by ${new Date(v.deadline).toISOString()}`;
    case 'excluded':
      return `no verdict: ${EXCLUDED_TEXT[v.reason ?? ''] ?? v.reason ?? 'excluded'} at ${start}`;
  }
}
