// The transport: one keep-alive undici Pool per origin, shared by every client of that origin,
// and one attempt of a request with its own timeout.
import { once } from 'node:events';
import { Pool, type Dispatcher } from 'undici';
import type { HttpMethod } from './endpoints.js';
import { ApiError } from './errors.js';
import { transportError, type RawResponse } from './response.js';

/** The largest answer read (bytes): a scaling answer is a few kB; anything far larger is not one. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 2 ** 20;

const pools = new Map<string, { pool: Pool; users: number }>();
const poolKey = (origin: string, connectTimeoutMs: number) => `${origin} ${connectTimeoutMs}`;

/** A Pool of one client's own (ClientOptions.ownPool): destroying it ends only that client's requests. */
export function privatePool(origin: string, connectTimeoutMs: number): Pool {
  return new Pool(origin, { keepAliveTimeout: 30_000, connect: { timeout: connectTimeoutMs } });
}

/** The shared Pool of an origin (and connect timeout); every acquire is paired with one releasePool. */
export function acquirePool(origin: string, connectTimeoutMs: number): Pool {
  const key = poolKey(origin, connectTimeoutMs);
  let entry = pools.get(key);
  if (!entry) {
    entry = { pool: new Pool(origin, { keepAliveTimeout: 30_000, connect: { timeout: connectTimeoutMs } }), users: 0 };
    pools.set(key, entry);
  }
  entry.users += 1;
  return entry.pool;
}

/** Closes the Pool once its last user has released it. */
export async function releasePool(origin: string, connectTimeoutMs: number): Promise<void> {
  const key = poolKey(origin, connectTimeoutMs);
  const entry = pools.get(key);
  if (!entry) return;
  entry.users -= 1;
  if (entry.users > 0) return;
  pools.delete(key);
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
  /** The whole attempt (connecting, headers and body) within this. */
  timeoutMs: number;
  /** The caller's cancellation; its reason is rethrown as is. */
  signal: AbortSignal | undefined;
  /** A larger body fails API_BAD_RESPONSE without being buffered. Default DEFAULT_MAX_RESPONSE_BYTES. */
  maxBytes?: number;
  /** Called right before the request's first byte is written (connected): a throw ends it unsent,
   *  and the attempt rejects with what was thrown, as is. */
  beforeSend?: (() => void) | undefined;
}

/**
 * Sends one request and reads its whole body (nothing is left unconsumed). A failure without a
 * complete answer becomes an ApiError (API_TIMEOUT, API_NETWORK); the caller's abort stays its own.
 *
 * One timer bounds the whole attempt, without an AbortController (one per attempt was ~40% of the
 * client's own CPU per request): before the headers the wait is raced against it, and a request
 * left behind is dropped when undici settles it (its own headersTimeout, coarse, ends it); after
 * the headers it destroys the body. The Pool's connect timeout bounds connecting. The caller's
 * signal goes to undici as is; undici detaches its listener when the body closes, which is awaited.
 */
export async function sendOnce(a: Attempt): Promise<RawResponse> {
  let timedOut = false;
  let body: Dispatcher.ResponseData['body'] | undefined;
  let expire!: (err: Error) => void;
  const deadline = new Promise<never>((_, reject) => (expire = reject));
  const timer = setTimeout(() => {
    timedOut = true;
    if (body) body.destroy();
    else expire(new Error('attempt timed out'));
  }, a.timeoutMs);
  let refusal: { readonly err: unknown } | undefined;
  const dispatcher = a.beforeSend
    ? checkedBeforeSend(a.dispatcher, a.beforeSend, (err) => (refusal = { err }))
    : a.dispatcher;
  const pending = dispatcher.request({
    origin: a.origin,
    path: a.path,
    method: a.method,
    headers: a.headers,
    body: a.body ?? null,
    headersTimeout: a.timeoutMs,
    bodyTimeout: a.timeoutMs,
    signal: a.signal ?? null,
  });
  try {
    const res = await Promise.race([pending, deadline]);
    body = res.body;
    const text = await readBounded(
      body,
      res.headers['content-length'],
      a.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
      () =>
        new ApiError(
          'API_BAD_RESPONSE',
          `${a.operation}: HTTP ${res.statusCode} answer is larger than ${a.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES} bytes; not read`,
          {
            status: res.statusCode,
            operation: a.operation,
          },
        ),
    );
    // undici detaches from the caller's signal when the body closes, a tick after its end.
    if (a.signal && !body.closed) await once(body, 'close');
    return { status: res.statusCode, headers: res.headers, text };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (refusal) throw refusal.err;
    // A late answer is dropped: destroyed before its end, undici's body emits an error of its own.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the timer's callback sets both; flow analysis does not see a closure's writes
    if (timedOut && !body)
      pending.then(
        (late) => late.body.on('error', () => {}).destroy(),
        () => {},
      );
    if (a.signal?.aborted) throw a.signal.reason;
    throw transportError(err, { operation: a.operation, timedOut, timeoutMs: a.timeoutMs });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The dispatcher with `check` run right before each request's first byte is written: undici calls
 * a handler's onRequestStart once the request has its connection, and writes it in the same tick
 * unless the request was aborted by then. A throw aborts it unsent (nothing reached the server)
 * and goes to `refused`.
 */
function checkedBeforeSend(dispatcher: Dispatcher, check: () => void, refused: (err: unknown) => void): Dispatcher {
  return dispatcher.compose((dispatch) => (opts, handler) => dispatch(opts, new CheckedStart(handler, check, refused)));
}

class CheckedStart implements Dispatcher.DispatchHandler {
  constructor(
    private readonly inner: Dispatcher.DispatchHandler,
    private readonly check: () => void,
    private readonly refused: (err: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    try {
      this.check();
    } catch (err) {
      this.refused(err);
      controller.abort(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>): void {
    this.inner.onRequestUpgrade?.(...args);
  }

  onResponseStart(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>): void {
    this.inner.onResponseStart?.(...args);
  }

  onResponseData(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseData']>>): void {
    this.inner.onResponseData?.(...args);
  }

  onResponseEnd(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>): void {
    this.inner.onResponseEnd?.(...args);
  }

  onResponseError(...args: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseError']>>): void {
    this.inner.onResponseError?.(...args);
  }
}

/**
 * The body as text, at most `max` bytes: a declared length above it is refused before reading, a
 * body without one (chunked) is counted while read and destroyed once it passes the bound. A
 * 400 MB answer was read whole before (RSS 106 -> 506 MB).
 */
async function readBounded(
  body: Dispatcher.ResponseData['body'],
  declared: string | string[] | undefined,
  max: number,
  tooLarge: () => Error,
): Promise<string> {
  const length = typeof declared === 'string' ? Number(declared) : NaN;
  if (length > max) {
    body.on('error', () => {}).destroy();
    throw tooLarge();
  }
  // A declared length within the bound is all undici reads of this answer: text() is the fast path.
  if (Number.isFinite(length)) return body.text();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      body.on('error', () => {}).destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
