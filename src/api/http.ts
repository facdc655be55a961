// The transport: one keep-alive undici Pool per origin, shared by every client of that origin,
// and one attempt of a request with its own timeout.
import { once } from 'node:events';
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
 *
 * The timeout costs no AbortController (the costliest object of an attempt, a tenth of the
 * client's own CPU): undici's headersTimeout bounds the wait for headers, and a timer started when
 * they arrive destroys the body at what is left of the budget. The caller's signal goes to undici
 * as is; undici detaches its listener when the body closes, which is awaited.
 */
export async function sendOnce(a: Attempt): Promise<RawResponse> {
  const started = performance.now();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const res = await a.dispatcher.request({
      origin: a.origin,
      path: a.path,
      method: a.method,
      headers: a.headers,
      body: a.body ?? null,
      headersTimeout: a.timeoutMs,
      bodyTimeout: a.timeoutMs,
      signal: a.signal ?? null,
    });
    const left = a.timeoutMs - (performance.now() - started);
    const body = res.body;
    const expire = () => {
      timedOut = true;
      body.destroy();
    };
    if (left <= 0) expire();
    else timer = setTimeout(expire, left);
    // text() consumes the stream; if it fails midway undici destroys it.
    const text = await body.text();
    // undici detaches from the caller's signal when the body closes, a tick after its end.
    if (a.signal && !body.closed) await once(body, 'close');
    return { status: res.statusCode, headers: res.headers, text };
  } catch (err) {
    if (a.signal?.aborted) throw a.signal.reason;
    throw transportError(err, { operation: a.operation, timedOut, timeoutMs: a.timeoutMs });
  } finally {
    clearTimeout(timer);
  }
}
