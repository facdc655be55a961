// The logger writes each line to stdout as it is logged (pino.destination sync, logger.ts), so an
// audit line survives a SIGKILL; the other side of it, as docs/deploy.md#logs-stdout-read-promptly says: a stdout reader
// that falls behind holds the daemon. A child process logs 3,000 audit-sized lines (~0.9 MB) into
// a pipe that this process stops reading for a second: one logger call waits for it, and every
// line arrives whole once it reads again.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const LINES = 3_000;
const STALL_MS = 1_000;

describe("the logger's stdout", () => {
  it('is written as each line is logged: a reader that stops reading holds the process that logs', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/telemetry/logger-stdout-child.ts', String(LINES)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    await new Promise<void>((resolve) => {
      const ready = (): void => {
        if (!stderr.includes('ready\n')) return;
        child.stderr.off('data', ready);
        resolve();
      };
      child.stderr.on('data', ready);
    });
    // the reader stops: once the pipe and this side's buffer are full, the child's next write waits
    child.stdout.pause();
    child.stdin.write('go\n');
    await new Promise((r) => setTimeout(r, STALL_MS));
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stdout.resume();
    // 'close': the child exited and its stdio ended
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code, stderr).toBe(0);
    const report = JSON.parse(
      stderr
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .pop() ?? '{}',
    ) as {
      longestMs: number;
    };
    // one call waited for the reader, most of the stall (the rest went on the child's writes before it)
    expect(report.longestMs).toBeGreaterThan(STALL_MS / 2);
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(LINES);
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual([...Array(LINES).keys()]);
  });

  it('docs/deploy.md states what the logger does', () => {
    expect(readFileSync('src/telemetry/logger.ts', 'utf8')).toContain('pino.destination({ dest: 1, sync: true })');
    const deploy = readFileSync('docs/deploy.md', 'utf8');
    expect(deploy).toContain('`pino.destination({ dest: 1, sync: true })`');
    expect(deploy).toContain('SIGKILL');
  });
});
