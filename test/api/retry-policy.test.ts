import { describe, expect, it } from 'vitest';
import { ApiError, DEFAULT_RETRY, type ApiErrorCode } from '../../src/api/index.js';
import { resolveRetry, retryDelay } from '../../src/api/retry-policy.js';

const err = (code: ApiErrorCode, retryAfterSeconds?: number) => new ApiError(code, 'x', { retryAfterSeconds });
const ctx = (attempt: number, over: Partial<Parameters<typeof retryDelay>[1]> = {}) => ({
  policy: DEFAULT_RETRY,
  attempt,
  elapsedMs: 0,
  idempotent: true,
  random: () => 1 - Number.EPSILON,
  ...over,
});

describe('retry policy', () => {
  it('defaults to 5 attempts within 60 s, 250 ms base, 10 s cap', () => {
    expect(resolveRetry(undefined)).toEqual({
      maxAttempts: 5,
      maxElapsedMs: 60_000,
      baseDelayMs: 250,
      maxDelayMs: 10_000,
    });
    expect(resolveRetry({ maxAttempts: 2, baseDelayMs: undefined })).toMatchObject({
      maxAttempts: 2,
      baseDelayMs: 250,
    });
    expect(resolveRetry(false).maxAttempts).toBe(1);
    expect(() => resolveRetry({ maxAttempts: 0 })).toThrow('retry.maxAttempts');
  });

  it('backs off exponentially up to maxDelayMs, scaled by the jitter draw', () => {
    const ceilings = [1, 2, 3, 4].map((a) =>
      retryDelay(err('API_SERVER_ERROR'), ctx(a, { policy: { ...DEFAULT_RETRY, maxAttempts: 99 } })),
    );
    expect(ceilings).toEqual([249, 499, 999, 1999]);
    expect(retryDelay(err('API_TIMEOUT'), ctx(10, { policy: { ...DEFAULT_RETRY, maxAttempts: 99 } }))).toBe(9999);
    expect(retryDelay(err('API_NETWORK'), ctx(1, { random: () => 0 }))).toBe(0);
  });

  it('waits X-RateLimit-Reset on a 429, one second without it', () => {
    expect(retryDelay(err('API_RATE_LIMITED', 3.42), ctx(1))).toBe(3420);
    expect(retryDelay(err('API_RATE_LIMITED'), ctx(1))).toBe(1000);
    expect(retryDelay(err('API_RATE_LIMITED', 2), ctx(1, { idempotent: false }))).toBe(2000);
  });

  it.each([
    'API_BAD_REQUEST',
    'API_UNAUTHORIZED',
    'API_FORBIDDEN',
    'API_NOT_FOUND',
    'API_FAILED_DEPENDENCY',
    'API_BAD_RESPONSE',
  ] as const)('never retries %s', (code) => {
    expect(retryDelay(err(code), ctx(1))).toBeNull();
  });

  it('stops at maxAttempts, at maxElapsedMs, and for a non-idempotent call after an ambiguous failure', () => {
    expect(retryDelay(err('API_SERVER_ERROR'), ctx(5))).toBeNull();
    expect(retryDelay(err('API_RATE_LIMITED', 5), ctx(1, { elapsedMs: 56_000 }))).toBeNull();
    expect(retryDelay(err('API_RATE_LIMITED', 4), ctx(1, { elapsedMs: 56_000 }))).toBe(4000);
    expect(retryDelay(err('API_TIMEOUT'), ctx(1, { idempotent: false }))).toBeNull();
  });

  it('repeats a non-idempotent call whose request surely never reached the platform', () => {
    const refused = new ApiError('API_NETWORK', 'x', { reached: 'no' });
    expect(retryDelay(refused, ctx(1, { idempotent: false }))).toBe(249);
    expect(retryDelay(new ApiError('API_NETWORK', 'x'), ctx(1, { idempotent: false }))).toBeNull();
  });
});
