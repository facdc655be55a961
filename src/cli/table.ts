// One small aligned-table formatter for every `pipescaler api` listing.

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

/** Renders an absent value as "-", a list as "a,b", anything else as its string. */
export function cell(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(cell).join(',');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Header line plus one line per row, columns padded to their widest cell, two spaces apart. */
export function formatTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const grid = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => cell(c.value(r))))];
  const widths = columns.map((_, i) => Math.max(...grid.map((line) => (line[i] ?? '').length)));
  return grid
    .map((line) => line.map((s, i) => s.padEnd(widths[i] ?? 0)).join('  ').trimEnd())
    .join('\n');
}
