// `pipescaler run` from dist/ until one of its log lines matches, then SIGTERM: what a test of
// the daemon's first lines needs (its start line, the settings it took), without waiting for ticks.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

export interface RunOutput {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number | null;
  /** Whether a line matched before the daemon exited or the time ran out. */
  readonly matched: boolean;
}

export async function runUntil(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  until: RegExp,
  timeoutMs = 30_000,
): Promise<RunOutput> {
  const child = spawn(process.execPath, ['dist/cli/main.js', 'run', ...args], {
    env: { ...process.env, PIPESCALER_TELEMETRY_LISTEN: '127.0.0.1:0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = once(child, 'exit') as Promise<[number | null]>;
  const matched = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      if (until.test(stdout)) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      resolve(until.test(stdout));
    });
  });
  if (child.exitCode === null) child.kill('SIGTERM');
  const [code] = await exited;
  return { stdout, stderr, code, matched };
}
