// `pipescaler run | pause | resume | status`: the daemon and the operator's levers on it. The
// levers talk to Redis only (shared by every replica), so they work while the daemon runs.
import { loadEffectiveConfig, LOG_LEVELS, type Config } from '../../config/index.js';
import {
  ConfigFiles,
  createDaemon,
  DaemonEmitter,
  handleSignals,
  readPipeStatuses,
  readReplicas,
  StateStore,
  connectRedisOnce,
  describeRedis,
  isUnreachable,
  type Orphan,
  type PauseFlag,
} from '../../daemon/index.js';
import {
  describeKeyPlan,
  describeValues,
  keyPlans,
  count,
  parseDuration,
  type PipeConfig,
} from '../../policy/index.js';
import { HistoryStore, historyRoute } from '../../history/index.js';
import { configSecrets, createLogger, startDaemonTelemetry, type JsonRoute } from '../../telemetry/index.js';
import type { Command } from 'commander';
import { UserError } from '../run-cli.js';
import { configFile, DEFAULT_CONFIG } from '../cli-input.js';
import { guardConfig } from '../output-guard.js';
import { printable } from '../../api/internal.js';
import { formatStatusText, NO_DAEMON, START_DAEMON } from '../status-output.js';
import { operatorReason } from '../operator-reason.js';

/** The longest `pause --for`: longer is a pause until resumed (no --for), not a date. */
const MAX_PAUSE_MS = 366 * 24 * 3_600_000;
/** `status` when no daemon replica is alive: nothing scales the pipes (as `systemctl status`: 3). */
const NO_DAEMON_EXIT = 3;
const LOG_FORMATS = ['json', 'pretty'] as const;

/** A pause checked before anything is written: its end a real instant, its reason one short line. */
function pauseFlag(opts: { for?: string; reason: string }, now: number): { reason: string; until?: number } {
  const reason = operatorReason(opts.reason);
  if (opts.for === undefined) return { reason };
  const ms = parseDuration(opts.for);
  if (ms === null || ms <= 0) throw new UserError(`--for: "${opts.for}" is not a duration (e.g. 30m, 2h)`);
  if (ms > MAX_PAUSE_MS) {
    throw new UserError(`--for: "${opts.for}" is longer than 366d; without --for the pause lasts until resumed`);
  }
  return { reason, until: now + ms };
}

/** One of a fixed list of words, or a clear error naming the flag. */
function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UserError(`${flag}: "${value}" is not one of ${allowed.join(', ')}`);
  }
  return value as T;
}

export function registerDaemonCommands(program: Command): void {
  program
    .command('run')
    .description('run the autoscaling daemon (default config: config/pipescaler.yaml)')
    .argument('[config]', `config file (default ${DEFAULT_CONFIG})`)
    .option('-c, --config <path>', 'config file (instead of the argument)')
    .option('--dry-run', 'decide and log, never call the scaling endpoint (as dryRun: true, kept across reloads)')
    .option('--log-level <level>', `${LOG_LEVELS.join(' | ')} (instead of telemetry.logLevel, kept across reloads)`)
    .option('--log-format <format>', 'json | pretty (default: pretty at a terminal, json otherwise)')
    .action(
      async (
        arg: string | undefined,
        opts: { config?: string; dryRun?: boolean; logLevel?: string; logFormat?: string },
      ) => {
        const level = oneOf('--log-level', opts.logLevel, LOG_LEVELS);
        const format = oneOf('--log-format', opts.logFormat, LOG_FORMATS);
        // Through the environment, so a reload of the file keeps them (the loader reads both).
        if (opts.dryRun) process.env.PIPESCALER_DRY_RUN = 'true';
        if (level !== undefined) process.env.PIPESCALER_LOG_LEVEL = level;
        await run(configFile(arg, opts.config), format);
      },
    );

  program
    .command('pause')
    .description('stop scaling a pipe (or every pipe) until resumed or for a while')
    .argument('[pipe]', 'pipe name from the config')
    .option('--all', 'every pipe')
    .option('--for <duration>', 'resume by itself after this long, e.g. 2h')
    .option('--reason <text>', 'why, shown in status and logs', 'paused by operator')
    .option('-c, --config <path>', 'config file (for the Redis url and prefix)', DEFAULT_CONFIG)
    .action(async (pipe: string | undefined, opts: { all?: boolean; for?: string; reason: string; config: string }) => {
      // every argument checked before Redis is touched: a refused command changes nothing
      const flag = pauseFlag(opts, Date.now());
      await withStore(opts.config, async (store, config) => {
        const target = pickTarget(config, pipe, opts.all);
        await store.operator.setPause(target, flag);
        const what = target?.name ?? 'all pipes';
        process.stdout.write(
          `paused ${what}${flag.until !== undefined ? ` until ${new Date(flag.until).toISOString()}` : ''}: ${flag.reason}\n`,
        );
      });
    });

  program
    .command('resume')
    .description(
      'resume scaling a paused pipe (or every pipe); --orphaned lifts what is set on pipes no longer in the config',
    )
    .argument('[pipe]', 'pipe name from the config')
    .option('--all', "every pipe (clears each pipe's own pause too)")
    .option('--orphaned', 'lift the pauses and overrides of pipes no longer in the config (status lists them)')
    .option('-c, --config <path>', 'config file (for the Redis url and prefix)', DEFAULT_CONFIG)
    .action(async (pipe: string | undefined, opts: { all?: boolean; orphaned?: boolean; config: string }) => {
      await withStore(opts.config, async (store, config) => {
        if (opts.orphaned) {
          if (pipe !== undefined || opts.all) throw new UserError('--orphaned takes no pipe name and no --all');
          const lifted = await store.operator.clearOrphans(config.pipes);
          process.stdout.write(
            lifted.length === 0
              ? 'nothing orphaned: every pause and override belongs to a pipe of the config\n'
              : `lifted ${lifted.map(describeOrphan).join('; ')}\n`,
          );
          return;
        }
        const target = pickTarget(config, pipe, opts.all);
        const cleared = await store.operator.clearPause(target, config.pipes);
        const fleet = target === null ? null : await store.operator.pause(target);
        process.stdout.write(`${describeResume(config, target?.name ?? null, cleared, fleet)}\n`);
      });
    });

  program
    .command('status')
    .description(
      'whether a daemon is alive; per pipe: what the platform last showed and when, the change on its way, window, reason, pause, override',
    )
    .option('--json', 'one JSON array, an object per pipe (whether a daemon is alive goes to stderr when none is)')
    .option(
      '--wide',
      'within 160 columns: every column whole, then per pipe its values, instants, policy, drifts and texts',
    )
    .option('-c, --config <path>', 'config file (for the Redis url and prefix; no API settings needed)', DEFAULT_CONFIG)
    .action(async (opts: { json?: boolean; wide?: boolean; config: string }) => {
      await withStore(opts.config, async (store, config) => {
        const now = Date.now();
        const statuses = await readPipeStatuses(store, config, now);
        const replicas = await readReplicas(store.redis, store.keys);
        const orphans = (await store.operator.orphans(config.pipes)).map((o) => `orphaned: ${describeOrphan(o)}`);
        if (orphans.length > 0) orphans.push(ORPHAN_HINT);
        if (replicas.length === 0) process.exitCode = NO_DAEMON_EXIT;
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
          if (replicas.length === 0) process.stderr.write(`warning: ${NO_DAEMON}\n${START_DAEMON}\n`);
          for (const line of orphans) process.stderr.write(`warning: ${line}\n`);
          return;
        }
        const width = process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 100;
        process.stdout.write(
          formatStatusText(statuses, replicas, keyPlans(config).map(describeKeyPlan), {
            wide: opts.wide ?? false,
            width,
            now,
          }) + orphans.map((l) => `${l}\n`).join(''),
        );
      });
    });
}

/** What `resume` did, and what still pauses the pipe when something else does. */
function describeResume(
  config: Config,
  target: string | null,
  cleared: { all: boolean; pipes: string[] },
  left: PauseFlag | null,
): string {
  const byConfig = config.pipes.filter((p) => p.paused !== undefined && (target === null || p.name === target));
  const stays =
    byConfig.length === 0
      ? ''
      : `; ${byConfig.map((p) => p.name).join(', ')} ${byConfig.length === 1 ? 'stays' : 'stay'} paused by the config (pipes[].paused: resume cannot lift it)`;
  if (target === null) {
    if (!cleared.all && cleared.pipes.length === 0) return `nothing was paused${stays}`;
    const lifted = [
      cleared.all ? 'the pause of all pipes' : '',
      cleared.pipes.length > 0 ? `the own pause of ${count(cleared.pipes.length, 'pipe')}` : '',
    ].filter((s) => s !== '');
    return `resumed all pipes (lifted ${lifted.join(' and ')})${stays}`;
  }
  const fleet =
    left?.scope === 'all'
      ? `; all pipes are still paused (pause --all: ${printable(left.reason)}): resume --all lifts that`
      : '';
  if (cleared.pipes.length === 0) {
    if (stays !== '' || fleet !== '') return `${target} has no pause of its own${stays}${fleet}`;
    return `${target} is not paused: nothing to resume`;
  }
  return `resumed ${target}${stays}${fleet}`;
}

function pickTarget(config: Config, pipe: string | undefined, all: boolean | undefined): PipeConfig | null {
  if (all && pipe) throw new UserError('give a pipe name or --all, not both');
  if (all) return null;
  if (!pipe) throw new UserError('give a pipe name or --all');
  return configPipe(config, pipe);
}

/** The config's pipe of that name, or a UserError listing the names. */
export function configPipe(config: Config, name: string): PipeConfig {
  const found = config.pipes.find((p) => p.name === name);
  if (!found) throw new UserError(`unknown pipe "${name}" (pipes: ${config.pipes.map((p) => p.name).join(', ')})`);
  return found;
}

const ORPHAN_HINT = '  (their pipe left the config or was given other ids; `pipescaler resume --orphaned` lifts them)';

/** "<org>/<service>/<pipe> (was orders-events): paused: incident; override replicas 8 until ..." */
function describeOrphan(o: Orphan): string {
  const parts = [
    o.pause
      ? `paused${o.pause.until !== undefined ? ` until ${new Date(o.pause.until).toISOString()}` : ''}: ${o.pause.reason}`
      : '',
    o.override
      ? `override ${describeValues(o.override.values)} until ${new Date(o.override.until).toISOString()}: ${o.override.reason}`
      : '',
  ].filter((x) => x !== '');
  return `${o.ref}${o.name !== null ? ` (was ${o.name})` : ''}: ${parts.join('; ')}`;
}

/** Runs `fn` with the config's Redis (the environment's overrides applied) and its key prefix. */
export async function withStore(
  path: string,
  fn: (store: StateStore, config: Config, prefix: string) => Promise<void>,
): Promise<void> {
  // Redis only: the API's settings and credentials need not be there
  const config = loadEffectiveConfig(path, process.env, 'redis');
  guardConfig(config);
  const target = config.redis;
  const redis = connectRedisOnce(target);
  try {
    await fn(new StateStore(redis, target.prefix), config, target.prefix);
  } catch (err) {
    if (isUnreachable(err)) {
      throw new UserError(`cannot reach Redis (${describeRedis(target)}): ${(err as Error).message}`);
    }
    throw err;
  } finally {
    redis.disconnect();
  }
}

async function run(path: string, format: (typeof LOG_FORMATS)[number] | undefined): Promise<void> {
  // What this load reads (the file, its secret files and calendars) is what the daemon watches. With
  // the environment's overrides: the daemon reloads it the same way (loadEffectiveConfig).
  const files = new ConfigFiles();
  let config = files.load((readFile) => loadEffectiveConfig(path, process.env, 'all', readFile));
  guardConfig(config);
  // Every secret the daemon holds, the password of a Redis URL from the environment included
  // (asked again per line: a reload may add keys).
  const logger = createLogger({
    level: config.telemetry.logLevel,
    secrets: () => configSecrets(config),
    ...(format !== undefined ? { pretty: format === 'pretty' } : {}),
  });
  const emitter = new DaemonEmitter();
  emitter.on('config:reload', (r) => {
    if (r.result !== 'success') return;
    config = daemon.config();
    logger.level = config.telemetry.logLevel;
  });
  // set once the daemon (whose Redis connection it reads) exists
  let history: JsonRoute | null = null;
  const telemetry = await startDaemonTelemetry({
    emitter,
    logger,
    config: () => config,
    queues: () => daemon.queues(),
    routes: {
      '/history': (query) => (history ? history(query) : Promise.resolve({ status: 503, body: { error: 'starting' } })),
    },
  });
  // A reload that changes redis.url, redis.prefix or telemetry.listen is refused (a restart takes
  // them); one the environment overrides stays the same at every reload, so its file value may change.
  const daemon = createDaemon({
    config,
    configPath: path,
    configFiles: files,
    env: process.env,
    emitter,
    logger,
    servesTelemetry: true,
    onClient: (client, keyName) => telemetry.bindClient(client.events, keyName),
  });
  history = historyRoute(new HistoryStore(daemon.store.redis, config.redis.prefix), () =>
    config.pipes.map((p) => p.name),
  );
  // The signals are handled from here on, before start(): a start that waits for Redis (an outage,
  // a wrong address) still stops cleanly on SIGTERM, exit 0.
  const stopped = new Promise<void>((resolve) => {
    // The stop's grace follows api.timeout (stopGraceMs): every request in flight is answered or times out.
    handleSignals(daemon, {
      logger,
      exit: (code) => {
        process.exitCode = code;
        void telemetry.close().finally(() => {
          // Everything is closed by now; should a stray handle keep the loop alive, do not hang.
          setTimeout(() => process.exit(code), 2_000).unref();
          resolve();
        });
      },
    });
  });
  try {
    // A stop during the start (Redis unreachable) ends the wait too: a start that never settles
    // left this function pending with nothing else alive, and Node 24 then exits 13 (an
    // unsettled top-level await) instead of the stop's 0.
    await Promise.race([daemon.start(), stopped]);
  } catch (err) {
    // what it started (the Redis connection) must not keep the process alive
    await daemon.stop({ timeoutMs: 0 }).catch(() => undefined);
    await telemetry.close();
    throw err;
  }
  await stopped;
}
