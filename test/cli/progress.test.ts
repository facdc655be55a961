// progress(): a line on a terminal's stderr, nothing in a pipe.
import { describe, expect, it } from 'vitest';
import { progress } from '../../src/cli/progress.js';

function stream(isTTY: boolean) {
  const written: string[] = [];
  return { s: { isTTY, write: (t: string) => written.push(t) } as unknown as NodeJS.WriteStream, written };
}

describe('progress', () => {
  it('rewrites one line on a terminal, at most every 200 ms, and erases it at the end', () => {
    const { s, written } = stream(true);
    let t = 0;
    const p = progress('simulate', s, () => t);
    t = 1_000;
    p.update(1, 4);
    t = 1_100;
    p.update(2, 4); // too soon
    t = 1_300;
    p.update(3, 4);
    p.update(4, 4); // the last one always shows
    p.end();
    expect(written).toEqual([
      '\rsimulate: 1/4 pipes (25%)\u001b[K',
      '\rsimulate: 3/4 pipes (75%)\u001b[K',
      '\rsimulate: 4/4 pipes (100%)\u001b[K',
      '\r\u001b[K',
    ]);
  });

  it('writes nothing when stderr is not a terminal', () => {
    const { s, written } = stream(false);
    const p = progress('simulate', s);
    p.update(1, 2);
    p.end();
    expect(written).toEqual([]);
  });
});
