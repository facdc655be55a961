// The transport: one keep-alive undici Pool per origin, shared by every client of that origin,
// and one attempt of a request with its own timeout.
import { Pool, type Dispatcher } from 'undici';
import type { HttpMethod } from './endpoints.js';
import { transportError, type RawResponse } from './response.js';

const pools = new Map<string, { pool: Pool; users: number }>();

/** The shared Pool of an origin; every acquire is paired with one releasePool. */
export function acquirePool(origin: string): Pool {
  let entry = pools.get(origin);
  if (!entry) {
    entry = { pool: new Pool(origin, { keepAliveTimeout: 30_000 }), users: 0 };
    pools.set(origin, entry);
  }
  entry.users += 1;
  return entry.pool;
}

/** Closes the origin's Pool once its last user has released it. */
export async function releasePool(origin: string): Promise<void> {
  const entry = pools.get(origin);
  if (!entry) return;
  entry.users -= 1;
  if (entry.users > 0) return;
  pools.delete(origin);
  await entry.pool.close();
}

export interface Attempt {
  operation: string;
  dispatcher: Dispatcher;
  origin: string;
  path: string;
  method: HttpMethod;
  headers: Record<string, string>;
  body: string | undefined;
  /** Headers and body together must arrive within this. */
  timeoutMs: number;
  /** The caller's cancellation; its reason is rethrown as is. */
  signal: AbortSignal | undefined;
}

/**
 * Sends one request and reads its whole body (nothing is left unconsumed). A failure without a
 * complete answer becomes an ApiError (API_TIMEOUT, API_NETWORK); the caller's abort stays its own.
 */
export async function sendOnce(a: Attempt): Promise<RawResponse> {
  // A controller per attempt rather than AbortSignal.any: nothing stays attached to a long-lived
  // caller signal (a daemon's shutdown signal sees thousands of calls) and no timer outlives it.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, a.timeoutMs);
  const onAbort = () => controller.abort(a.signal?.reason);
  a.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await a.dispatcher.request({
      origin: a.origin,
      path: a.path,
      method: a.method,
      headers: a.headers,
      body: a.body ?? null,
      headersTimeout: a.timeoutMs,
      bodyTimeout: a.timeoutMs,
      signal: controller.signal,
    });
    // text() consumes the stream; if it fails midway undici destroys it.
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  } catch (err) {
    if (a.signal?.aborted) throw a.signal.reason;
    throw transportError(err, { operation: a.operation, timedOut, timeoutMs: a.timeoutMs });
  } finally {
    clearTimeout(timer);
    a.signal?.removeEventListener('abort', onAbort);
  }
}
