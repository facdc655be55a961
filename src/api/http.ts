// The transport: one keep-alive undici Pool per origin, shared by every client of that origin,
// and one attempt of a request with its own timeout.
import { Pool, type Dispatcher } from 'undici';
import type { HttpMethod } from './endpoints.js';
import type { RawResponse } from './response.js';

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
  dispatcher: Dispatcher;
  origin: string;
  path: string;
  method: HttpMethod;
  headers: Record<string, string>;
  body: string | undefined;
  /** Aborts the attempt (the per-attempt timeout, joined with the caller's signal). */
  signal: AbortSignal;
  timeoutMs: number;
}

/** Sends one request and reads its whole body: nothing is left unconsumed. */
export async function sendOnce(a: Attempt): Promise<RawResponse> {
  const res = await a.dispatcher.request({
    origin: a.origin,
    path: a.path,
    method: a.method,
    headers: a.headers,
    body: a.body ?? null,
    headersTimeout: a.timeoutMs,
    bodyTimeout: a.timeoutMs,
    signal: a.signal,
  });
  // text() consumes the stream; if it fails midway undici destroys it.
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}
