// Hot reload: watch the config file and every file a load of it read (keySecretFile, redis
// passwordFile, holiday calendars) and call back once per burst of changes that changed one of them.
// Each file's folder is watched, not the file, because of the three ways a file changes in place:
// - an editor saves through a rename: the old inode (and a watch on it) is gone;
// - Kubernetes updates a mounted ConfigMap or Secret by renaming a new `..data` symlink over the old
//   one: the file's own name (a symlink through `..data`) never changes, only what it resolves to;
// - a plain write, as `echo >` or most editors' "write in place".
// An event only says that something in a folder changed: after each burst every file's content is
// compared with what the last load read, so an unrelated file in the folder, or a swap that changes
// nothing, reloads nothing, and a change between a load and its watch is not missed.
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../../config/index.js';
import { loadOffThread, workerEntry } from './config-thread.js';

export const RELOAD_DEBOUNCE_MS = 300;

/** Each file a load read (absolute path) -> a digest of what it held, or why it could not be read. */
export type FileContents = ReadonlyMap<string, string>;

/** Timers of the debounce; tests pass their own to fire it without waiting. */
export interface WatchTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: WatchTimers = {
  set: (fn, ms) => setTimeout(fn, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface WatchOptions {
  readonly debounceMs?: number;
  readonly timers?: WatchTimers;
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}

function unreadable(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return `unreadable:${typeof code === 'string' ? code : 'error'}`;
}

/** What the file holds now, as FileContents notes it. */
function contentOf(path: string): string {
  try {
    return digest(readFileSync(path, 'utf8'));
  } catch (err) {
    return unreadable(err);
  }
}

/**
 * The folders to watch for one file: its own, and the one it resolves to when that is elsewhere (a
 * symlink to a file another tool replaces). Kubernetes' resolved folder is the timestamped one that
 * the next update deletes: watching it costs nothing, and the watch follows the swap.
 */
function foldersOf(path: string): string[] {
  const folders = [dirname(path)];
  try {
    const real = dirname(realpathSync(path));
    if (real !== folders[0]) folders.push(real);
  } catch {
    // not there (yet): its folder is watched, and its creation is a change
  }
  return folders;
}

/**
 * The files of the running config: every load goes through load(), which notes what it read, and
 * watch() calls back when any of them changes from that. A load that fails notes what it reached,
 * so a missing secret file that appears, or a broken file that is fixed, reloads again.
 */
export class ConfigFiles {
  private read: FileContents = new Map();
  private watching: FileWatch | null = null;

  /** Runs a load with a readFile that notes each file it reads; returns (or throws) what it does. */
  load<T>(run: (readFile: (path: string) => string) => T): T {
    const read = new Map<string, string>();
    try {
      return run((path) => {
        const at = resolve(path);
        try {
          const text = readFileSync(at, 'utf8');
          read.set(at, digest(text));
          return text;
        } catch (err) {
          read.set(at, unreadable(err));
          throw err;
        }
      });
    } finally {
      this.read = read;
      this.watching?.update(read);
    }
  }

  /**
   * load() of `file` in a worker thread (config-thread.ts: a large config's parse would hold this
   * thread), noting what the worker read; its error is the load's message. With no worker beside
   * this module (the sources) `inThread` runs at once, as load() would; and when the worker gives
   * no answer.
   */
  loadOffThread(
    file: string,
    env: Readonly<Record<string, string | undefined>>,
    inThread: (readFile: (path: string) => string) => Config,
    entry: URL | null = workerEntry(),
  ): Config | Promise<Config> {
    if (entry === null) return this.load(inThread);
    return loadOffThread(file, env, entry).then((answer) => {
      if (answer === null) return this.load(inThread);
      const read = new Map(answer.reads.map((r) => [r.path, 'text' in r ? digest(r.text) : `unreadable:${r.code}`]));
      this.read = read;
      this.watching?.update(read);
      if ('error' in answer) throw new Error(answer.error);
      return answer.config;
    });
  }

  /** Files of the last load; `fallback` (the config's path) when none went through load(). */
  contents(fallback?: string): FileContents {
    if (this.read.size > 0 || fallback === undefined) return this.read;
    const at = resolve(fallback);
    return new Map([[at, contentOf(at)]]);
  }

  /** Calls onChange once per burst of changes to the last load's files; returns the stop. */
  watch(onChange: () => void, options: WatchOptions & { readonly fallback?: string } = {}): () => void {
    this.watching?.close();
    const watching = watchFiles(this.contents(options.fallback), onChange, options);
    this.watching = watching;
    return () => {
      watching.close();
      if (this.watching === watching) this.watching = null;
    };
  }
}

export interface FileWatch {
  /** The files (and contents) to compare with from now on: what the latest load read. */
  update(read: FileContents): void;
  close(): void;
}

export function watchFiles(initial: FileContents, onChange: () => void, options: WatchOptions = {}): FileWatch {
  const debounceMs = options.debounceMs ?? RELOAD_DEBOUNCE_MS;
  const timers = options.timers ?? REAL_TIMERS;
  let read = initial;
  let timer: unknown;
  let closed = false;
  const watchers = new Map<string, FSWatcher>();

  const check = () => {
    timer = undefined;
    if (closed) return;
    const changed = [...read].some(([path, was]) => contentOf(path) !== was);
    // A Kubernetes swap moves the resolved folder: watch the new one, drop the deleted one.
    sync();
    if (changed) onChange();
  };
  const burst = () => {
    if (timer !== undefined) timers.clear(timer);
    timer = timers.set(check, debounceMs);
  };
  const sync = () => {
    const wanted = new Set([...read.keys()].flatMap(foldersOf));
    for (const [folder, watcher] of watchers) {
      if (wanted.has(folder)) continue;
      watcher.close();
      watchers.delete(folder);
    }
    for (const folder of wanted) {
      if (watchers.has(folder)) continue;
      try {
        const watcher = watch(folder, { persistent: false }, burst);
        // A watched folder that is deleted (Kubernetes' old timestamped one) must not crash the daemon.
        watcher.on('error', () => {
          watcher.close();
          if (watchers.get(folder) === watcher) watchers.delete(folder);
        });
        watchers.set(folder, watcher);
      } catch {
        // A folder that is not there: the file's other folder, or the next sync, covers it.
      }
    }
  };
  sync();

  return {
    update(next) {
      read = next;
      if (!closed) sync();
    },
    close() {
      closed = true;
      if (timer !== undefined) timers.clear(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
