// `plan --html`: the plan at one instant as one page in the shell of the HTML reports
// (html-report.ts: its page, tables and escaping). What each pipe decides at the instant; the
// capacity each key's lead plan is expected to spend early and short (early-capacity.ts), in
// total; then each key's slots by boundary, every slot with its send, the instant it is expected
// at target and confirmed, and what it spends, with a total per boundary and per key. The figures
// are the plan's own (PlanEntry.leadSlots): the text's `early` row and --json's `leadSlots` are
// the same numbers. Every name from the config (pipes, keys, policies, windows) is escaped.
import {
  addMinutes,
  CAPACITY_UNITS,
  count,
  formatDuration,
  formatMinutes,
  NO_MINUTES,
  UNIT_WORDS,
  type BoundaryCapacity,
  type CapacityUnit,
  type PlanEntry,
  type PlannedSlot,
} from '../policy/index.js';
import { escapeHtml, htmlTable, renderPage, type Column, type Row } from './html-report.js';
import { clockZ, formatInstant, keyLabel, sendText, targetText } from './policy-output.js';

/** One slot of a key's lead plan, with the pipe it is for. */
interface KeySlot extends PlannedSlot {
  readonly entry: PlanEntry;
}

/** A key's slots grouped by boundary, earliest first; in a boundary, by send. */
interface KeyPlanPage {
  readonly key: string;
  readonly label: string;
  readonly boundaries: readonly (readonly [number, readonly KeySlot[]])[];
}

const NONE: BoundaryCapacity = { early: NO_MINUTES, short: NO_MINUTES };
const SIDES = ['early', 'short'] as const;

function sum(slots: readonly PlannedSlot[]): BoundaryCapacity {
  return slots.reduce<BoundaryCapacity>(
    (t, { capacity: c }) => ({ early: addMinutes(t.early, c.early), short: addMinutes(t.short, c.short) }),
    NONE,
  );
}

/** The shown pipes' slots, per key (config order), by boundary. */
function byKey(entries: readonly PlanEntry[]): KeyPlanPage[] {
  const keys = new Map<string, { label: string; slots: KeySlot[] }>();
  for (const entry of entries) {
    for (const s of entry.leadSlots) {
      let k = keys.get(entry.pipe.key);
      if (!k) keys.set(entry.pipe.key, (k = { label: keyLabel(entry.pipe), slots: [] }));
      k.slots.push({ ...s, entry });
    }
  }
  return [...keys].map(([key, { label, slots }]) => {
    const boundaries = new Map<number, KeySlot[]>();
    for (const s of [...slots].sort((a, b) => a.slot.boundary - b.slot.boundary || a.slot.start - b.slot.start))
      boundaries.set(s.slot.boundary, [...(boundaries.get(s.slot.boundary) ?? []), s]);
    return { key, label, boundaries: [...boundaries] };
  });
}

/** The units any slot spends early or short: a column each for early and for short. */
function unitsOf(slots: readonly PlannedSlot[]): CapacityUnit[] {
  return CAPACITY_UNITS.filter((u) => slots.some((s) => s.capacity.early[u] > 0 || s.capacity.short[u] > 0));
}

const unitColumns = (units: readonly CapacityUnit[]): Column[] =>
  SIDES.flatMap((side) => units.map((u) => ({ header: `${UNIT_WORDS[u]} ${side}`, numeric: true })));

const unitCells = (units: readonly CapacityUnit[], c: BoundaryCapacity): string[] =>
  SIDES.flatMap((side) => units.map((u) => formatMinutes(c[side][u])));

/** "2026-11-23T07:00Z": an instant as data, for the page's rows. */
const iso = (ms: number): string => new Date(ms).toISOString();

function decisionsTable(entries: readonly PlanEntry[]): string {
  return htmlTable({
    className: 'decisions',
    caption: 'What each pipe decides at the instant',
    columns: [
      { header: 'pipe' },
      { header: 'policy' },
      { header: 'key' },
      { header: 'windows' },
      { header: 'target' },
      { header: 'send' },
      { header: 'next scale-up' },
    ],
    body: entries.map((e) => {
      const next = e.leadSlots[0]?.slot;
      return {
        cells: [
          e.pipe.name,
          e.pipe.policy,
          keyLabel(e.pipe),
          e.decision.windows.length > 0 ? e.decision.windows.join(' + ') : 'baseline',
          targetText(e),
          sendText(e),
          next ? `from ${clockZ(next.start)} for ${formatInstant(next.boundary)}` : '-',
        ],
        data: { pipe: e.pipe.name },
      };
    }),
  });
}

function totalsTable(keys: readonly KeyPlanPage[], units: readonly CapacityUnit[]): string {
  const slotsOf = (k: KeyPlanPage): KeySlot[] => k.boundaries.flatMap(([, s]) => s);
  const all = keys.flatMap(slotsOf);
  return htmlTable({
    className: 'spent-total',
    caption: 'Capacity the lead plans are expected to spend early and short (minutes of each unit)',
    columns: [
      { header: 'key' },
      { header: 'scale-ups', numeric: true },
      { header: 'boundaries', numeric: true },
      ...unitColumns(units),
    ],
    body: keys.map((k) => ({
      cells: [k.label, String(slotsOf(k).length), String(k.boundaries.length), ...unitCells(units, sum(slotsOf(k)))],
      data: { key: k.key },
    })),
    foot: [
      {
        cells: [
          'all keys',
          String(all.length),
          String(new Set(all.map((s) => s.slot.boundary)).size),
          ...unitCells(units, sum(all)),
        ],
        className: 'total',
      },
    ],
  });
}

/** The columns of a key's slots before its figures. */
const SLOT_COLUMNS: readonly Column[] = [
  { header: 'pipe' },
  { header: 'send from' },
  { header: 'lead', numeric: true },
  { header: 'at target by' },
  { header: 'confirmed by' },
  { header: 'actuation', numeric: true },
];

/** A total under slots: its label, the slot columns left empty, then its figures. */
function totalRow(label: string, units: readonly CapacityUnit[], c: BoundaryCapacity, data?: Row['data']): Row {
  const blank = SLOT_COLUMNS.slice(1).map(() => '');
  return { cells: [label, ...blank, ...unitCells(units, c)], className: 'total', ...(data ? { data } : {}) };
}

function keySection(k: KeyPlanPage, units: readonly CapacityUnit[]): string {
  const slots = k.boundaries.flatMap(([, s]) => s);
  const body = k.boundaries.map(([boundary, list]): Row[] => [
    { cells: [`boundary ${formatInstant(boundary)}`], heads: true, data: { boundary: iso(boundary) } },
    ...list.map(({ entry, slot, capacity }) => ({
      cells: [
        entry.pipe.name,
        clockZ(slot.start),
        formatDuration(slot.boundary - slot.start),
        clockZ(slot.atTargetAt ?? slot.expectedAt),
        slot.atTargetAt !== undefined ? clockZ(slot.expectedAt) : '-',
        formatDuration(slot.actuationMs),
        ...unitCells(units, capacity),
      ],
      data: { pipe: entry.pipe.name, boundary: iso(boundary) },
    })),
    totalRow(`total: ${count(list.length, 'scale-up')}`, units, sum(list), { boundary: iso(boundary) }),
  ]);
  const keyTotal = `key total: ${count(slots.length, 'scale-up')}, ${count(k.boundaries.length, 'boundary', 'boundaries')}`;
  return (
    `<section class="key" data-key="${escapeHtml(k.key)}"><h2>key ${escapeHtml(k.label)}</h2>` +
    htmlTable({
      className: 'slots',
      caption: `Lead slots of key ${k.label} by boundary: each scale-up, then the boundary's total`,
      columns: [...SLOT_COLUMNS, ...unitColumns(units)],
      body,
      foot: [totalRow(keyTotal, units, sum(slots))],
      data: { key: k.key },
    }) +
    '</section>'
  );
}

/** The page of `plan --html`: `subtitle` says which config, at which instant, read from where. */
export function renderPlanReport(entries: readonly PlanEntry[], subtitle: string): string {
  const keys = byKey(entries);
  const units = unitsOf(entries.flatMap((e) => e.leadSlots));
  const slots =
    keys.length === 0
      ? '<p class="note">No lead slot in the plan: no pipe shown has a scale-up due (leadTime auto) at a boundary of the plan in force, up to 48 hours ahead.</p>'
      : totalsTable(keys, units) + keys.map((k) => keySection(k, units)).join('\n');
  return renderPage({
    title: 'pipescaler plan',
    subtitle,
    body:
      decisionsTable(entries) +
      '<h2>Capacity spent early and short</h2>' +
      '<p class="note">Each slot counts the step its boundary makes, in force from its send plus the actuation counted on: ' +
      'early before the boundary, short after it. Times of slots in UTC.</p>' +
      slots,
  });
}
