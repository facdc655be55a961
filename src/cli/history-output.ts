// `pipescaler history` as a table that fits 100 columns: when, pipe, outcome, reason, how many
// times, what moved and the windows; under an entry with one, why in a sentence (a skip's or a
// pause's own words), indented, as it would not fit a column.
import type { HistoryEntry } from '../history/index.js';
import { compactScaling } from './scaling-text.js';
import { formatTable, wrap, type Column } from './table.js';

/** "11-23 08:00:05" in UTC: the year is rarely in doubt within six weeks. */
function when(ms: number): string {
  return new Date(ms).toISOString().slice(5, 19).replace('T', ' ');
}

function moved(e: HistoryEntry): string {
  if (!e.before && !e.after) return '';
  return `${compactScaling(e.before)} -> ${compactScaling(e.after)}`;
}

const COLUMNS: Column<HistoryEntry>[] = [
  { header: 'LAST (UTC)', value: (e) => when(e.last) },
  { header: 'PIPE', value: (e) => e.pipe, shrink: 3, floor: 12 },
  { header: 'OUTCOME', value: (e) => e.outcome },
  { header: 'REASON', value: (e) => e.reason, shrink: 4, floor: 10 },
  { header: 'N', value: (e) => e.count, align: 'right' },
  { header: 'BEFORE -> AFTER', value: moved, shrink: 2, floor: 15 },
  { header: 'WINDOWS', value: (e) => e.windows, shrink: 1, floor: 7 },
];

const INDENT = '    ';

export function formatHistory(entries: readonly HistoryEntry[], width = 100): string {
  if (entries.length === 0) return 'no outcomes recorded in that time';
  const [header = '', ...rows] = formatTable(entries, COLUMNS, width).split('\n');
  const lines = [header];
  rows.forEach((row, i) => {
    lines.push(row);
    const why = entries[i]?.message;
    if (why !== undefined)
      for (const l of wrap(`why: ${why}`, width - INDENT.length, '     ').split('\n')) lines.push(`${INDENT}${l}`);
  });
  return lines.join('\n');
}
