import { describe, expect, it } from 'vitest';
import { cell, formatTable } from '../../src/cli/table.js';

describe('formatTable', () => {
  it('pads every column to its widest cell, two spaces apart, no trailing blanks', () => {
    const out = formatTable([{ a: 'x', b: 12345 }, { a: 'longer', b: 1 }], [
      { header: 'A', value: (r) => r.a },
      { header: 'B', value: (r) => r.b },
    ]);
    expect(out).toBe(['A       B', 'x       12345', 'longer  1'].join('\n'));
  });

  it('prints the header alone for no rows', () => {
    expect(formatTable([], [{ header: 'ID', value: () => 1 }, { header: 'NAME', value: () => 2 }])).toBe('ID  NAME');
  });

  it('shows absent values as "-", lists joined, objects as JSON', () => {
    expect([null, undefined, '', [], ['a', 'b'], { k: 1 }, 0, false].map(cell)).toEqual(['-', '-', '-', '-', 'a,b', '{"k":1}', '0', 'false']);
  });
});
