// Issue 10 item 5: `validate` refuses an empty file (what a truncating editor leaves) and a config
// without pipes unless asked (--allow-empty), and says why; through the built bin.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = 'dist/cli/main.js';
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-validate-empty-'));

function validate(text: string, ...flags: string[]) {
  const file = join(dir, `c-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, text);
  const r = spawnSync(process.execPath, [BIN, 'validate', file, ...flags], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, file };
}

describe('validate and empty configs', () => {
  it('an empty file (or only comments) is refused with its reason, --allow-empty or not', () => {
    for (const text of ['', '\n  \n', '# nothing yet\n']) {
      for (const flags of [[], ['--allow-empty']]) {
        const r = validate(text, ...flags);
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`${r.file}:1:1 the config file is empty (nothing but whitespace or comments)`);
        expect(r.stderr).not.toMatch(/\n\s+at /);
      }
    }
  });

  it('a config without pipes is refused unless --allow-empty', () => {
    for (const text of ['pipes: []\n', 'dryRun: true\n']) {
      const r = validate(text);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `error: ${r.file} has no pipes: the daemon would scale nothing (a half-written file?); --allow-empty accepts it\n`,
      );
      const allowed = validate(text, '--allow-empty');
      expect(allowed.code).toBe(0);
      expect(allowed.stdout).toMatch(/^ok: .*: 0 pipes/);
    }
  });
});
