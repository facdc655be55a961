// A window verdict in words, for the audit line, the history and notifications, and `status --wide`.
import { formatDuration } from '../../policy/index.js';
import type { StoredVerdict } from '../model/record.js';

const EXCLUDED: Readonly<Record<string, string>> = {
  paused: 'the pipe was paused',
  override: 'an override was in force',
  freeze: 'a freeze held its change',
  dry_run: 'dry run: nothing is sent',
  state_lost: "Redis lost the daemon's state around it and no read showed the target by then",
};

/** "late by 3m: business at 2026-11-23T09:00:00.000Z wanted replicas 6, confirmed 09:03:00Z". */
export function verdictText(
  v: Pick<
    StoredVerdict,
    'verdict' | 'boundary' | 'windows' | 'target' | 'lateMs' | 'confirmedAt' | 'reason' | 'deadline'
  >,
): string {
  const start = `${v.windows.join('+') || 'the baseline'} at ${new Date(v.boundary).toISOString()}`;
  const wanted = Object.entries(v.target)
    .map(([f, n]) => `${f} ${n}`)
    .join(', ');
  const confirmed = v.confirmedAt === undefined ? '' : `, confirmed ${new Date(v.confirmedAt).toISOString()}`;
  switch (v.verdict) {
    case 'met':
      return `at target by the boundary: ${start} wanted ${wanted}${confirmed}`;
    case 'late':
      return `late by ${formatDuration(v.lateMs ?? 0)}: ${start} wanted ${wanted}${confirmed}`;
    case 'missed':
      return v.reason === 'superseded'
        ? `missed: ${start} wanted ${wanted}, not confirmed before the next window start`
        : `missed: ${start} wanted ${wanted}, not confirmed by ${new Date(v.deadline).toISOString()}`;
    case 'excluded':
      return `no verdict: ${EXCLUDED[v.reason ?? ''] ?? v.reason ?? 'excluded'} at ${start}`;
  }
}
