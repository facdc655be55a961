// Text and JSON of `diff`: per pipe what the head config decides differently from the base, and
// the capacity each runs (and each one's lead plans spend early and short), so a pull request shows its effect before it ships.
import {
  count,
  CAPACITY_UNITS,
  UNIT_WORDS,
  type Capacity,
  type ChangeDiff,
  type ConfigDiff,
  type PipeDiff,
  type SimulatedChange,
  type Spent,
} from '../policy/index.js';
import { changeLine, formatInstant } from './policy-output.js';
import { formatTable } from './table.js';

const UNITS: readonly (readonly [keyof Capacity, string])[] = [
  ['replicaCoreHours', 'replica-core-hours'],
  ['replicaGbHours', 'replica-GB-hours'],
  ['concurrencySlotHours', 'concurrency-slot-hours'],
];

const num = (v: number): string => v.toFixed(1);
const signed = (v: number): string => (v > 0.05 ? `+${num(v)}` : v < -0.05 ? num(v) : '0.0');

/** Each unit the lead plans of either side spend early or short: [label, base, head]. */
function spentParts(spent: Spent): [string, number, number][] {
  const out: [string, number, number][] = [];
  for (const side of ['early', 'short'] as const)
    for (const k of CAPACITY_UNITS) {
      const label = UNIT_WORDS[k];
      const b = spent.base[side][k];
      const h = spent.head[side][k];
      if (b !== 0 || h !== 0) out.push([`${label} ${side}`, b, h]);
    }
  return out;
}

/** The capacity table's rows (unit, base, head, delta) as printed: the text output and the HTML
 *  report; then what each side's lead plans are expected to spend early and short, where any. */
export function capacityRows(total: ConfigDiff['total']): [string, string, string, string][] {
  return [
    ...UNITS.map(([k, label]): [string, string, string, string] => [
      label,
      num(total.base[k]),
      num(total.head[k]),
      signed(total.delta[k]),
    ]),
    ...spentParts(total.spent).map(([label, b, h]): [string, string, string, string] => [
      `${label} (lead plan)`,
      num(b),
      num(h),
      signed(h - b),
    ]),
  ];
}

function capacityTable(total: ConfigDiff['total']): string {
  return formatTable(capacityRows(total), [
    { header: 'capacity', value: (r) => r[0] },
    { header: 'base', value: (r) => r[1], align: 'right' },
    { header: 'head', value: (r) => r[2], align: 'right' },
    { header: 'delta', value: (r) => r[3], align: 'right' },
  ]);
}

/** "replica-core-hours 12.0 -> 14.0 (+2.0)" for each unit that this pipe uses; then what its lead
 *  plan is expected to spend early or short ("lead plan: replica-min early 28.0 -> 14.0 (-14.0)"). */
export function capacityLine(d: PipeDiff): string {
  const parts = UNITS.filter(([k]) => d.base[k] !== 0 || d.head[k] !== 0).map(
    ([k, label]) => `${label} ${num(d.base[k])} -> ${num(d.head[k])} (${signed(d.delta[k])})`,
  );
  const spent = spentParts(d.spent).map(([label, b, h]) => `${label} ${num(b)} -> ${num(h)} (${signed(h - b)})`);
  const held = parts.length > 0 ? parts.join(', ') : 'no capacity';
  return spent.length > 0 ? `${held}; lead plan: ${spent.join(', ')}` : held;
}

function describeChange(d: ChangeDiff): string[] {
  switch (d.kind) {
    case 'added':
      return [`  + ${changeLine(d.head)}   (head only)`];
    case 'removed':
      return [`  - ${changeLine(d.base)}   (base only)`];
    case 'moved':
      return [`  ~ moved: ${changeLine(d.base)}`, `         -> ${formatInstant(d.head.at)}`];
    case 'values':
      return [`  - ${changeLine(d.base)}`, `  + ${changeLine(d.head)}`];
  }
}

function headline(d: PipeDiff): string {
  const n = d.changes.length;
  const changes = `${count(n, 'change')} differ${n === 1 ? 's' : ''}`;
  switch (d.status) {
    case 'same':
      return `${d.pipe}: same`;
    case 'added':
      return `${d.pipe}: added (${count(n, 'change')})`;
    case 'removed':
      return `${d.pipe}: removed (had ${count(n, 'change')})`;
    case 'renamed':
      return `${d.pipe}: renamed from ${d.renamedFrom ?? '?'}${n > 0 ? `, ${changes}` : ''}`;
    case 'changed':
      return `${d.pipe}: ${changes}`;
  }
}

/** `skips`: per pipe that made no change, why the daemon skips it (`service_not_running: ...`). */
export function formatDiff(
  baseFile: string,
  headFile: string,
  step: string,
  diff: ConfigDiff,
  skips: Readonly<Record<string, string>> = {},
): string {
  const differing = diff.pipes.filter((d) => d.status !== 'same').length;
  const out = [
    `diff ${baseFile} -> ${headFile}, ${new Date(diff.from).toISOString()} .. ${new Date(diff.to).toISOString()}, every ${step}: ` +
      (differing === 0 ? 'the two decide the same' : `${count(differing, 'pipe')} differ${differing === 1 ? 's' : ''}`),
    '',
    capacityTable(diff.total),
  ];
  for (const d of diff.pipes) {
    const skip = skips[d.pipe];
    const why = !d.simulated ? ' (not simulated: pipe unknown)' : skip !== undefined ? ` (skipped: ${skip})` : '';
    out.push('', `${headline(d)}${why}`, `  ${capacityLine(d)}`);
    for (const c of d.changes) out.push(...describeChange(c));
  }
  return out.join('\n');
}

function changeJson(c: SimulatedChange): unknown {
  return {
    at: new Date(c.at).toISOString(),
    direction: c.direction,
    windows: c.windows,
    scaling: c.scaling,
    previous: c.previous,
  };
}

/** diff --json: one object with the totals and one entry per pipe. */
export function diffJson(diff: ConfigDiff): unknown {
  return {
    from: new Date(diff.from).toISOString(),
    to: new Date(diff.to).toISOString(),
    differs: diff.differs,
    total: diff.total,
    pipes: diff.pipes.map((d) => ({
      pipe: d.pipe,
      status: d.status,
      ...(d.renamedFrom !== undefined ? { renamedFrom: d.renamedFrom } : {}),
      simulated: d.simulated,
      base: d.base,
      head: d.head,
      delta: d.delta,
      spent: d.spent,
      changes: d.changes.map((c) => ({
        kind: c.kind,
        ...('base' in c ? { base: changeJson(c.base) } : {}),
        ...('head' in c ? { head: changeJson(c.head) } : {}),
      })),
    })),
  };
}
