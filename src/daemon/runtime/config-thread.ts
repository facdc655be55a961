// A reload's load of the config file, in a worker thread. Reading, parsing and checking the config
// of 10,000 pipes takes 2 s of CPU or more (the YAML parser alone runs at about 1 MB a second); in
// the daemon's own thread that held every request, answer, tick and /healthz as long, at every
// reload (the fleet bench: a SIGHUP to three replicas, then 429s of requests written after the
// hold). The worker posts back the Config (plain data: a structured clone) and what it read; this
// thread pauses only to take the clone in (about a tenth of the parse).
//
// From the TypeScript sources (the tests run them) there is no JavaScript worker to start: the load
// runs in this thread, as it does when the worker cannot start or answer (it never decides what a
// config means: the same loadEffectiveConfig runs either way).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from '../../config/index.js';

/** A file the worker's load read: its text, or the code it could not be read with. */
export type ThreadRead =
  { readonly path: string; readonly text: string } | { readonly path: string; readonly code: string };

/** What the worker posts: the Config, or the message of the load's error; and the files it read. */
export type ThreadAnswer =
  | { readonly config: Config; readonly reads: readonly ThreadRead[] }
  | { readonly error: string; readonly reads: readonly ThreadRead[] };

const WORKER = new URL('./config-load-worker.js', import.meta.url);

/** The worker's entry, when this module runs as built JavaScript beside it; null from the sources. */
export function workerEntry(url: URL = WORKER): URL | null {
  return url.pathname.endsWith('.js') && existsSync(fileURLToPath(url)) ? url : null;
}

/**
 * Loads `file` in a worker thread: the answer, or null when no worker could give one (none beside
 * this module, or it failed to start, crashed or posted nothing): the caller loads in this thread.
 */
export function loadOffThread(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  entry: URL | null = workerEntry(),
): Promise<ThreadAnswer | null> {
  if (entry === null) return Promise.resolve(null);
  return new Promise((resolve) => {
    let answer: ThreadAnswer | null = null;
    let worker: Worker;
    try {
      // only what the load reads crosses: the file's path and the environment (its overrides and
      // ${VAR} references); nothing of the worker outlives its answer
      worker = new Worker(entry, { workerData: { file, env: { ...env } }, stdout: false, stderr: false });
    } catch {
      resolve(null);
      return;
    }
    worker.once('message', (m: ThreadAnswer) => {
      answer = m;
    });
    worker.once('error', () => resolve(null));
    worker.once('exit', () => resolve(answer));
  });
}
