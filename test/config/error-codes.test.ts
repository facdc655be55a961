// One list of error codes (src/config/error-codes.ts), shown in docs/errors.md, and the errors we
// raise carry codes from it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { API_ERROR_CODES, ApiError } from '../../src/api/index.js';
import { ConfigError, ERROR_CODES, errorCodeOf, loadEffectiveConfig } from '../../src/config/index.js';
import { UserError } from '../../src/cli/run-cli.js';

describe('the error codes', () => {
  it('list every ApiError code', () => {
    for (const code of API_ERROR_CODES) expect(ERROR_CODES).toHaveProperty(code);
  });

  it('are the rows of docs/errors.md, each with its meaning', () => {
    const rows = [...readFileSync('docs/errors.md', 'utf8').matchAll(/^\| `([A-Z_]+)` \| (.+) \|$/gm)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(rows).toEqual(Object.entries(ERROR_CODES));
  });

  it('are what our errors carry', () => {
    expect(errorCodeOf(new ApiError('API_TIMEOUT', 'no answer'))).toBe('API_TIMEOUT');
    expect(errorCodeOf(ConfigError.unplaced('CONFIG_ENV_INVALID', 'PIPESCALER_REDIS_URL', 'x'))).toBe(
      'CONFIG_ENV_INVALID',
    );
    expect(errorCodeOf(new UserError('give a pipe name or --all'))).toBe('CLI_USAGE');
    expect(errorCodeOf(Object.assign(new Error('x'), { code: 'EPIPE' }))).toBeNull();
    expect(errorCodeOf('text')).toBeNull();
    let unreadable: unknown;
    try {
      loadEffectiveConfig('/nonexistent/pipescaler.yaml', {});
    } catch (err) {
      unreadable = err;
    }
    expect(errorCodeOf(unreadable)).toBe('CONFIG_UNREADABLE');
  });
});
