// The config a process runs: the file, interpolated from the environment, with the environment's
// overrides of where things are laid over it. The daemon (at start and at every reload) and every
// CLI command that runs against Redis take their config from here, so they never disagree on
// which Redis, which prefix or which telemetry address a deployment means.
import { withCurrentNames } from './env-names.js';
import { ConfigError } from './errors.js';
import type { Env } from './interpolate.js';
import { loadConfig, type ParseOptions } from './load.js';
import { clusterPrefixProblem, parseRedisUrl } from './redis.js';
import type { Config } from './types.js';

/** Each variable that overrides a setting of the file, and the setting. */
export const ENV_OVERRIDES = {
  PIPESCALER_REDIS_URL: 'redis.url',
  PIPESCALER_REDIS_PREFIX: 'redis.prefix',
  PIPESCALER_TELEMETRY_LISTEN: 'telemetry.listen',
} as const;

/** Loads `path` with the environment's overrides; a wrong override is a ConfigError naming its variable. */
export function loadEffectiveConfig(
  path: string,
  env: Env = process.env,
  needs: ParseOptions['needs'] = 'all',
  /** Reads the config and every file it names (the daemon notes what each held). */
  readFile?: (path: string) => string,
): Config {
  const current = withCurrentNames(env);
  return withEnvOverrides(loadConfig(path, current, needs, readFile), path, current);
}

/**
 * `config` with the environment's overrides. Checked here so a mistake is one line naming where it
 * is: a URL that is not one, or a cluster without a hash-tagged prefix (the loader checks the
 * file's own pair; an override can make either side new).
 */
export function withEnvOverrides(config: Config, file: string, env: Env): Config {
  const url = env.PIPESCALER_REDIS_URL;
  const prefix = env.PIPESCALER_REDIS_PREFIX;
  // An empty listen address is no address: the file's stays (as it always did).
  const listen = env.PIPESCALER_TELEMETRY_LISTEN === '' ? undefined : env.PIPESCALER_TELEMETRY_LISTEN;
  if (url === undefined && prefix === undefined && listen === undefined) return config;
  const redis = {
    ...config.redis,
    ...(url !== undefined ? { url } : {}),
    ...(prefix !== undefined ? { prefix } : {}),
  };
  const endpoint = parseRedisUrl(redis.url);
  if ('error' in endpoint) throw ConfigError.unplaced('CONFIG_ENV_INVALID', 'PIPESCALER_REDIS_URL', endpoint.error);
  const problem = endpoint.mode === 'cluster' ? clusterPrefixProblem(redis.prefix) : null;
  if (problem !== null) {
    throw prefix !== undefined
      ? ConfigError.unplaced('CONFIG_ENV_INVALID', 'PIPESCALER_REDIS_PREFIX', problem)
      : ConfigError.unplaced('CONFIG_INVALID', file, problem, 'redis.prefix');
  }
  return {
    ...config,
    redis,
    ...(listen !== undefined ? { telemetry: { ...config.telemetry, listen } } : {}),
  };
}
