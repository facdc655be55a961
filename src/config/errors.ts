// The one error a config can fail with: every problem at once, each with its place in the file.
import { formatPath } from '../api/internal.js';

export { formatPath };

export type ConfigErrorCode = 'CONFIG_INVALID' | 'CONFIG_UNREADABLE' | 'CONFIG_ENV_INVALID';

export interface ConfigIssue {
  /** Dotted path in the config, e.g. `policies.weekday.windows[0].timezone` ('' for the root). */
  readonly path: string;
  /** 1-based line and column of the offending node; 0 when the problem has no place in a file. */
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly code: ConfigErrorCode,
    readonly file: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(issues.map((i) => formatIssue(file, i)).join('\n'));
  }

  /**
   * One problem with no line to point at: `where` is an environment variable (CONFIG_ENV_INVALID)
   * or a file whose combination of settings is wrong, `path` the setting.
   */
  static unplaced(code: ConfigErrorCode, where: string, message: string, path = ''): ConfigError {
    return new ConfigError(code, where, [{ path, line: 0, column: 0, message }]);
  }
}

export function isConfigError(err: unknown): err is ConfigError {
  return err instanceof ConfigError;
}

/** `config/pipescaler.yaml:12:7 policies.weekday.windows[0].timezone: unknown time zone "Europe/Berln"` */
export function formatIssue(file: string, issue: ConfigIssue): string {
  if (issue.line === 0)
    return issue.path === '' ? `${file}: ${issue.message}` : `${file}: ${issue.path}: ${issue.message}`;
  const where = `${file}:${issue.line}:${issue.column}`;
  return issue.path === '' ? `${where} ${issue.message}` : `${where} ${issue.path}: ${issue.message}`;
}

/** `a.b[0].c` from a path of keys and indexes. */
