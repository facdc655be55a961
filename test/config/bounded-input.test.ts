// A config built to hurt: a 20 MB pipe name, thousands of levels of nesting. Each is a config error
// with its file and line, a few lines long, in bounded memory; never a stack trace or the whole
// input echoed back.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, cutEchoes } from '../../src/config/errors.js';
import { MAX_CONFIG_CHARS, parseConfig } from '../../src/config/load.js';
import { TOO_DEEP } from '../../src/config/yaml-syntax.js';

const dir = mkdtempSync(join(tmpdir(), 'pipescaler-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const withName = (name: string) =>
  `api:\n  baseUrl: embedded\npipes:\n  - name: ${name}\n    organizationId: x\n    serviceId: y\n    pipeId: z\n    policy: p\n`;

function issues(text: string) {
  try {
    parseConfig(text, { file: 'big.yaml', env: {} });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return { issues: (err as ConfigError).issues, message: (err as Error).message };
  }
  throw new Error('accepted');
}

describe('bounded input', () => {
  it('a file past the limit is refused before it is parsed', () => {
    const r = issues(withName('a'.repeat(20_000_000)));
    expect(r.issues).toEqual([
      {
        path: '',
        line: 1,
        column: 1,
        message: expect.stringMatching(/^the config file holds 20,000,\d+ characters, at most 8,388,608/),
      },
    ]);
    expect(MAX_CONFIG_CHARS).toBe(8 * 1024 * 1024);
  });

  it('a long value is named by its start and length, not echoed whole', () => {
    const r = issues(withName('a'.repeat(5_000_000)));
    expect(r.issues[0]).toMatchObject({ line: 4, path: 'pipes[0].name' });
    expect(r.issues[0]!.message).toMatch(/^pipe name "a{60}\.\.\." \(5000000 characters\) must be lower-case/);
    expect(r.message.length).toBeLessThan(2_000);
  });

  it('cutEchoes leaves a short quote alone and caps any message', () => {
    expect(cutEchoes('unknown policy "p"')).toBe('unknown policy "p"');
    expect(cutEchoes('x'.repeat(5_000))).toMatch(/^x{1000}\.\.\. \(5000 characters\)$/);
  });

  it.each([
    ['flow mappings', `api:\n  baseUrl: embedded\npolicies: ${'{a: '.repeat(3_000)}1${'}'.repeat(3_000)}\n`],
    ['flow lists', `api:\n  baseUrl: embedded\npolicies: ${'['.repeat(3_000)}${']'.repeat(3_000)}\n`],
    ['block lists', `api:\n  baseUrl: embedded\npolicies:\n  ${'- '.repeat(3_000)}1\n`],
  ])('3,000 levels of %s are a config error with its line', (_name, text) => {
    const r = issues(text);
    expect(r.issues).toEqual([
      { path: '', line: expect.any(Number), column: expect.any(Number), message: `YAML syntax: ${TOO_DEEP}` },
    ]);
    expect(r.issues[0]!.line).toBeGreaterThanOrEqual(3);
  });

  it('validate on a 20 MB file: one short error, exit 1, in a small heap', () => {
    const file = join(dir, 'big.yaml');
    writeFileSync(file, withName('a'.repeat(20_000_000)));
    const r = spawnSync(process.execPath, ['--max-old-space-size=128', 'dist/cli/main.js', 'validate', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr.length).toBeLessThan(1_000);
    expect(r.stderr).toMatch(/big\.yaml:1:1 the config file holds/);
    expect(r.stdout).toBe('');
  });

  it('validate on 3,000 levels of nesting: the file and line, no stack', () => {
    const file = join(dir, 'deep.yaml');
    writeFileSync(file, `api:\n  baseUrl: embedded\npolicies: ${'{a: '.repeat(3_000)}1${'}'.repeat(3_000)}\n`);
    const r = spawnSync(process.execPath, ['dist/cli/main.js', 'validate', file], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/deep\.yaml:3:\d+ YAML syntax: nested too deeply/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
