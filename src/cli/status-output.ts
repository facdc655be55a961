// `pipescaler status` as text: whether a daemon is alive, then a row per pipe that fits the
// terminal (100 columns when stdout is not one), or everything at full length with --wide.
import {
  HEARTBEAT_TTL_MS,
  describeRefusal,
  isRejection,
  type ChangeOnItsWay,
  type ChangeState,
  type PipeStatus,
  type ReplicaBeat,
  type StoredOverrideValue,
  verdictText,
} from '../daemon/index.js';
import { SCALABLE_PIPE_STATES } from '../api/index.js';
import { printable } from '../api/internal.js';
import { count } from '../policy/index.js';
import { describeActuation } from './actuation-text.js';
import { keyLabel } from './policy-output.js';
import { compactScaling, rawScaling } from './scaling-text.js';
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

const ago = (now: number, at: number): string => formatAge(Math.max(0, Math.round((now - at) / 1000)));
const iso = (ms: number): string => new Date(ms).toISOString();

/** What the platform last showed: its values; its state instead when it takes no scaling
 *  (Stopped, Failed...: --wide and --json have the values). */
function platformText(s: PipeStatus): string {
  const state = s.platform.state;
  return state === null || SCALABLE_PIPE_STATES.has(state) ? compactScaling(s.platform.values) : state;
}

/** How long ago the platform showed it ("-": never read). */
const readAge = (s: PipeStatus, now: number): string => (s.platform.at === null ? '-' : ago(now, s.platform.at));

/** The words of a change's state. */
const STATE_WORDS: Record<ChangeState, string> = {
  sending: 'sending',
  confirming: 'confirming',
  outcome_unknown: 'outcome unknown',
  unconfirmed: 'unconfirmed',
};

/** The values the pipe is to hold once the change is in force (its fields over the platform's). */
const changeTarget = (s: PipeStatus, c: ChangeOnItsWay): string =>
  compactScaling({ ...s.platform.values, ...c.target });

/**
 * The change on its way, "2x500m/2GB outcome unknown 15s" (its target, state, and how long it has
 * been so); with none, "=" when the desire is what the platform shows, the desire not sent yet
 * ("8x2000m/8GB wanted": STATUS says what holds it), or "-" with no desire.
 */
function changeCell(s: PipeStatus, now: number): string {
  const c = s.change;
  if (c) return `${changeTarget(s, c)} ${STATE_WORDS[c.state]} ${ago(now, c.since)}`;
  const want = compactScaling(s.desired);
  if (want === '-') return '-';
  return want === compactScaling(s.platform.values) ? '=' : `${want} wanted`;
}

/** A status as its fact ("override 8 repl") and what follows it (" (2h left): incident 4711"):
 *  a narrow table cuts what follows, never the fact. */
interface StatusParts {
  readonly fact: string;
  readonly rest?: string;
}

function statusParts(s: PipeStatus, wide: boolean, now: number): StatusParts {
  if (s.parked) return { fact: `parked ${s.parked.code}` };
  // a wrong key fails nothing until a change is due: the pipe is not ok meanwhile
  if (s.keyRefused && isRejection(s.keyRefused))
    return { fact: `key refused ${s.keyRefused.status} ${s.keyRefused.code}` };
  if (s.paused) {
    const { until, scope, reason } = s.paused;
    const whole = scope === 'all' ? ' (all pipes)' : scope === 'config' ? ' (config)' : '';
    const left = until === undefined ? '' : wide ? ` until ${iso(until)}` : `, ${ago(until, now)} left`;
    return { fact: `paused${whole}`, rest: `${left}: ${reason}` };
  }
  if (s.override && s.override.until > now && s.override.setAt <= now) return overrideParts(s.override, wide, now);
  // the platform's text starts with its reason (BAD_REQUEST: ...), which the code says already
  if (s.lastError)
    return wide
      ? { fact: `error ${s.lastError.code}`, rest: `: ${s.lastError.message.replace(/^[A-Z][A-Z_]+: /, '')}` }
      : { fact: `error ${s.lastError.code}` };
  // reason codes stay whole: they are what the docs and the metrics name
  return { fact: s.reason ?? 'ok' };
}

const joined = (p: StatusParts): string => p.fact + (p.rest ?? '');

/** "override 8 repl (119m left): incident 4711" (--wide: "override replicas=8 until <instant>");
 *  a manual one (onDrift) says so: "held by hand 7 repl (119m left): manual". */
function overrideParts(o: StoredOverrideValue, wide: boolean, now: number): StatusParts {
  const hand = wide ? ' (by hand)' : ' by hand';
  const what = o.source === 'manual' ? `${o.mode === 'floor' ? 'floor' : 'held'}${hand}` : 'override';
  const shown = wide ? rawScaling(o.values) : compactScaling(o.values);
  const values = o.mode === 'floor' ? `>= ${shown}` : shown;
  const ramp = o.ramp ? `, ramp ${rawScaling(o.ramp.step)} every ${formatAge(Math.round(o.ramp.everyMs / 1000))}` : '';
  const left = wide ? ` until ${iso(o.until)}${ramp}` : ` (${ago(o.until, now)} left)`;
  return { fact: `${what} ${values}`, rest: `${left}: ${o.reason}` };
}

/** The pipe's window verdict: "met", "late 3m", "missed", "excl paused"; "due" while the last
 *  start is not settled yet; "-" before any. Wide: with the window, the start and the details. */
function atTarget(s: PipeStatus, wide: boolean): string {
  const v = s.lastVerdict;
  if (s.verdictDue && (!v || s.verdictDue.boundary > v.boundary))
    return wide ? `due: ${s.verdictDue.windows.join('+')} at ${iso(s.verdictDue.boundary)}, not confirmed yet` : 'due';
  if (!v) return '-';
  if (wide) return verdictText(v);
  if (v.verdict === 'late') return `late ${formatAge(Math.ceil((v.lateMs ?? 0) / 1000))}`;
  if (v.verdict === 'excluded') return `excl ${v.reason ?? ''}`.trim();
  return v.verdict;
}

/** "07:58:10Z", a clock of the day in UTC. */
const clock = (ms: number): string => `${iso(ms).slice(11, 19)}Z`;

/** "send from 2026-11-25T07:58:10Z, at target by 07:59:40Z, confirmed by 07:59:45Z for 08:00:00Z
 *  (1m30s actuation: ...)"; with no actuation counted, no confirmation read is planned. */
function nextUpWide(s: PipeStatus): string | null {
  const n = s.nextScaleUp;
  if (!n) return null;
  const by =
    n.atTargetAt === undefined
      ? `at target by ${clock(n.expectedAt)}`
      : `at target by ${clock(n.atTargetAt)}, confirmed by ${clock(n.expectedAt)}`;
  return (
    `send from ${iso(n.sendFrom).replace(/\.\d+Z$/, 'Z')}, ${by} for ${clock(n.boundary)} ` +
    `(${describeActuation(n.actuationMs, n.actuation, s.kind)})`
  );
}

const decided = (s: PipeStatus): string => (s.ageSeconds === null ? 'never' : formatAge(s.ageSeconds));
const window = (s: PipeStatus): string => (s.lastDecision === null ? '-' : s.windows.join(',') || 'baseline');

type Col = Column<PipeStatus> & { readonly optional?: boolean };

/**
 * The narrow table: what an operator looks for first, always there: the pipe, what the platform
 * last showed and how long ago, the change on its way, the status (the reason code, a pause, an
 * override, an error). The key (when the pipes use more than one), the verdict (once a window
 * start had one), the window and the decision's age come in when they fit whole. To fit, the pipe
 * names lose their middle, a status its free text, never its fact.
 */
const narrow = (rows: readonly PipeStatus[], now: number, keys: boolean, verdicts: boolean): readonly Col[] => {
  const parts = rows.map((s) => statusParts(s, false, now));
  const facts = Math.max(0, ...parts.map((p) => p.fact.length + (p.rest === undefined ? 0 : 1)));
  const byRow = new Map(rows.map((s, i) => [s, parts[i]] as const));
  return [
    { header: 'PIPE', value: (s) => s.pipe, shrink: 2, floor: 12, cut: 'middle' },
    ...(keys ? [{ header: 'KEY', value: keyLabel, optional: true }] : []),
    { header: 'PLATFORM', value: platformText },
    { header: 'READ', value: (s) => readAge(s, now) },
    { header: 'CHANGE', value: (s) => changeCell(s, now) },
    { header: 'WINDOW', value: window, optional: true },
    { header: 'DECIDED', value: decided, optional: true },
    ...(verdicts ? [{ header: 'VERDICT', value: (s: PipeStatus) => atTarget(s, false), optional: true }] : []),
    {
      header: 'STATUS',
      value: (s) => {
        const p = byRow.get(s);
        return p ? joined(p) : '';
      },
      shrink: 1,
      floor: Math.max(facts, 6),
    },
  ];
};

/** The widest line of a table. */
const widthOf = (table: string): number => Math.max(0, ...table.split('\n').map((l) => l.length));

/** The narrow table in `width` columns: the optional columns that fit with every pipe's name
 *  whole (the statuses cut to their facts at most), in the order given. */
function narrowTable(rows: readonly PipeStatus[], cols: readonly Col[], width: number): string {
  const dropped = new Set(cols.filter((c) => c.optional === true));
  const shown = (): Col[] => cols.filter((c) => !dropped.has(c));
  const fits = (): boolean =>
    widthOf(
      formatTable(
        rows,
        shown().map((c) => (c.cut === 'middle' ? { ...c, shrink: undefined } : c)),
        width,
      ),
    ) <= width;
  for (const c of cols) {
    if (c.optional !== true) continue;
    dropped.delete(c);
    if (!fits()) dropped.add(c);
  }
  return formatTable(rows, shown(), width);
}

/** --wide's table: the narrow table's columns whole, the key and the verdict; the whole values,
 *  instants and texts on the pipe's own lines under its row. */
const wide = (now: number): readonly Column<PipeStatus>[] => [
  { header: 'PIPE', value: (s) => s.pipe },
  // the pipe's lines name it whole
  { header: 'KEY', value: keyLabel, shrink: 1, floor: 8 },
  { header: 'PLATFORM', value: platformText },
  { header: 'READ', value: (s) => readAge(s, now) },
  { header: 'CHANGE', value: (s) => changeCell(s, now) },
  { header: 'VERDICT', value: (s) => atTarget(s, false) },
  { header: 'STATUS', value: (s) => statusParts(s, false, now).fact },
];

/** The pipe's lines under its row in --wide: the platform's values and the read's instant, the
 *  change with its instants, the decision, the verdict, the next scale-up, the status in full. */
function wideDetails(s: PipeStatus, now: number): string[] {
  const read = s.platform.at === null ? 'never read' : `read ${iso(s.platform.at)}`;
  const lines = [`platform: ${rawScaling(s.platform.values)} (${s.kind ?? '?'}, ${s.state ?? '?'}), ${read}`];
  const c = s.change;
  if (c) {
    const sent = `sent ${iso(c.sentAt)}`;
    const again = c.resends > 0 ? `, sent ${c.resends === 1 ? 'again' : `${c.resends + 1} times`}` : '';
    const code = c.code === undefined ? '' : ` (${c.code})`;
    const state =
      c.state === 'sending' || c.state === 'confirming'
        ? `${STATE_WORDS[c.state]}, ${sent}`
        : `${STATE_WORDS[c.state]} since ${iso(c.since)}${code}, ${sent}`;
    lines.push(`change: ${rawScaling(c.target)} ${state}${again}`);
  }
  const d = s.lastDecision;
  const reason = s.reason ? `, reason ${s.reason}` : '';
  lines.push(
    `decision: ${d ? `${d.action} ${iso(d.at)} (${window(s)})` : 'none yet'}, desired ${rawScaling(s.desired)}${reason}; ` +
      `policy ${s.policy}, key ${keyLabel(s)}, ${count(s.drifts, 'drift')}`,
  );
  const verdict = atTarget(s, true);
  if (verdict !== '-') lines.push(`verdict: ${verdict}`);
  const up = nextUpWide(s);
  if (up !== null) lines.push(`next scale-up: ${up}`);
  const status = statusParts(s, true, now);
  if (status.fact !== 'ok' && status.fact !== s.reason) lines.push(`status: ${joined(status)}`);
  return lines;
}

/** --wide: the table, each pipe's row followed by its lines, all within WIDE columns. */
function wideText(rows: readonly PipeStatus[], now: number): string {
  const [head = '', ...lines] = formatTable(rows, wide(now), WIDE).split('\n');
  // texts from Redis and the platform on their lines without terminal control, as in the table
  const indent = (l: string): string[] =>
    wrap(printable(l), WIDE - 4)
      .split('\n')
      .map((x) => `    ${x}`);
  return [head, ...rows.flatMap((s, i) => [lines[i] ?? '', ...wideDetails(s, now).flatMap(indent)])].join('\n');
}

/** The width --wide fits. */
export const WIDE = 160;

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
  const table = o.wide
    ? wideText(statuses, o.now)
    : narrowTable(statuses, narrow(statuses, o.now, manyKeys, verdicts), o.width);
  const refused = new Map(statuses.flatMap((s) => (s.keyRefused ? [[s.key, s.keyRefused] as const] : [])));
  const lines = [...[...refused].map(([key, r]) => describeRefusal(key, r)), ...keyLines];
  const keys = lines.map((l) => wrap(l, o.wide ? WIDE : o.width));
  return [...formatReplicas(replicas, o.now, o.wide), '', table, '', ...keys].join('\n') + '\n';
}
