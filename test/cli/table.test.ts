import { describe, expect, it } from 'vitest';
import { cell, formatTable, wrap } from '../../src/cli/table.js';

describe('formatTable', () => {
  it('pads every column to its widest cell, two spaces apart, no trailing blanks', () => {
    const out = formatTable(
      [
        { a: 'x', b: 12345 },
        { a: 'longer', b: 1 },
      ],
      [
        { header: 'A', value: (r) => r.a },
        { header: 'B', value: (r) => r.b },
      ],
    );
    expect(out).toBe(['A       B', 'x       12345', 'longer  1'].join('\n'));
  });

  it('pads a right-aligned column on the left, header included', () => {
    const out = formatTable(
      [
        { a: 'x', b: '+8.0' },
        { a: 'longer', b: '0.0' },
      ],
      [
        { header: 'A', value: (r) => r.a },
        { header: 'delta', value: (r) => r.b, align: 'right' },
      ],
    );
    expect(out).toBe(['A       delta', 'x        +8.0', 'longer    0.0'].join('\n'));
  });

  it('prints the header alone for no rows', () => {
    expect(
      formatTable(
        [],
        [
          { header: 'ID', value: () => 1 },
          { header: 'NAME', value: () => 2 },
        ],
      ),
    ).toBe('ID  NAME');
  });

  it('shows absent values as "-", lists joined, objects as JSON', () => {
    expect([null, undefined, '', [], ['a', 'b'], { k: 1 }, 0, false].map(cell)).toEqual([
      '-',
      '-',
      '-',
      '-',
      'a,b',
      '{"k":1}',
      '0',
      'false',
    ]);
  });
});

describe('formatTable to a width', () => {
  const rows = [{ a: 'a-rather-long-name', b: 'fixed-value', c: 'some detail that can go' }];
  const columns = [
    { header: 'A', value: (r: (typeof rows)[0]) => r.a, shrink: 2, floor: 8 },
    { header: 'B', value: (r: (typeof rows)[0]) => r.b },
    { header: 'C', value: (r: (typeof rows)[0]) => r.c, shrink: 1, floor: 6 },
  ];

  it('cuts the shrinkable columns in their order, each down to its floor, with "…"', () => {
    const natural = formatTable(rows, columns);
    expect(natural.split('\n')[1]).toHaveLength(18 + 2 + 11 + 2 + 23);
    // 10 too many: all from C first
    expect(formatTable(rows, columns, 46).split('\n')[1]).toBe('a-rather-long-name  fixed-value  some detail …');
    // C at its floor (6), the rest from A, never a fixed column
    expect(formatTable(rows, columns, 30).split('\n')[1]).toBe('a-rather…  fixed-value  some …');
    expect(formatTable(rows, columns, 10).split('\n')[1]).toBe('a-rathe…  fixed-value  some …');
  });

  it('leaves a table that fits as it is', () => {
    expect(formatTable(rows, columns, 200)).toBe(formatTable(rows, columns));
  });
});

describe('wrap', () => {
  it('breaks between words and indents the lines after the first', () => {
    expect(wrap('one two three four', 9)).toBe('one two\n  three\n  four');
    expect(wrap('short', 80)).toBe('short');
  });
});
