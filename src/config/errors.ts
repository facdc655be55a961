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

/** The longest quoted input a message echoes whole; a longer one is cut to its start and length. */
const ECHO_CHARS = 80;
/** The longest message: whatever it quotes, an error stays a few lines. */
const MESSAGE_CHARS = 1_000;

/**
 * A message with every long quoted input (a quoted word without spaces) cut: a 20 MB pipe name is named by its start and its
 * length, not printed whole (a message quotes what it refuses as `"..."`).
 */
export function cutEchoes(message: string): string {
  const cut = message.replace(
    new RegExp(`"([^"\\s]{${ECHO_CHARS + 1},})"`, 'g'),
    (_all, inner: string) => `"${inner.slice(0, ECHO_CHARS - 20)}..." (${inner.length} characters)`,
  );
  return cut.length > MESSAGE_CHARS ? `${cut.slice(0, MESSAGE_CHARS)}... (${cut.length} characters)` : cut;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];
  constructor(
    readonly code: ConfigErrorCode,
    readonly file: string,
    issues: readonly ConfigIssue[],
  ) {
    const cut = issues.map((i) => ({ ...i, message: cutEchoes(i.message) }));
    super(cut.map((i) => formatIssue(file, i)).join('\n'));
    this.issues = cut;
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
