// One environment variable per setting. Names that earlier versions read keep working for a
// while: the current name takes the old one's value when only the old one is set, and the CLI
// says so on stderr once per run, so an upgrade never silently drops a setting.
import type { Env } from './interpolate.js';

/** Old name -> current name. */
export const RENAMED_ENV: Readonly<Record<string, string>> = {
  PIPESCALER_BASE_URL: 'PIPESCALER_API_URL',
  REDIS_URL: 'PIPESCALER_REDIS_URL',
};

/** The environment with each current name filled from its old name where only that is set. */
export function withCurrentNames(env: Env): Env {
  const renamed = Object.entries(RENAMED_ENV).filter(
    ([old, current]) => env[old] !== undefined && env[current] === undefined,
  );
  if (renamed.length === 0) return env;
  return { ...env, ...Object.fromEntries(renamed.map(([old, current]) => [current, env[old]])) };
}

/** One line per old name in use: what to set instead (never the value: it may hold a password). */
export function deprecatedEnvLines(env: Env): string[] {
  return Object.entries(RENAMED_ENV)
    .filter(([old]) => env[old] !== undefined)
    .map(([old, current]) =>
      env[current] === undefined
        ? `warning: ${old} is deprecated: set ${current} instead (read from ${old} for now)`
        : `warning: ${old} is deprecated and ignored: ${current} is set`,
    );
}
