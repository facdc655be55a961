// What a config needs for this daemon to run it, beyond what the loader checks: checked on every
// reload before anything is swapped, so a refused reload leaves the running config untouched.
// (A truncated file reloaded as all defaults once reached Lanes.sync with an empty key id and
// crashed the process with "keyId is required".)
import type { Config } from '../../config/index.js';
import { describeRedis } from '../store/redis-connection.js';

/** Settings the running daemon took at its start: a change of them takes a restart. */
export const RESTART_SETTINGS = [
  'api.baseUrl',
  'api.fixtures',
  'redis.url',
  'redis.prefix',
  'redis.username',
  'redis.password',
  'redis.sentinelPassword',
  'telemetry.listen',
] as const;
export type RestartSetting = (typeof RESTART_SETTINGS)[number];

function value(config: Config, setting: RestartSetting): string | undefined {
  switch (setting) {
    case 'api.baseUrl':
      return config.api.baseUrl;
    case 'api.fixtures':
      return config.api.fixtures;
    case 'redis.url':
      return config.redis.url;
    case 'redis.prefix':
      return config.redis.prefix;
    case 'redis.username':
      return config.redis.username;
    case 'redis.password':
      return config.redis.password;
    case 'redis.sentinelPassword':
      return config.redis.sentinelPassword;
    case 'telemetry.listen':
      return config.telemetry.listen;
  }
}

/** Each setting's value as a reload message may show it: never a password, never a URL's credentials. */
function shown(config: Config, setting: RestartSetting): string | null {
  if (setting === 'redis.password' || setting === 'redis.sentinelPassword') return null;
  if (setting === 'redis.url') return describeRedis(config.redis);
  return value(config, setting) ?? '(none)';
}

/**
 * The settings `next` changes that the running daemon cannot take without a restart (it connected
 * to Redis, started the embedded cloud and the telemetry server with them), each as a refusal.
 * `fixed`: settings the file does not decide (an environment override, an option of the caller):
 * their value in the file is not in force, so changing it changes nothing.
 */
export function restartProblems(
  next: Config,
  running: Config,
  fixed: ReadonlySet<RestartSetting> = new Set(),
): string[] {
  const problems: string[] = [];
  for (const setting of RESTART_SETTINGS) {
    if (fixed.has(setting) || value(next, setting) === value(running, setting)) continue;
    // the fixtures are read only by the embedded cloud
    if (setting === 'api.fixtures' && running.api.baseUrl !== 'embedded') continue;
    const from = shown(running, setting);
    const to = shown(next, setting);
    const what =
      from === null || to === null || from === to
        ? 'changed'
        : `changed from ${JSON.stringify(from)} to ${JSON.stringify(to)}`;
    problems.push(
      `${setting}: ${what}; this takes a restart, so the reload is refused and the running config stays ` +
        '(restart the daemon to use the new file, or undo the change)',
    );
  }
  return problems;
}

/** The reasons the daemon cannot run `next` in place of `running`; empty when it can. Never a secret. */
export function reloadProblems(next: Config, keys: Config['api']['keys'], running: Config): string[] {
  const problems: string[] = [];
  if (next.pipes.length === 0 && running.pipes.length > 0) {
    problems.push(
      `pipes: the new config has no pipes (the running one has ${running.pipes.length}): refused as a half-written file; ` +
        'to stop scaling, use `pipescaler pause --all` or stop the daemon',
    );
  }
  for (const [name, key] of Object.entries(keys)) {
    const at = name === 'default' ? 'api' : `api.keys.${name}`;
    if (!key.keyId)
      problems.push(
        `${at}.keyId: is empty (an unset or empty environment variable?); the daemon cannot call the API without it`,
      );
    if (!key.keySecret) problems.push(`${at}.keySecret: is empty; the daemon cannot call the API without it`);
  }
  for (const pipe of next.pipes) {
    if (!Object.hasOwn(keys, pipe.key))
      problems.push(`pipes.${pipe.name}.key: names the API key "${pipe.key}", which is not configured`);
    if (!Object.hasOwn(next.policies, pipe.policy))
      problems.push(`pipes.${pipe.name}.policy: names the policy "${pipe.policy}", which is not configured`);
  }
  return problems;
}
