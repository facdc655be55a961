// The platform's request budget: a fixed window per API key, counted by the platform for every
// call (a read is a call too). One shape for the platform's limit, the embedded cloud's and a
// key's in the config.

/** `requests` per `perMs` milliseconds. */
export interface RateLimit {
  readonly requests: number;
  readonly perMs: number;
}

/** The platform's limit per API key: 10 requests per 10 s. */
export const PLATFORM_RATE_LIMIT: RateLimit = { requests: 10, perMs: 10_000 };
