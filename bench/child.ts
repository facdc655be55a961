// Forked helpers: the embedded cloud in its own process (so the client under test does not share
// its event loop with the server, as with the real platform), and a scenario run in a fresh
// process (so its peak RSS is its own). Both talk over IPC and are killed by their pid only.
import { fork, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TSX = ['--import', 'tsx'];

function request<T>(child: ChildProcess, message: unknown, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child did not answer within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: { ok: boolean; value?: T; error?: string }) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      if (m.ok) resolve(m.value as T);
      else reject(new Error(m.error));
    };
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      reject(new Error(`child exited (${code}) before answering`));
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
    child.send(message as object);
  });
}

export interface PipeReplicas {
  readonly replicas: number | null;
  readonly pending: readonly { readonly replicas: number | null; readonly effectiveAt: number | null }[];
}

export interface CloudProcess {
  readonly url: string;
  readonly pid: number;
  stats(): Promise<{ requests: Record<string, Record<string, number>>; rateLimited: number }>;
  resetStats(): Promise<void>;
  /** The cloud's propagation settings (src/cloud/README.md#propagation), replaced whole. */
  setPropagation(p: Record<string, unknown>): Promise<void>;
  /** Each pipe's replicas as the platform holds them now, and the changes of its replicas still on
   *  their way (effectiveAt null: never), in the order of `ids`. */
  replicas(ids: readonly string[]): Promise<PipeReplicas[]>;
  close(): Promise<void>;
}

/** Starts the embedded cloud in a child process with the fixtures given (a path or an object). */
export async function cloudProcess(
  fixtures: unknown,
  rateLimit: { requests: number; perMs: number } | false,
): Promise<CloudProcess> {
  const child = fork(fileURLToPath(new URL('./cloud-child.ts', import.meta.url)), [], {
    execArgv: TSX,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await request<string>(child, { cmd: 'start', fixtures, rateLimit }, 60_000);
  return {
    url,
    pid: child.pid!,
    stats: () => request(child, { cmd: 'stats' }, 10_000),
    resetStats: () => request(child, { cmd: 'resetStats' }, 10_000),
    setPropagation: (propagation) => request(child, { cmd: 'setPropagation', propagation }, 10_000),
    replicas: (ids) => request(child, { cmd: 'replicas', ids }, 10_000),
    close: async () => {
      await request(child, { cmd: 'close' }, 10_000).catch(() => undefined);
      if (child.exitCode === null) child.kill();
    },
  };
}

/**
 * A TypeScript module compiled to JavaScript beside it in bench/ (.compiled-*.mjs, so relative URLs
 * still resolve), packages left to node_modules; what it imports with import() stays a separate
 * chunk loaded only then (the embedded cloud's fastify, in particular, as in the daemon). A
 * scenario's process runs plain node on it, as production runs the daemon: under tsx its RSS would
 * include the TypeScript loader's own thread and V8 isolate (about 35 MB) and its time the
 * transpiling. Returns the entry and every file written, to delete after.
 */
async function compile(path: string): Promise<{ entry: string; files: string[] }> {
  // Loaded here, not at the top: scenario modules import this file and must not load esbuild.
  const { build } = await import('esbuild');
  const tag = `${process.pid}-${++compiledFiles}`;
  const result = await build({
    entryPoints: [path],
    outdir: dirname(path),
    entryNames: `.compiled-[name]-${tag}`,
    chunkNames: `.compiled-chunk-${tag}-[hash]`,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    metafile: true,
    logLevel: 'error',
  });
  const files = Object.keys(result.metafile.outputs).map((f) => resolve(f));
  const entry = files.find((f) => basename(f).startsWith(`.compiled-${basename(path, '.ts')}-${tag}`));
  if (entry === undefined) throw new Error(`esbuild wrote no entry for ${path}`);
  return { entry, files };
}

let compiledFiles = 0;

/** Runs `runOnce(args)` of a scenario module in a fresh process, compiled, and returns what it resolves to. */
export async function inFreshProcess<T>(module: string, args: unknown, timeoutMs: number): Promise<T> {
  const written: string[] = [];
  let child: ChildProcess | undefined;
  try {
    const runner = await compile(fileURLToPath(new URL('./run-child.ts', import.meta.url)));
    written.push(...runner.files);
    const scenario = await compile(fileURLToPath(module));
    written.push(...scenario.files);
    child = fork(runner.entry, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    return await request<T>(child, { module: pathToFileURL(scenario.entry).href, args }, timeoutMs);
  } finally {
    if (child?.exitCode === null) child.kill();
    await Promise.all(written.map((f) => rm(f, { force: true })));
  }
}
