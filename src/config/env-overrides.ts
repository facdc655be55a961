// Settings of the file that the environment may override for one run: what `pipescaler run
// --dry-run` and `--log-level` set, read by the loader so a reload of the file keeps them.
import { didYouMean } from './did-you-mean.js';
import type { RawIssue } from './issue.js';
import { LOG_LEVELS } from './schema.js';
import type { Env } from './interpolate.js';

export interface EnvOverrides {
  readonly dryRun?: true;
  readonly logLevel?: (typeof LOG_LEVELS)[number];
}

/** The overrides the environment gives, and a problem (on line 1: the file is not at fault) for a bad one. */
export function envOverrides(env: Env): { overrides: EnvOverrides; issues: RawIssue[] } {
  const issues: RawIssue[] = [];
  const dry = env.PIPESCALER_DRY_RUN?.trim().toLowerCase();
  const level = env.PIPESCALER_LOG_LEVEL?.trim();
  if (dry !== undefined && !['', 'true', '1', 'false', '0'].includes(dry)) {
    issues.push({ path: [], message: 'PIPESCALER_DRY_RUN (environment) must be true or false' });
  }
  const known = (LOG_LEVELS as readonly string[]).includes(level ?? '');
  if (level !== undefined && level !== '' && !known) {
    issues.push({
      path: [],
      message: `PIPESCALER_LOG_LEVEL (environment) must be one of ${LOG_LEVELS.join(', ')}${didYouMean(level, LOG_LEVELS)}`,
    });
  }
  return {
    overrides: {
      ...(dry === 'true' || dry === '1' ? { dryRun: true as const } : {}),
      ...(known ? { logLevel: level as (typeof LOG_LEVELS)[number] } : {}),
    },
    issues,
  };
}
