// Indentation mistakes in the shipped config, made the way an editor makes them: the error names
// the line of the mistake, never the line above it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';

const SHIPPED = readFileSync(new URL('../../config/pipescaler.yaml', import.meta.url), 'utf8');
const LINES = SHIPPED.split('\n');

/** The shipped config with `edit` applied to the first line that starts (after blanks) with `key`. */
function broken(key: string, edit: (line: string) => string): { text: string; line: number } {
  const index = LINES.findIndex((l) => l.trimStart().startsWith(key));
  expect(index).toBeGreaterThan(0);
  const lines = [...LINES];
  lines[index] = edit(lines[index]!);
  return { text: lines.join('\n'), line: index + 1 };
}

function issues(text: string) {
  try {
    parseConfig(text, { file: 'config/pipescaler.yaml', env: {} });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('the config was accepted');
}

describe('a YAML indentation mistake names its own line', () => {
  it('the shipped config parses as it is', () => {
    expect(() => parseConfig(SHIPPED, { file: 'config/pipescaler.yaml', env: {} })).not.toThrow();
  });

  it.each([
    [
      'a key one space too far inside a list item, after a plain value',
      'serviceId: a1000000-0000-4000-8000-000000000001',
    ],
    ['a key one space too far, after a value and a comment', 'concurrency: 10'],
    ['a key one space too far, after a quoted value', 'reconcile: 10m'],
    ['a key one space too far, after a flow mapping', 'timeout: 30s'],
    ['a key one space too far, after a mapping', 'logLevel: info'],
  ])('%s', (_name, key) => {
    const { text, line } = broken(key, (l) => ` ${l}`);
    const [issue, ...more] = issues(text);
    expect(more).toEqual([]);
    expect(issue).toMatchObject({ line, path: '' });
    expect(issue!.message).toMatch(/^YAML syntax: /);
  });

  it('the message says what happened, once', () => {
    const { text, line } = broken('pipeId: b1000000-0000-4000-8000-000000000001', (l) => ` ${l}`);
    expect(issues(text)).toEqual([
      {
        path: '',
        line,
        column: 6,
        message:
          "YAML syntax: this key is indented deeper than the key above it (it reads as part of that key's value): align it with its siblings",
      },
    ]);
  });

  it('a key one space short', () => {
    const { text, line } = broken('prefix: pipescaler', (l) => l.slice(1));
    expect(issues(text)[0]).toMatchObject({ line, column: 2, message: expect.stringMatching(/same column/) });
  });

  it('a list item one space too far', () => {
    const { text, line } = broken('- name: payments-msk', (l) => ` ${l}`);
    expect(issues(text)[0]).toMatchObject({ line, message: expect.stringMatching(/same column/) });
  });

  it('a list item one space short', () => {
    const { text, line } = broken('- name: payments-msk', (l) => l.slice(1));
    expect(issues(text)[0]).toMatchObject({ line });
  });

  it('a tab in the indentation', () => {
    const { text, line } = broken('logLevel: info', (l) => `\t${l.trimStart()}`);
    expect(issues(text)[0]).toMatchObject({ line, column: 1, message: expect.stringMatching(/Tabs/) });
  });

  it('a misaligned key after a comment line points at the key, not the comment', () => {
    const text = 'api:\n  baseUrl: embedded\n  # the timeout\n timeout: 30s\n';
    expect(issues(text)[0]).toMatchObject({ line: 4, column: 2 });
  });
});
