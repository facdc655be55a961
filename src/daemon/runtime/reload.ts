// A reload: read the new config (the file, with the environment's overrides, or one given),
// check all of it against what the running daemon can take, then swap it in and let the running
// parts follow. A refused reload changes nothing: the last good config keeps running.
import type { ApiKeyConfig, Config } from '../../config/index.js';
import { describeKeyPlan, readShareOf } from '../../policy/index.js';
import type { DaemonLogger } from '../model/logger.js';
import { effectiveKeys } from './embedded.js';
import type { DaemonEmitter } from '../model/events.js';
import { plansOf } from '../lanes/lead-plans.js';
import type { LaneSettings, Lanes } from '../lanes/lanes.js';
import { configChanges } from '../model/config-changes.js';
import { reloadProblems, restartProblems, type RestartSetting } from './reload-check.js';
import type { StateStore } from '../store/state-store.js';

export interface ReloadOptions {
  /** Loads the config file (with the environment's overrides) for a reload without a config; null: no file, such a reload is refused. */
  readonly load: (() => Config | Promise<Config>) | null;
  /** What the caller fixed (not the file): a reload's change of it is no change (reload-check.ts). */
  readonly fixedSettings: ReadonlySet<RestartSetting>;
  readonly store: StateStore;
  readonly emitter: DaemonEmitter;
  readonly logger: DaemonLogger;
  config(): Config;
  /** The embedded cloud's demo key, when one runs. */
  demoKey(): ApiKeyConfig | null;
  lanes(): Lanes | null;
  /** Swaps `config` in and lets the running parts follow it (the evaluate concurrency, the cron). */
  swap(config: Config, previous: Config): Promise<void>;
}

/**
 * The reload function of one daemon: true when the new config runs now. Reloads run one at a time:
 * a SIGHUP and the file's watch often ask together, and two loads at once would hold two parses of
 * a large config in memory (about 150 MB each at 10,000 pipes, in worker threads: config-thread.ts)
 * and could swap in out of order. With none running a reload starts within the call; one asked for
 * while another runs waits for it, and a reload of the file asked for while one already waits shares
 * that one (which reads the file as it is when it starts).
 */
export function createReload(o: ReloadOptions): (next?: Config) => Promise<boolean> {
  const run = reloadOnce(o);
  let last: Promise<boolean> | null = null;
  let waiting: { promise?: Promise<boolean> } | null = null;
  return function reload(next?: Config): Promise<boolean> {
    if (next === undefined && waiting?.promise) return waiting.promise;
    const entry: { promise?: Promise<boolean> } = {};
    const go = (): Promise<boolean> => {
      if (waiting === entry) waiting = null;
      return run(next);
    };
    const p: Promise<boolean> = (last ? last.then(go, go) : go()).finally(() => {
      if (last === p) last = null;
    });
    entry.promise = p;
    if (last && next === undefined) waiting = entry;
    last = p;
    return p;
  };
}

function reloadOnce(o: ReloadOptions): (next?: Config) => Promise<boolean> {
  return async function reload(next?: Config): Promise<boolean> {
    let config: Config;
    try {
      if (next) config = next;
      else if (o.load) config = await o.load();
      else throw new Error('no config file to reload from');
    } catch (err) {
      const errors = err instanceof Error ? err.message.split('\n') : [String(err)];
      o.emitter.emit('config:reload', { result: 'failure', errors });
      return false;
    }
    const previous = o.config();
    // Everything the swap needs is checked first: a refused reload changes nothing. What takes a
    // restart (the Redis connection, the API's base URL, the telemetry server) is refused too.
    const keys = effectiveKeys(config, o.demoKey());
    const problems = [...restartProblems(config, previous, o.fixedSettings), ...reloadProblems(config, keys, previous)];
    if (problems.length === 0) {
      try {
        o.lanes()?.sync(keys, laneSettings(config));
      } catch (err) {
        problems.push(`api: ${(err as Error).message}`);
      }
    }
    if (problems.length > 0) {
      o.emitter.emit('config:reload', { result: 'failure', errors: problems });
      return false;
    }
    const changes = configChanges(previous, config);
    await o.swap(config, previous);
    try {
      await o.store.unpark(config.pipes.map((p) => p.name));
    } catch (err) {
      o.logger.warn({ err: (err as Error).message }, 'could not clear parked pipes');
    }
    announcePlans(config, o.logger, o.emitter);
    o.emitter.emit('config:reload', { result: 'success', changes });
    return true;
  };
}

/** What each key's lane takes from the config: all of it follows a reload. */
export function laneSettings(config: Config): LaneSettings {
  return {
    readShare: readShareOf(config),
    timeoutMs: config.api.timeoutMs,
    maxResponseBytes: config.api.maxResponseBytes,
  };
}

/** Each key's reconcile period and bounds under this config: logged and exported as metrics. */
export function announcePlans(config: Config, logger: DaemonLogger, emitter: DaemonEmitter): void {
  for (const p of plansOf(config).values()) {
    const text = describeKeyPlan(p);
    logger.info(
      {
        key: p.key,
        ...(p.pool ? { pool: p.pool.name } : {}),
        pipes: p.pipes,
        reconcileSeconds: p.reconcileMs / 1000,
        scaleDownBoundSeconds: p.scaleDownBoundMs / 1000,
      },
      text,
    );
    emitter.emit('budget:plan', {
      key: p.key,
      pipes: p.pipes,
      reconcileMs: p.reconcileMs,
      stretched: p.stretched,
      scaleDownBoundMs: p.scaleDownBoundMs,
      text,
    });
  }
}
