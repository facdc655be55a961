// The YAML holds mappings, lists and plain values only: a typed node (`!!omap`, `!!set`,
// `!!binary`, a custom tag) would reach the schema as an empty block, a `__proto__` key would be
// dropped, and an alias bomb stops the parser: each is refused with its line.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { BASE, breakBase } from './config-fixture.js';

function issues(text: string): { line: number; path: string; message: string }[] {
  try {
    parseConfig(text, { file: 'c.yaml', env: {} });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map(({ line, path, message }) => ({ line, path, message }));
  }
  throw new Error('the config was accepted');
}

const withBehavior = (block: string) =>
  breakBase('        set: { replicas: 6 }\n', `        set: { replicas: 6 }\n    behavior: ${block}`);

describe('YAML node types', () => {
  it('refuses a !!omap behavior block, whose limits would be dropped, with its line', () => {
    const text = withBehavior('!!omap\n      - scaleDown: { maxStep: { replicas: 1 } }\n');
    expect(issues(text)).toEqual([
      {
        line: 19,
        path: 'policies.weekday.behavior',
        message: 'the YAML tag !!omap is not supported: write a list without a tag',
      },
    ]);
  });

  it('refuses !!set, !!binary and a custom tag', () => {
    expect(issues(withBehavior('!!set\n      ? scaleUp\n'))).toEqual([
      expect.objectContaining({ line: 19, message: expect.stringContaining('!!set is not supported') }),
    ]);
    expect(issues(breakBase('baseline: { replicas: 2 }', 'baseline: !!binary aGVsbG8='))).toEqual([
      expect.objectContaining({
        line: 11,
        path: 'policies.weekday.baseline',
        message: expect.stringContaining('!!binary'),
      }),
    ]);
    expect(issues(breakBase('baseline: { replicas: 2 }', 'baseline: !custom { replicas: 2 }'))).toEqual([
      expect.objectContaining({ line: 11, message: expect.stringContaining('the YAML tag !custom is not supported') }),
    ]);
  });

  it('accepts the plain tags: !!str keeps a value text, !!map and !!seq are what they say', () => {
    const text = breakBase(
      '    policy: weekday\n',
      '    policy: !!str weekday\n    labels: !!map { team: !!str 0123 }\n',
    );
    const config = parseConfig(text, { file: 'c.yaml', env: {} });
    expect(config.pipes[0]?.labels).toEqual({ team: '0123' });
  });
});

describe('reserved keys', () => {
  it('refuses labels.__proto__ by name, at the key', () => {
    const text = breakBase('    policy: weekday\n', '    policy: weekday\n    labels:\n      __proto__: x\n');
    expect(issues(text)).toEqual([
      {
        line: 10,
        path: 'pipes[0].labels.__proto__',
        message: '"__proto__" cannot be a name: it is a property of every JavaScript object; rename it',
      },
    ]);
  });
});

describe('alias bombs', () => {
  it('are refused with the line of the first alias, before anything expands', () => {
    // nine levels of nine: 9^9 (387 million) nodes once expanded, from 10 lines
    const levels = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    const bomb = [
      'a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]',
      ...levels.slice(1).map((l, i) => `${l}: &${l} [${Array(9).fill(`*${levels[i]}`).join(', ')}]`),
      `j: [${Array(9).fill('*i').join(', ')}]`,
    ].join('\n');
    expect(issues(`${BASE}${bomb}\n`)).toEqual([
      {
        line: 20,
        path: '',
        message: 'YAML aliases expand the document past 5,000,000 nodes: a document that multiplies itself is refused',
      },
    ]);
  });

  it('an alias inside its own anchor is refused too', () => {
    expect(issues(`${BASE}loop: &l [1, *l]\n`)).toEqual([expect.objectContaining({ line: 19, path: '' })]);
  });

  it('a fleet whose 2,000 pipes merge one anchor loads (an anchor used more than 100 times was refused)', () => {
    const pipe = (i: number) =>
      `  - <<: *pipe\n    name: p${i}\n    pipeId: b1000000-0000-4000-8000-${String(i).padStart(12, '0')}\n`;
    const text = BASE.replace('pipes:\n  - name: orders\n', 'pipes:\n  - &pipe\n    name: orders\n').replace(
      'policies:\n',
      `${Array.from({ length: 2_000 }, (_, i) => pipe(i + 2)).join('')}policies:\n`,
    );
    const config = parseConfig(text, { file: 'c.yaml', env: {} });
    expect(config.pipes).toHaveLength(2_001);
  });
});
