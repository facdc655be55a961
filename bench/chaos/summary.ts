// What a chaos run did and survived, counted from the cloud's stats and the observer's record,
// and the table `npm run chaos` prints.
import type { CloudStats, FaultKind } from '../../src/cloud/index.js';
import type { ChaosChecks } from './checks/index.js';
import type { SentPatch } from './observer.js';
import type { ChaosParams } from './scenario.js';

export interface PatchCounts {
  /** Scaling PATCHes with at least one value (a change), each attempt counted. */
  readonly sent: number;
  /** Of those, answered 200. */
  readonly applied: number;
  /** Of those, a resend of an Idempotency-Key already sent (a retry of the same change). */
  readonly retried: number;
  /** Of those, by failure: 500, 503, 429, 'reset', other codes. */
  readonly failed: Readonly<Record<string, number>>;
  /** Empty PATCHes (first contact, reconcile reads). */
  readonly reads: number;
}

export interface ChaosSummary {
  readonly params: Pick<
    ChaosParams,
    'pipes' | 'boundaries' | 'boundaryEveryMs' | 'keys' | 'seed' | 'replicas' | 'redisRestarts' | 'propagationMs'
  >;
  /** Injected by the cloud on every operation (cloud.stats().faults). */
  readonly faults: Readonly<Partial<Record<FaultKind, number>>>;
  /** 429s from the cloud's real limiter (not injected). */
  readonly realRateLimited: number;
  readonly patches: PatchCounts;
  readonly outOfRange: number;
  /** In range, but not a value the schedule ever asks of that pipe. */
  readonly unexpectedValues: number;
  /** Information, not a failure: a PATCH for a pipe while another for it was still open (a killed
   *  replica's request the cloud still serves, a lock lost with Redis's data). */
  readonly overlaps: number;
  readonly kills: number;
  readonly redisRestarts: number;
  /** The checks of checks/ (each figure printed, whether or not the run is held to it). */
  readonly checks: ChaosChecks;
  readonly replicaCrashes: number;
  readonly unhandled: number;
  /** The replicas' log lines at warn and at error level or above (pino levels 40, 50+), and how
   *  often each message came ("warn: tick could not enqueue..." -> 12). */
  readonly logs: { readonly warn: number; readonly error: number; readonly messages: Readonly<Record<string, number>> };
  readonly cleanExits: { readonly ok: number; readonly of: number };
  readonly converged: { readonly pipes: number; readonly of: number; readonly afterLastBoundaryMs: number | null };
  readonly totalMs: number;
}

export function countPatches(patches: readonly SentPatch[]): PatchCounts {
  const seen = new Set<string>();
  let sent = 0;
  let applied = 0;
  let retried = 0;
  let reads = 0;
  const failed: Record<string, number> = {};
  for (const p of patches) {
    const change = Object.values(p.body).some((v) => v !== null && v !== undefined);
    if (!change) {
      reads += 1;
      continue;
    }
    sent += 1;
    if (p.idempotencyKey !== undefined) {
      if (seen.has(p.idempotencyKey)) retried += 1;
      else seen.add(p.idempotencyKey);
    }
    if (p.status === 200) applied += 1;
    else {
      const k = String(p.status ?? 'no answer');
      failed[k] = (failed[k] ?? 0) + 1;
    }
  }
  return { sent, applied, retried, failed, reads };
}

export function realRateLimited(stats: CloudStats): number {
  return Object.values(stats.limited).reduce((n, k) => n + k, 0);
}

const FAULT_ROWS: readonly [FaultKind, string, string][] = [
  ['error500', '500 Internal Server Error', '500'],
  ['error503', '503 Service Unavailable', '503'],
  ['reset', 'connection reset', 'reset'],
  ['error429', '429 Too Many Requests (injected)', '429'],
  ['latency', 'latency 200 ms - 2 s', ''],
];

function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function formatSummary(s: ChaosSummary): string {
  const p = s.params;
  const faults = table(
    ['fault', 'injected (all requests)', 'on scaling changes', 'survived'],
    FAULT_ROWS.map(([kind, label, status]) => [
      label,
      String(s.faults[kind] ?? 0),
      status ? String(s.patches.failed[status] ?? 0) : '-',
      s.converged.pipes === s.converged.of ? 'yes' : 'NO',
    ]),
  );
  const otherFailures =
    Object.entries(s.patches.failed)
      .filter(([k]) => !['500', '503', '429', 'reset'].includes(k))
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ') || '0';
  const run = table(
    ['run', 'value'],
    [
      ['pipes / boundaries / every', `${p.pipes} / ${p.boundaries} / ${seconds(p.boundaryEveryMs)}`],
      ['API keys (lanes) / fault seed', `${p.keys} / ${p.seed}`],
      ['replicas / propagation', `${p.replicas} / ${seconds(p.propagationMs)}`],
      ['scaling PATCHes sent', String(s.patches.sent)],
      ['  applied (200)', String(s.patches.applied)],
      ['  retried (same Idempotency-Key again)', String(s.patches.retried)],
      ['  other failures', otherFailures],
      ['reads (empty PATCH)', String(s.patches.reads)],
      ['429 from the real limiter', String(s.realRateLimited)],
      ['values sent outside platform ranges', String(s.outOfRange)],
      ['values the schedule never asked for', String(s.unexpectedValues)],
      ['overlapping PATCHes on one pipe (info)', String(s.overlaps)],
      ['replica SIGKILLs (then restarted)', String(s.kills)],
      [`Redis restarts (${p.redisRestarts.join(', ') || 'none'})`, String(s.redisRestarts)],
      ['replica crashes', String(s.replicaCrashes)],
      ['unhandled rejections / exceptions', String(s.unhandled)],
      ['daemon log lines: warn / error', `${s.logs.warn} / ${s.logs.error}`],
      ['clean exits on SIGTERM', `${s.cleanExits.ok}/${s.cleanExits.of}`],
      ['pipes at final desired scaling', `${s.converged.pipes}/${s.converged.of}`],
      [
        'converged after last boundary',
        s.converged.afterLastBoundaryMs === null ? 'no' : seconds(s.converged.afterLastBoundaryMs),
      ],
      ['total time', seconds(s.totalMs)],
    ],
  );
  const c = s.checks;
  const given = Object.entries(c.verdicts.given)
    .map(([v, n]) => `${v} ${n}`)
    .join(', ');
  const checks = table(
    ['check', 'figure'],
    [
      [
        '1. 429s of the real limiter, per key',
        `${c.limited.total} (${Object.entries(c.limited.perKey)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')})`,
      ],
      ['2. changes answered 200', String(c.recorded.answered)],
      [
        '   audit lines: exactly one',
        `${c.recorded.once} (${c.recorded.landedLate} landed_late, ${c.recorded.outcomeUnknown} outcome_unknown)`,
      ],
      ['   audit lines: none / two or more', `${c.recorded.missingCount} / ${c.recorded.twiceCount}`],
      ['   landed_late lines of no 200 (info)', String(c.recorded.without200)],
      ['   answered to the killed replica, intent wiped (info)', String(c.recorded.unreceived)],
      [
        `3. history vs 200s${c.history.since === null ? '' : ` (since ${new Date(c.history.since).toISOString().slice(11, 19)})`}`,
        `${c.history.entries} change entries, ${c.history.answered} answered 200 (+${c.history.around} around the wipe)`,
      ],
      ['   pipes that differ', `${c.history.differ}/${c.history.pipes}`],
      ['4. verdicts given', given || '0'],
      ['   missed, target shown by the boundary', String(c.verdicts.missedShown)],
      ['   met, target not shown by the boundary', String(c.verdicts.metUnshown)],
      ['   starts given two verdicts', String(c.verdicts.twice)],
      [
        '   of starts after the last wipe: judged / contradicted',
        `${c.verdicts.afterWipe} / ${c.verdicts.contradictedAfterWipe}`,
      ],
      ['5. drift reported / of its own change', `${c.drift.reported} / ${c.drift.own}`],
    ],
  );
  const messages = Object.entries(s.logs.messages)
    .sort((a, b) => b[1] - a[1])
    .map(([m, n]) => `  ${String(n).padStart(5)}  ${m}`)
    .join('\n');
  return `${faults}\n\n${run}\n\n${checks}\n${messages ? `\ndaemon warn/error messages:\n${messages}\n` : ''}`;
}

/** Counts pino JSON lines by level; lines that are not JSON are left to the other checks. */
export function countLogLevels(lines: readonly string[]): ChaosSummary['logs'] {
  let warn = 0;
  let error = 0;
  const messages: Record<string, number> = {};
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    let rec: { level?: unknown; msg?: unknown };
    try {
      rec = JSON.parse(line) as typeof rec;
    } catch {
      continue;
    }
    if (typeof rec.level !== 'number') continue;
    if (rec.level < 40) continue;
    if (rec.level >= 50) error += 1;
    else warn += 1;
    const key = `${rec.level >= 50 ? 'error' : 'warn'}: ${String(rec.msg)}`;
    messages[key] = (messages[key] ?? 0) + 1;
  }
  return { warn, error, messages };
}
