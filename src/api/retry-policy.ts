// When to try an API call again, and after how long. undici's RetryAgent honours Retry-After
// only; the platform sends X-RateLimit-Reset instead (docs/platform-api.md#rate-limit), hence this module.
import type { ApiError } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included. */
  maxAttempts?: number;
  /** No attempt starts after this much time since the first one (waits included). */
  maxElapsedMs?: number;
  /** First backoff ceiling; doubles per attempt up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  maxElapsedMs: 60_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
};

/** The policy of exactly one attempt (`retry: false`). */
export const NO_RETRY: RetryPolicy = { ...DEFAULT_RETRY, maxAttempts: 1 };

export function resolveRetry(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return NO_RETRY;
  const p = { ...DEFAULT_RETRY, ...stripUndefined(options ?? {}) };
  for (const [k, v] of Object.entries(p)) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`retry.${k} must be a non-negative number`);
  }
  if (p.maxAttempts < 1 || !Number.isInteger(p.maxAttempts))
    throw new RangeError('retry.maxAttempts must be an integer >= 1');
  return p;
}

/** The wait of a 429 when the platform gave no X-RateLimit-Reset. */
export const DEFAULT_RATE_LIMIT_WAIT_S = 1;

export interface RetryContext {
  policy: RetryPolicy;
  /** 1 for the attempt that just failed. */
  attempt: number;
  /** Milliseconds since the first attempt started. */
  elapsedMs: number;
  /** False for calls whose repetition could do the work twice (a create without idempotency key). */
  idempotent: boolean;
  random: () => number;
}

/**
 * Milliseconds to wait before the next attempt, or null to give up with this error.
 * A 429 waits what the platform asked; 5xx, network failures and timeouts back off
 * exponentially with full jitter; any other error is final.
 */
export function retryDelay(err: ApiError, ctx: RetryContext): number | null {
  const { policy, attempt, elapsedMs } = ctx;
  if (attempt >= policy.maxAttempts) return null;
  let delay: number;
  if (err.code === 'API_RATE_LIMITED') {
    // Refused before any work was done, so safe to repeat even for a create.
    delay = Math.ceil((err.retryAfterSeconds ?? DEFAULT_RATE_LIMIT_WAIT_S) * 1000);
  } else if (err.retriable && (ctx.idempotent || err.reached === 'no')) {
    // A create that never reached the platform (refused connection) cannot have been done.
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
    delay = Math.floor(ctx.random() * ceiling);
  } else {
    return null;
  }
  return elapsedMs + delay > policy.maxElapsedMs ? null : delay;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
