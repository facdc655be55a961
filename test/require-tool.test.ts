// The pure parts of test/require-tool.ts: the PATH search, the skip line, CI detection.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findTool, inCi, missingTools, requireTool, skipLines } from './require-tool.js';

const dir = mkdtempSync(join(tmpdir(), 'pst-require-tool-'));
const empty = mkdtempSync(join(tmpdir(), 'pst-require-tool-empty-'));
writeFileSync(join(dir, 'fake-tool'), '#!/bin/sh\n');
chmodSync(join(dir, 'fake-tool'), 0o755);
writeFileSync(join(dir, 'plain-file'), 'not a program\n');
chmodSync(join(dir, 'plain-file'), 0o644);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
});

describe('findTool', () => {
  it('finds an executable file on PATH, in PATH order, and skips empty entries', () => {
    expect(findTool('fake-tool', dir)).toBe(join(dir, 'fake-tool'));
    expect(findTool('fake-tool', ['', empty, dir].join(delimiter))).toBe(join(dir, 'fake-tool'));
  });

  it('does not take a file that is not executable, a directory, or a name not on PATH', () => {
    expect(findTool('plain-file', dir)).toBeNull();
    expect(findTool('fake-tool', empty)).toBeNull();
    expect(findTool(empty.split('/').pop() ?? '', tmpdir())).toBeNull();
    expect(findTool('fake-tool', '')).toBeNull();
  });

  it('takes a name with a slash as a path, whatever PATH holds', () => {
    expect(findTool(join(dir, 'fake-tool'), empty)).toBe(join(dir, 'fake-tool'));
    expect(findTool(join(dir, 'plain-file'), dir)).toBeNull();
    expect(findTool(join(empty, 'nothing'), dir)).toBeNull();
  });

  it('lists the tools not found', () => {
    const tools = [
      { bin: 'fake-tool', debianPackage: 'fake' },
      { bin: 'plain-file', debianPackage: 'plain' },
    ];
    expect(missingTools(tools, dir)).toEqual([{ bin: 'plain-file', debianPackage: 'plain' }]);
  });
});

describe('skipLines', () => {
  it('says once per package which tools are missing and how to install them', () => {
    expect(
      skipLines([
        { bin: 'prometheus', debianPackage: 'prometheus' },
        { bin: 'promtool', debianPackage: 'prometheus' },
        { bin: 'systemd-analyze', debianPackage: 'systemd' },
      ]),
    ).toEqual([
      'skipped: tests that need prometheus, promtool (Debian package prometheus: apt-get install prometheus)',
      'skipped: tests that need systemd-analyze (Debian package systemd: apt-get install systemd)',
    ]);
    expect(skipLines([])).toEqual([]);
  });
});

describe('inCi', () => {
  it('is CI=true or CI=1, nothing else', () => {
    expect(inCi({ CI: 'true' })).toBe(true);
    expect(inCi({ CI: '1' })).toBe(true);
    for (const CI of [undefined, '', 'false', '0', 'yes']) expect(inCi({ CI })).toBe(false);
  });
});

describe('requireTool', () => {
  it('takes only a tool the run checks once, so its skip line is printed', () => {
    expect(() => requireTool('fake-tool', 'fake')).toThrow(
      'fake-tool (Debian package fake) is not in TOOLS of test/require-tool.ts',
    );
    expect(typeof requireTool('systemd-analyze', 'systemd')).toBe('boolean');
  });
});
