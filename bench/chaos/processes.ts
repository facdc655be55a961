// The child processes of a chaos run: a dedicated redis-server on its own port (never the shared
// one on 6379) and the daemon replicas (`node dist/cli/main.js run <config>`, with the heap cap
// the Kubernetes manifest ships). Every wait is bounded; output is kept for the checks and for the
// error message when something fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { replicaUrl } from './observer.js';

/** A free TCP port on 127.0.0.1 (the OS picks it; released just before use). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const addr = srv.address();
  srv.close();
  await once(srv, 'close');
  if (addr === null || typeof addr === 'string') throw new Error('chaos: no free port');
  return addr.port;
}

/** Resolves with the exit code (or the signal's name), or null when `ms` passes first. */
async function exitWithin(child: ChildProcess, ms: number): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? child.signalCode;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  const exited = once(child, 'exit').then(([code, signal]) => (code as number | null) ?? (signal as string));
  try {
    return await Promise.race([exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits until `pattern` appears in the child's output, bounded; rejects early if it exits. */
function waitForOutput(child: ChildProcess, pattern: RegExp, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => done(new Error(`${what}: not ready within ${ms} ms; output: ${seen.slice(-500)}`)),
      ms,
    );
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) done();
    };
    const onExit = (code: number | null) =>
      done(new Error(`${what}: exited (${code}) before it was ready; output: ${seen.slice(-500)}`));
    const done = (err?: Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

export class RedisServer {
  private child: ChildProcess | null = null;
  restarts = 0;

  constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    // No snapshot, no AOF: a restart comes back empty, the harshest kind of Redis restart.
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    child.on('error', () => {}); // reported through exit / the ready timeout
    await waitForOutput(child, /Ready to accept connections/, 10_000, `redis-server on port ${this.port}`);
  }

  /** Down, then up again on the same port: empty (SIGTERM: a clean SHUTDOWN with nothing saved),
   *  or with its data (SHUTDOWN SAVE writes a snapshot into the run's folder, loaded at start). */
  async restart(downMs: number, keepData = false): Promise<void> {
    if (keepData) await this.shutdownSave();
    await this.stop();
    // an earlier restart's snapshot would be loaded at start: an empty restart starts without it
    if (!keepData) await rm(join(this.dir, 'dump.rdb'), { force: true });
    await new Promise((r) => setTimeout(r, downMs));
    await this.start();
    this.restarts += 1;
  }

  private async shutdownSave(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const cli = spawn('redis-cli', ['-p', String(this.port), 'SHUTDOWN', 'SAVE'], { stdio: 'ignore' });
    cli.on('error', () => {});
    await exitWithin(cli, 5_000);
    await exitWithin(child, 10_000);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child) return;
    child.kill('SIGTERM');
    if ((await exitWithin(child, 5_000)) === null) {
      child.kill('SIGKILL');
      await exitWithin(child, 2_000);
    }
  }
}

/** NODE_OPTIONS of the daemon's container in config/kubernetes/deployment.yaml (its heap cap,
 *  sized to the container's memory limit): replicas run as they ship. */
export function shippedNodeOptions(cwd: string): string {
  const docs = parseAllDocuments(readFileSync(join(cwd, 'config/kubernetes/deployment.yaml'), 'utf8'));
  type Env = { name: string; value?: string }[];
  for (const d of docs) {
    const spec = d.toJS() as { spec?: { template?: { spec?: { containers?: { name: string; env?: Env }[] } } } };
    const c = spec.spec?.template?.spec?.containers?.find((x) => x.name === 'pipescaler');
    const v = c?.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
    if (v) return v;
  }
  throw new Error('config/kubernetes/deployment.yaml: the pipescaler container sets no NODE_OPTIONS');
}

export interface ReplicaRun {
  /** e.g. "a", or "a#2" for its restart. */
  readonly label: string;
  readonly child: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Exit code or signal once it exited. */
  exit: number | string | null;
  /** True when the harness killed or stopped it; an exit without this is a crash. */
  expected: boolean;
}

/** The daemon replicas; each `spawn` is a process run, kept for the checks after the run. */
export class Replicas {
  readonly runs: ReplicaRun[] = [];
  kills = 0;

  private readonly nodeOptions: string;

  /** `apiUrl` (the chaos observer's): each replica gets its own prefix of it (`replicaUrl`) as
   *  PIPESCALER_API_URL, which the generated config's baseUrl reads. */
  constructor(
    private readonly opts: {
      cwd: string;
      configPath: string;
      env: Record<string, string>;
      apiUrl?: string;
      /** Node flags for each replica, e.g. --cpu-prof (a profile is written at a clean exit only). */
      execArgv?: readonly string[];
    },
  ) {
    this.nodeOptions = shippedNodeOptions(opts.cwd);
  }

  spawn(label: string): ReplicaRun {
    // the shipped heap cap, never the parent's NODE_OPTIONS (a test runner's, a debugger's)
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: this.nodeOptions, ...this.opts.env };
    if (this.opts.apiUrl !== undefined) env.PIPESCALER_API_URL = replicaUrl(this.opts.apiUrl, label);
    // The parent's overrides would point the replicas elsewhere than the generated config.
    delete env.PIPESCALER_REDIS_URL;
    delete env.PIPESCALER_REDIS_PREFIX;
    const child = spawn(
      process.execPath,
      [...(this.opts.execArgv ?? []), 'dist/cli/main.js', 'run', this.opts.configPath],
      {
        cwd: this.opts.cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const run: ReplicaRun = { label, child, stdout: [], stderr: [], exit: null, expected: false };
    lines(child.stdout, run.stdout);
    lines(child.stderr, run.stderr);
    child.on('error', (err) => run.stderr.push(`spawn error: ${err.message}`));
    child.on('exit', (code, signal) => {
      run.exit = code ?? signal;
    });
    this.runs.push(run);
    return run;
  }

  /** Waits (bounded) until the replica logged "daemon started": a loaded CI machine (the whole
   *  suite in parallel) once took over 15 s to start a replica that starts in 2 s alone. */
  async started(run: ReplicaRun, ms = 45_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!run.stdout.some((l) => l.includes('daemon started'))) {
      if (run.exit !== null) throw new Error(`replica ${run.label} exited (${run.exit}) at start: ${tail(run)}`);
      if (Date.now() > deadline) throw new Error(`replica ${run.label} did not start within ${ms} ms: ${tail(run)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async kill(run: ReplicaRun): Promise<void> {
    run.expected = true;
    run.child.kill('SIGKILL');
    await exitWithin(run.child, 5_000);
    this.kills += 1;
  }

  /** SIGTERM and wait (bounded); the exit code, or null when it had to be killed. */
  async stop(run: ReplicaRun, ms: number): Promise<number | string | null> {
    run.expected = true;
    if (run.exit !== null) return run.exit;
    run.child.kill('SIGTERM');
    const code = await exitWithin(run.child, ms);
    if (code === null) {
      run.child.kill('SIGKILL');
      await exitWithin(run.child, 2_000);
    }
    return code;
  }

  /** Last resort in a finally: nothing of ours outlives the run. */
  async killAll(): Promise<void> {
    await Promise.all(
      this.runs
        .filter((r) => r.exit === null)
        .map(async (r) => {
          r.expected = true;
          r.child.kill('SIGKILL');
          await exitWithin(r.child, 2_000);
        }),
    );
  }
}

function lines(stream: NodeJS.ReadableStream, into: string[]): void {
  let rest = '';
  stream.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString()).split('\n');
    rest = parts.pop()!;
    into.push(...parts);
  });
  stream.on('end', () => {
    if (rest) into.push(rest);
  });
}

export function tail(run: ReplicaRun, n = 10): string {
  return [...run.stderr, ...run.stdout].slice(-n).join('\n');
}
