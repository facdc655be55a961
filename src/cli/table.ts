// One small aligned-table formatter for every listing (`pipescaler api`, `status`).
import { printable } from '../api/internal.js';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
  /** May be cut (with "…") to fit a width: the lowest number first, each down to its floor before
   *  the next gives up a character. Absent: never cut. */
  shrink?: number;
  /** The narrowest a shrinking column gets; default its header's length, at least 4. */
  floor?: number;
  /** 'right' pads on the left, for numbers; default 'left'. */
  align?: 'left' | 'right';
  /** Where a cut cell loses its characters: 'end' (default), or 'middle' for names whose end tells
   *  them apart ("orders-ev…central-1", "orders-ev…st-1"). */
  cut?: 'end' | 'middle';
}

/** Renders an absent value as "-", a list as "a,b", anything else as its string; a text from
 *  elsewhere (the platform, Redis) on one line without terminal control. */
export function cell(v: unknown): string {
  if (v === null || v === undefined || v === '') return '-';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(cell).join(',');
  if (typeof v === 'string') return printable(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return v.toString();
  return printable(JSON.stringify(v));
}

const GAP = 2;

/**
 * Header line plus one line per row, columns padded to their widest cell, two spaces apart. With
 * a width, the shrinkable columns give up characters (in their shrink order, each down to its
 * floor) until every line fits, and their cells are cut with "…".
 */
export function formatTable<T>(rows: readonly T[], columns: readonly Column<T>[], width?: number): string {
  const grid = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => cell(c.value(r))))];
  const widths = columns.map((_, i) => Math.max(...grid.map((line) => (line[i] ?? '').length)));
  if (width !== undefined) {
    const order = columns
      .flatMap((c, i) => (c.shrink === undefined ? [] : [{ c, i, shrink: c.shrink }]))
      .sort((a, b) => a.shrink - b.shrink);
    let over = widths.reduce((a, w) => a + w, 0) + GAP * (columns.length - 1) - width;
    for (const { c, i } of order) {
      if (over <= 0) break;
      const floor = Math.max(c.floor ?? 0, c.header.length, 4);
      const w = widths[i] ?? 0; // widths has one entry per column
      const cut = Math.min(over, Math.max(0, w - floor));
      widths[i] = w - cut;
      over -= cut;
    }
  }
  const fit = (s: string, w: number, c: Column<T> | undefined): string => {
    if (s.length <= w) return c?.align === 'right' ? s.padStart(w) : s.padEnd(w);
    if (c?.cut !== 'middle') return `${s.slice(0, Math.max(0, w - 1))}…`;
    const head = Math.ceil((w - 1) / 2);
    return `${s.slice(0, head)}…${s.slice(s.length - (w - 1 - head))}`;
  };
  return grid
    .map((line) =>
      line
        .map((s, i) => fit(s, widths[i] ?? 0, columns[i]))
        .join(' '.repeat(GAP))
        .trimEnd(),
    )
    .join('\n');
}

/** Words of `text` on lines of at most `width` characters, the lines after the first indented. */
export function wrap(text: string, width: number, indent = '  '): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    const next = line === '' ? word : `${line} ${word}`;
    if (next.length > width && line !== '' && line !== indent) {
      lines.push(line);
      line = `${indent}${word}`;
    } else {
      line = next;
    }
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}
