// `pipescaler run | pause | resume | status`: the daemon and the operator's levers on it. The
// levers talk to Redis only (shared by every replica), so they work while the daemon runs.
import type { Command } from 'commander';
import { createDaemon, DaemonEmitter, handleSignals, readPipeStatuses, StateStore, connectRedisOnce } from '../../daemon/index.js';
import type { Daemon, PipeStatus } from '../../daemon/index.js';
import { configSecrets, createLogger, secretForms, startDaemonTelemetry } from '../../telemetry/index.js';
import { loadConfig } from '../../policy/load-config.js';
import { parseDuration } from '../../policy/durations.js';
import type { Config } from '../../policy/types.js';
import { UserError } from '../run-cli.js';

const DEFAULT_CONFIG = 'config/pipescaler.yaml';
const STOP_TIMEOUT_MS = 15_000;

/** Environment overrides, so a test or a second instance can use its own Redis keys. */
function redisTarget(config: Config): { url: string; prefix: string } {
  return {
    url: process.env.PIPESCALER_REDIS_URL ?? config.redis.url,
    prefix: process.env.PIPESCALER_REDIS_PREFIX ?? config.redis.prefix,
  };
}

export function registerDaemonCommands(program: Command): void {
  program
    .command('run')
    .description('run the autoscaling daemon (default config: config/pipescaler.yaml)')
    .argument('[config]', 'config file', DEFAULT_CONFIG)
    .action(async (path: string) => run(path));

  program
    .command('pause')
    .description('stop scaling a pipe (or every pipe) until resumed or for a while')
    .argument('[pipe]', 'pipe name from the config')
    .option('--all', 'every pipe')
    .option('--for <duration>', 'resume by itself after this long, e.g. 2h')
    .option('--reason <text>', 'why, shown in status and logs', 'paused by operator')
    .option('-c, --config <path>', 'config file (for the Redis url and prefix)', DEFAULT_CONFIG)
    .action(async (pipe: string | undefined, opts: { all?: boolean; for?: string; reason: string; config: string }) => {
      await withStore(opts.config, async (store, config) => {
        const target = pickTarget(config, pipe, opts.all);
        let until: number | undefined;
        if (opts.for !== undefined) {
          const ms = parseDuration(opts.for);
          if (ms === null || ms <= 0) throw new UserError(`--for: "${opts.for}" is not a duration (e.g. 30m, 2h)`);
          until = Date.now() + ms;
        }
        await store.setPause(target, { reason: opts.reason, ...(until !== undefined ? { until } : {}) });
        const what = target ?? 'all pipes';
        process.stdout.write(`paused ${what}${until ? ` until ${new Date(until).toISOString()}` : ''}: ${opts.reason}\n`);
      });
    });

  program
    .command('resume')
    .description('resume scaling a paused pipe (or every pipe)')
    .argument('[pipe]', 'pipe name from the config')
    .option('--all', 'every pipe (clears each pipe\'s own pause too)')
    .option('-c, --config <path>', 'config file (for the Redis url and prefix)', DEFAULT_CONFIG)
    .action(async (pipe: string | undefined, opts: { all?: boolean; config: string }) => {
      await withStore(opts.config, async (store, config) => {
        const target = pickTarget(config, pipe, opts.all);
        await store.clearPause(target, config.pipes.map((p) => p.name));
        process.stdout.write(`resumed ${target ?? 'all pipes'}\n`);
      });
    });

  program
    .command('status')
    .description('per pipe: applied, desired, window, last decision, paused')
    .option('--json', 'machine-readable output')
    .option('-c, --config <path>', 'config file (for the Redis url and prefix)', DEFAULT_CONFIG)
    .action(async (opts: { json?: boolean; config: string }) => {
      await withStore(opts.config, async (store, config) => {
        const statuses = await readPipeStatuses(store, config);
        process.stdout.write(opts.json ? `${JSON.stringify(statuses, null, 2)}\n` : formatStatuses(statuses));
      });
    });
}

function pickTarget(config: Config, pipe: string | undefined, all: boolean | undefined): string | null {
  if (all && pipe) throw new UserError('give a pipe name or --all, not both');
  if (all) return null;
  if (!pipe) throw new UserError('give a pipe name or --all');
  if (!config.pipes.some((p) => p.name === pipe)) {
    throw new UserError(`unknown pipe "${pipe}" (pipes: ${config.pipes.map((p) => p.name).join(', ')})`);
  }
  return pipe;
}

async function withStore(path: string, fn: (store: StateStore, config: Config) => Promise<void>): Promise<void> {
  const config = loadConfig(path);
  const { url, prefix } = redisTarget(config);
  const redis = connectRedisOnce(url);
  try {
    await fn(new StateStore(redis, prefix), config);
  } catch (err) {
    if (err instanceof Error && /ECONNREFUSED|Connection is closed|max retries/i.test(err.message)) {
      throw new UserError(`cannot reach Redis at ${new URL(url).host}: ${err.message}`);
    }
    throw err;
  } finally {
    redis.disconnect();
  }
}

const fmt = (v: object | null | undefined) =>
  v ? Object.entries(v).map(([k, n]) => `${k}=${String(n)}`).join(' ') || '-' : '-';

function formatStatuses(statuses: readonly PipeStatus[]): string {
  const rows = statuses.map((s) => [
    s.pipe,
    `${s.kind ?? '?'}/${s.state ?? '?'}`,
    fmt(s.applied),
    fmt(s.desired),
    s.windows.join(',') || 'baseline',
    s.lastDecision ? `${s.lastDecision.action} ${new Date(s.lastDecision.at).toISOString()}` : '-',
    s.parked ? `parked (${s.parked.code})` : s.paused ? `paused: ${s.paused.reason}` : s.lastError ? `error ${s.lastError.code}` : 'ok',
  ]);
  const head = ['PIPE', 'KIND/STATE', 'APPLIED', 'DESIRED', 'WINDOW', 'LAST DECISION', 'STATUS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}

async function run(path: string): Promise<void> {
  let config = loadConfig(path);
  const { url, prefix } = redisTarget(config);
  // Every secret the daemon holds (asked again per line: a reload may add keys), and the password
  // of a Redis URL given through the environment.
  const extra = url === config.redis.url ? [] : redisPassword(url);
  const secrets = () => (extra.length === 0 ? configSecrets(config) : [...configSecrets(config), ...extra]);
  const logger = createLogger({ level: config.telemetry.logLevel, secrets });
  const emitter = new DaemonEmitter();
  emitter.on('config:reload', (r) => {
    if (r.result === 'success') config = daemon.config();
  });
  let daemon: Daemon;
  const telemetry = await startDaemonTelemetry({
    emitter, logger, config: () => config, queues: () => daemon.queues(),
    ...(process.env.PIPESCALER_TELEMETRY_LISTEN ? { listen: process.env.PIPESCALER_TELEMETRY_LISTEN } : {}),
  });
  daemon = createDaemon({
    config, configPath: path, redisUrl: url, prefix, emitter, logger,
    onClient: (client) => telemetry.bindClient(client.events),
  });
  try {
    await daemon.start();
  } catch (err) {
    await telemetry.close();
    throw err;
  }
  await new Promise<void>((resolve) => {
    handleSignals(daemon, {
      timeoutMs: STOP_TIMEOUT_MS,
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
}

/** A password in the Redis URL is a secret too. */
function redisPassword(url: string): string[] {
  try {
    const { password } = new URL(url);
    return password ? secretForms(decodeURIComponent(password)) : [];
  } catch {
    return [];
  }
}
