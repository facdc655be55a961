// One error type for every failure of an API call, with a stable code to branch on (the undici
// model: callers test `code`, never the message).

export const API_ERROR_CODES = [
  'API_BAD_REQUEST',
  'API_UNAUTHORIZED',
  'API_FORBIDDEN',
  'API_NOT_FOUND',
  'API_FAILED_DEPENDENCY',
  'API_RATE_LIMITED',
  'API_SERVER_ERROR',
  'API_TIMEOUT',
  'API_NETWORK',
  'API_BAD_RESPONSE',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/**
 * Whether the platform may have acted on the request (ApiError.reached):
 * - `no`: surely not. Nothing reached it (connection refused, DNS, connect timeout), or it answered
 *   a refusal (3xx, 4xx, 429): sending the change again is safe.
 * - `maybe`: the request was (or may have been) sent and no answer says what became of it: a timeout
 *   after connecting, a reset or cut connection (a client closed with requests in flight), a 5xx,
 *   a malformed HTTP answer.
 * - `yes`: it answered 2xx, but the answer could not be read (not JSON, no envelope, larger than
 *   the limit, a member the client needs does not fit): the change was taken; what the pipe holds
 *   is unknown.
 * The outcome is unknown (ApiError.outcomeUnknown) for `yes`, and for `maybe` unless the last answer
 * was a 5xx: a 5xx is an answer, and the same request may go again with the same Idempotency-Key,
 * which the platform answers as it did the first, so nothing lands twice. A timeout or a cut
 * connection (in any attempt of the call, when the last was a refusal) leaves it unknown.
 */
export type ApiReach = 'no' | 'maybe' | 'yes';
const REACH_ORDER: Readonly<Record<ApiReach, number>> = { no: 0, maybe: 1, yes: 2 };

/** The more certain of two: over several attempts, one that may have landed outweighs later refusals. */
export function furtherReach(a: ApiReach, b: ApiReach): ApiReach {
  return REACH_ORDER[a] >= REACH_ORDER[b] ? a : b;
}

/** What an answer's status says by itself; without one, `maybe` (the request may have been sent). */
export function reachOfStatus(status: number | undefined): ApiReach {
  if (status === undefined) return 'maybe';
  if (status >= 200 && status < 300) return 'yes';
  return status >= 500 ? 'maybe' : 'no';
}

export interface ApiErrorDetails {
  /** HTTP status, when a response arrived. */
  status?: number | undefined;
  /** The platform's error text, e.g. "BAD_REQUEST: replicas must be between 1 and 10". */
  platformError?: string | undefined;
  requestId?: string | undefined;
  operation?: string | undefined;
  /** Seconds until the rate-limit window resets (429 only). */
  retryAfterSeconds?: number | undefined;
  /** How many attempts were made before giving up. */
  attempts?: number | undefined;
  /** X-RateLimit-Remaining/Reset of the answer, when one arrived. */
  rateLimit?:
    { readonly remaining?: number; readonly resetSeconds?: number; readonly resetInvalid?: string } | undefined;
  cause?: unknown;
  /** Default: from the status (reachOfStatus), `maybe` without one. */
  reached?: ApiReach | undefined;
}

/** The codes worth another attempt (ApiError.retriable). */
export const RETRIABLE_CODES: readonly ApiErrorCode[] = [
  'API_RATE_LIMITED',
  'API_SERVER_ERROR',
  'API_TIMEOUT',
  'API_NETWORK',
];

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: ApiErrorCode;
  readonly status: number | undefined;
  readonly platformError: string | undefined;
  readonly requestId: string | undefined;
  readonly operation: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly attempts: number | undefined;
  readonly rateLimit: ApiErrorDetails['rateLimit'];
  /** Whether the platform may have acted on the request (ApiReach); over a call's attempts, the furthest. */
  readonly reached: ApiReach;

  constructor(code: ApiErrorCode, message: string, details: ApiErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.status = details.status;
    this.platformError = details.platformError;
    this.requestId = details.requestId;
    this.operation = details.operation;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.attempts = details.attempts;
    this.rateLimit = details.rateLimit;
    this.reached = details.reached ?? reachOfStatus(details.status);
  }

  /** No answer says what became of the request (reached `yes`, or `maybe` with no 5xx to answer
   *  it: a timeout after it was sent, a reset or cut connection, a 2xx that could not be read): not
   *  a failed change but one whose outcome only a later read can settle. */
  get outcomeUnknown(): boolean {
    return this.reached === 'yes' || (this.reached === 'maybe' && !(this.status !== undefined && this.status >= 500));
  }

  /** Worth another attempt: rate limit, server errors, timeouts and network failures. */
  get retriable(): boolean {
    return RETRIABLE_CODES.includes(this.code);
  }
}

/** The stable code for an HTTP error status. */
export function codeForStatus(status: number): ApiErrorCode {
  switch (status) {
    case 400:
      return 'API_BAD_REQUEST';
    case 401:
      return 'API_UNAUTHORIZED';
    case 403:
      return 'API_FORBIDDEN';
    case 404:
      return 'API_NOT_FOUND';
    case 424:
      return 'API_FAILED_DEPENDENCY';
    case 429:
      return 'API_RATE_LIMITED';
    // The platform never redirects; following one would send the key elsewhere, and the request
    // itself was not at fault.
    default:
      return status >= 500 ? 'API_SERVER_ERROR' : status < 400 ? 'API_BAD_RESPONSE' : 'API_BAD_REQUEST';
  }
}

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;
