// vitest's globalSetup: checks the external tools once per run (the files run in separate workers,
// each deciding its own skip through test/require-tool.ts), prints one line per missing package,
// and under CI fails the run before any test starts.
import { inCi, missingTools, skipLines } from './require-tool.js';

export default function setup(): void {
  const missing = missingTools();
  if (missing.length === 0) return;
  const lines = skipLines(missing);
  if (inCi())
    throw new Error(
      `CI runs every test, and these tools are missing:\n${lines.map((l) => `  ${l.replace(/^skipped: tests that need /, '')}`).join('\n')}`,
    );
  for (const line of lines) process.stdout.write(`${line}\n`);
}
