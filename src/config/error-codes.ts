// Every error code the daemon and the CLI raise, with what it means: the one list (docs/errors.md
// shows it, test/config/error-codes.test.ts keeps the two equal). Code branches on `code`, never on
// a message or a prefix of a code. ApiError's codes are src/api's own (the published client).
import type { ApiErrorCode } from '../api/index.js';
import type { ConfigErrorCode } from './errors.js';

/** Codes of the CLI's own refusals (UserError). */
export type CliErrorCode = 'CLI_USAGE';

export type ErrorCode = ApiErrorCode | ConfigErrorCode | CliErrorCode;

/** Typed by every code: a code added to ApiError or ConfigError and missing here fails tsc. */
export const ERROR_CODES: Readonly<Record<ErrorCode, string>> = {
  API_BAD_REQUEST: 'the platform refused the request as invalid (400, or another 4xx it gives no code of its own)',
  API_UNAUTHORIZED: 'the API key id or secret is wrong (401)',
  API_FORBIDDEN: 'the API key may not do this (403)',
  API_NOT_FOUND: 'the organization, service or pipe does not exist for this key (404)',
  API_FAILED_DEPENDENCY: "the pipe's service is not in a state that takes the change (424)",
  API_RATE_LIMITED: "the key's request budget is spent until the window resets (429)",
  API_SERVER_ERROR: 'the platform failed (5xx)',
  API_TIMEOUT: 'no answer within api.timeout',
  API_NETWORK: 'the connection failed (refused, reset, DNS)',
  API_BAD_RESPONSE: 'an answer that is not what the contract says (malformed, too large, about another pipe)',
  CONFIG_INVALID: 'the config file has errors, each with its field and line',
  CONFIG_UNREADABLE: 'the config file cannot be read',
  CONFIG_ENV_INVALID: 'an environment override (PIPESCALER_REDIS_URL, PIPESCALER_REDIS_PREFIX) is wrong',
  CLI_USAGE: "a command's arguments, flags or input files cannot be used",
};

/** The code of an error we raised, when it carries one from the table. */
export function errorCodeOf(err: unknown): ErrorCode | null {
  if (!(err instanceof Error) || !('code' in err) || typeof err.code !== 'string') return null;
  return Object.hasOwn(ERROR_CODES, err.code) ? (err.code as ErrorCode) : null;
}
