// `pipescaler status` as text: whether a daemon is alive, then a row per pipe that fits the
// terminal (100 columns when stdout is not one), or everything at full length with --wide.
import {
  HEARTBEAT_TTL_MS,
  describeRefusal,
  isRejection,
  type ChangeOnItsWay,
  type PipeStatus,
  type ReplicaBeat,
  type StoredOverrideValue,
  verdictText,
} from '../daemon/index.js';
import { count } from '../policy/index.js';
import { describeActuation } from './actuation-text.js';
import { keyLabel } from './policy-output.js';
import { compactScaling, formatValues, rawScaling } from './scaling-text.js';
import { formatTable, wrap, type Column } from './table.js';

export interface StatusTextOptions {
  readonly wide: boolean;
  /** Columns of the terminal; ignored with wide. */
  readonly width: number;
  /** Epoch ms, for the ages of the heartbeats. */
  readonly now: number;
}

/** 45s, 12m, 3h, 2d: how old something is, in its largest unit. */
export function formatAge(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7_200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3_600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** What the pipe should have: "=" when that is what it has (the common case, and a narrow column). */
function desired(s: PipeStatus): string {
  const want = compactScaling(s.desired);
  return want !== '-' && want === compactScaling(s.applied) ? '=' : want;
}

function statusText(s: PipeStatus, wide: boolean, now: number): string {
  if (s.parked) return `parked ${s.parked.code}`;
  // a wrong key fails nothing until a change is due: the pipe is not ok meanwhile
  if (s.keyRefused && isRejection(s.keyRefused)) return `key refused ${s.keyRefused.status} ${s.keyRefused.code}`;
  if (s.paused) {
    const { until, scope, reason } = s.paused;
    if (wide) {
      const whole = scope === 'all' ? ' (all pipes)' : scope === 'config' ? ' (config)' : '';
      return `paused${whole}${until === undefined ? '' : ` until ${new Date(until).toISOString()}`}: ${reason}`;
    }
    const parts = [
      scope === 'all' ? 'all' : scope === 'config' ? 'config' : '',
      until === undefined ? '' : `${formatAge(Math.max(0, Math.round((until - now) / 1000)))} left`,
    ];
    const what = parts.filter((x) => x !== '').join(', ');
    return `paused${what ? ` (${what})` : ''}: ${reason}`;
  }
  if (s.override && s.override.until > now && s.override.setAt <= now) return overrideText(s.override, wide, now);
  if (s.change?.state === 'unconfirmed') return changeText(s.change, wide, now);
  // the platform's text starts with its reason (BAD_REQUEST: ...), which the code says already
  if (s.lastError)
    return wide
      ? `error ${s.lastError.code}: ${s.lastError.message.replace(/^[A-Z][A-Z_]+: /, '')}`
      : `error ${s.lastError.code}`;
  if (s.change) return changeText(s.change, wide, now);
  return 'ok';
}

/** "confirming replicas 6 (sent 45s ago)"; "unconfirmed replicas 6 (sent 12m ago, sent again)". */
function changeText(c: ChangeOnItsWay, wide: boolean, now: number): string {
  const values = wide ? rawScaling(c.target) : formatValues(c.target);
  const again = c.resends > 0 ? `, sent ${c.resends === 1 ? 'again' : `${c.resends + 1} times`}` : '';
  if (wide) {
    const since = c.unconfirmedAt === null ? '' : `, unconfirmed since ${new Date(c.unconfirmedAt).toISOString()}`;
    return `${c.state} ${values} (sent ${new Date(c.sentAt).toISOString()}${since}${again})`;
  }
  return `${c.state} ${values} (sent ${formatAge(Math.max(0, Math.round((now - c.sentAt) / 1000)))} ago${again})`;
}

/** "override replicas 8 (1h59m left): incident 4711"; a manual one (onDrift) says so. */
function overrideText(o: StoredOverrideValue, wide: boolean, now: number): string {
  const what = o.source === 'manual' ? (o.mode === 'floor' ? 'floor (by hand)' : 'held (by hand)') : 'override';
  const shown = wide ? rawScaling(o.values) : formatValues(o.values);
  const values = o.mode === 'floor' ? `>= ${shown}` : shown;
  const ramp = o.ramp ? `, ramp ${rawScaling(o.ramp.step)} every ${formatAge(Math.round(o.ramp.everyMs / 1000))}` : '';
  const left = wide
    ? ` until ${new Date(o.until).toISOString()}${ramp}`
    : ` (${formatAge(Math.max(0, Math.round((o.until - now) / 1000)))} left)`;
  return `${what} ${values}${left}: ${o.reason}`;
}

/** The pipe's window verdict: "met", "late 3m", "missed", "excl paused"; "due" while the last
 *  start is not settled yet; "-" before any. Wide: with the window, the start and the details. */
function atTarget(s: PipeStatus, wide: boolean): string {
  const v = s.lastVerdict;
  if (s.verdictDue && (!v || s.verdictDue.boundary > v.boundary))
    return wide
      ? `due: ${s.verdictDue.windows.join('+')} at ${new Date(s.verdictDue.boundary).toISOString()}, not confirmed yet`
      : 'due';
  if (!v) return '-';
  if (wide) return verdictText(v);
  if (v.verdict === 'late') return `late ${formatAge(Math.ceil((v.lateMs ?? 0) / 1000))}`;
  if (v.verdict === 'excluded') return `excl ${v.reason ?? ''}`.trim();
  return v.verdict;
}

/** "07:58:10Z", a clock of the day in UTC. */
const clock = (ms: number): string => `${new Date(ms).toISOString().slice(11, 19)}Z`;

/** "send from 2026-11-25T07:58:10Z, at target by 07:59:40Z, confirmed by 07:59:45Z for 08:00:00Z
 *  (1m30s actuation: ...)"; with no actuation counted, no confirmation read is planned. */
function nextUpWide(s: PipeStatus): string {
  const n = s.nextScaleUp;
  if (!n) return '-';
  const by =
    n.atTargetAt === undefined
      ? `at target by ${clock(n.expectedAt)}`
      : `at target by ${clock(n.atTargetAt)}, confirmed by ${clock(n.expectedAt)}`;
  return (
    `send from ${new Date(n.sendFrom).toISOString().replace(/\.\d+Z$/, 'Z')}, ${by} for ${clock(n.boundary)} ` +
    `(${describeActuation(n.actuationMs, n.actuation, s.kind)})`
  );
}

const age = (s: PipeStatus): string => (s.ageSeconds === null ? 'never' : formatAge(s.ageSeconds));
const window = (s: PipeStatus): string => (s.lastDecision === null ? '-' : s.windows.join(',') || 'baseline');

/** Cut to fit in this order: the status's details (--wide has them), window names, keys, pipe names.
 *  The key shows when the pipes do not all use the same one, the verdict once a window start had one. */
const narrow = (now: number, keys: boolean, verdicts: boolean): readonly Column<PipeStatus>[] => [
  { header: 'PIPE', value: (s) => s.pipe, shrink: 4, floor: 12 },
  ...(keys ? [{ header: 'KEY', value: keyLabel, shrink: 3, floor: 8 }] : []),
  // the kind shows in the values (replicas or concurrency; none: a database pipe)
  { header: 'STATE', value: (s) => s.state ?? '?', shrink: 5, floor: 7 },
  { header: 'APPLIED', value: (s) => compactScaling(s.applied) },
  { header: 'DESIRED', value: desired },
  { header: 'WINDOW', value: window, shrink: 2, floor: 10 },
  { header: 'AGE', value: age },
  ...(verdicts ? [{ header: 'VERDICT', value: (s: PipeStatus) => atTarget(s, false) }] : []),
  // reason codes stay whole: they are what the docs and the metrics name
  { header: 'REASON', value: (s) => s.reason },
  { header: 'STATUS', value: (s) => statusText(s, false, now), shrink: 1, floor: 10 },
];

const wide = (now: number, ups: boolean): readonly Column<PipeStatus>[] => [
  { header: 'PIPE', value: (s) => s.pipe },
  { header: 'POLICY', value: (s) => s.policy },
  { header: 'KEY', value: keyLabel },
  { header: 'KIND/STATE', value: (s) => `${s.kind ?? '?'}/${s.state ?? '?'}` },
  { header: 'APPLIED', value: (s) => rawScaling(s.applied) },
  { header: 'DESIRED', value: (s) => rawScaling(s.desired) },
  { header: 'WINDOW', value: window },
  {
    header: 'LAST DECISION',
    value: (s) => (s.lastDecision ? `${s.lastDecision.action} ${new Date(s.lastDecision.at).toISOString()}` : '-'),
  },
  { header: 'AGE', value: age },
  { header: 'REASON', value: (s) => s.reason },
  { header: 'DRIFTS', value: (s) => s.drifts },
  { header: 'AT TARGET', value: (s) => atTarget(s, true) },
  ...(ups ? [{ header: 'NEXT SCALE-UP', value: nextUpWide }] : []),
  { header: 'STATUS', value: (s) => statusText(s, true, now) },
];

export const NO_DAEMON = `no daemon alive (no heartbeat in the last ${HEARTBEAT_TTL_MS / 1000} s): nothing is scaling these pipes`;
/** What to do about it (status also exits 3). */
export const START_DAEMON = '  start one: pipescaler run -c <config> (the demo on the embedded cloud: npm start)';

/** The line (or lines, with wide) saying which daemon replicas are alive. */
export function formatReplicas(replicas: readonly ReplicaBeat[], now: number, wide: boolean): string[] {
  const seconds = (at: number) => formatAge(Math.max(0, Math.round((now - at) / 1000)));
  const [newest] = replicas;
  if (newest === undefined) {
    return [NO_DAEMON, START_DAEMON];
  }
  const head = `daemons: ${count(replicas.length, 'replica')} alive, last heartbeat ${seconds(newest.at)} ago`;
  if (!wide) return [head];
  return [
    head,
    ...replicas.map(
      (r) =>
        `  ${r.host} pid ${r.pid}, version ${r.version}, up ${seconds(r.startedAt)}, heartbeat ${seconds(r.at)} ago, ${count(r.pipes, 'pipe')}${r.dryRun ? ', dryRun' : ''} (${r.id})`,
    ),
  ];
}

/** The whole text of `status`: daemons, the table, each key's budget. */
export function formatStatusText(
  statuses: readonly PipeStatus[],
  replicas: readonly ReplicaBeat[],
  keyLines: readonly string[],
  o: StatusTextOptions,
): string {
  const manyKeys = new Set(statuses.map(keyLabel)).size > 1;
  const verdicts = statuses.some((s) => s.lastVerdict !== null || s.verdictDue !== null);
  const ups = statuses.some((s) => s.nextScaleUp !== null);
  const table = o.wide
    ? formatTable(statuses, wide(o.now, ups))
    : formatTable(statuses, narrow(o.now, manyKeys, verdicts), o.width);
  const refused = new Map(statuses.flatMap((s) => (s.keyRefused ? [[s.key, s.keyRefused] as const] : [])));
  const lines = [...[...refused].map(([key, r]) => describeRefusal(key, r)), ...keyLines];
  const keys = o.wide ? lines : lines.map((l) => wrap(l, o.width));
  return [...formatReplicas(replicas, o.now, o.wide), '', table, '', ...keys].join('\n') + '\n';
}
