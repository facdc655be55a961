// The typed client of every endpoint: one generic call() driven by the ENDPOINTS table, and a
// thin typed method per operation over it. No logging here: telemetry listens to `events`.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Dispatcher, Pool } from 'undici';
import type { z } from 'zod';
import { ApiClientEmitter } from './client-events.js';
import { buildPath, ENDPOINTS, pathTemplate, type EndpointDef, type Operation } from './endpoints.js';
import { ApiError, furtherReach, type ApiReach } from './errors.js';
import { acquirePool, privatePool, releasePool, sendOnce } from './http.js';
import { parseResponse, rateLimitHeaders, type RateLimitHeaders } from './response.js';
import { resolveRetry, NO_RETRY, retryDelay, type RetryOptions, type RetryPolicy } from './retry-policy.js';
import type { ReversePrivateEndpoint } from './schemas/endpoint.js';
import type { Pipe, ScalingRequest } from './schemas/pipe.js';
import type { Service } from './schemas/service.js';
import type { Alert, AlertInput, Dashboard, DashboardInput, Source } from './schemas/stack.js';

export interface ClientOptions {
  baseUrl: string;
  keyId: string;
  keySecret: string;
  /** Per attempt: connecting, headers and body together within this. */
  timeoutMs?: number;
  retry?: RetryOptions | false;
  /** Answers larger than this (bytes) fail API_BAD_RESPONSE unread. Default 4 MiB. */
  maxResponseBytes?: number;
  /** Default: the shared keep-alive Pool of the base URL's origin. */
  dispatcher?: Dispatcher;
  /** A keep-alive Pool of this client's own instead of the shared one, so `close({ force: true })`
   *  can end its requests in flight without touching other clients (the daemon's lanes). */
  ownPool?: boolean;
  /** Injectable so tests don't wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source, [0, 1). */
  random?: () => number;
  now?: () => number;
}

export interface ApiResponse<T> {
  result: T;
  requestId: string;
  status: number;
  /** X-RateLimit-Remaining/Reset of this answer (the daemon paces each key's budget on them). */
  rateLimit?: RateLimitHeaders;
  /** The answer was used although its envelope did not fit (a requestId that is not a uuid). */
  envelopeIssue?: string;
  /** What the answer had that the client read leniently, one line each: a pipe state it does not
   *  know, read as Unknown (which takes no scaling). Absent when none. */
  tolerated?: readonly string[];
}

export interface CallOptions {
  signal?: AbortSignal;
  /** One attempt only; the ApiError (retryAfterSeconds on a 429) is the caller's to handle. */
  retry?: false;
  /** Sent as Idempotency-Key; the same on every retry. The scaling PATCH gets a fresh uuid otherwise. */
  idempotencyKey?: string;
  /** Called right before each attempt's first byte is written to its connection: a throw ends the
   *  call with what was thrown, the request unsent (a caller whose permission to send has a deadline). */
  beforeSend?: () => void;
}

/** Path parameters by name; any other member becomes a (repeated) query parameter. */
export type CallParams = Readonly<Record<string, string | readonly string[] | undefined>>;

type EnvelopeOf<Op extends Operation> = z.output<(typeof ENDPOINTS)[Op]['response']>;
export type ResultOf<Op extends Operation> = EnvelopeOf<Op> extends { result: infer R } ? R : undefined;

export interface ServiceRef {
  organizationId: string;
  serviceId: string;
}
export interface PipeRef extends ServiceRef {
  pipeId: string;
}
export interface ReversePrivateEndpointRef extends ServiceRef {
  reversePrivateEndpointId: string;
}
export interface DashboardRef extends ServiceRef {
  dashboardId: string;
}
export interface AlertRef extends ServiceRef {
  alertId: string;
}
export interface Deleted {
  requestId: string;
  status: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;

const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  sleepFor(ms, undefined, signal ? { signal } : undefined);

/**
 * A read's answer must be the resource asked about: one that carries another's id (a proxy's
 * cache, a routing fault) is refused as API_BAD_RESPONSE, never taken as this one's state.
 */
function answerAbout<T extends { id: string }>(
  res: ApiResponse<T>,
  operation: Operation,
  what: string,
  asked: string,
): ApiResponse<T> {
  if (res.result.id.toLowerCase() === asked.toLowerCase()) return res;
  throw new ApiError(
    'API_BAD_RESPONSE',
    `${operation}: the answer is about ${what} ${res.result.id}, not the ${what} asked about (${asked})`,
    { status: res.status, operation, requestId: res.requestId },
  );
}

export class ApiClient {
  readonly events = new ApiClientEmitter();
  // Private fields stay out of util.inspect and JSON: the secret lives only inside #authorization.
  readonly #authorization: string;
  readonly #origin: string;
  readonly #prefix: string;
  readonly #dispatcher: Dispatcher;
  readonly #ownsPool: boolean;
  readonly #privatePool: Pool | null;
  readonly #timeoutMs: number;
  readonly #maxResponseBytes: number | undefined;
  readonly #retry: RetryPolicy;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #random: () => number;
  readonly #now: () => number;
  #closed = false;

  constructor(options: ClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`baseUrl is not a URL: ${JSON.stringify(options.baseUrl)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('baseUrl must be http: or https:');
    if (!options.keyId) throw new TypeError('keyId is required');
    if (!options.keySecret) throw new TypeError('keySecret is required');
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#authorization = `Basic ${Buffer.from(`${options.keyId}:${options.keySecret}`).toString('base64')}`;
    this.#ownsPool = options.dispatcher === undefined;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxResponseBytes = options.maxResponseBytes;
    this.#privatePool =
      options.dispatcher === undefined && options.ownPool ? privatePool(this.#origin, this.#timeoutMs) : null;
    this.#dispatcher = options.dispatcher ?? this.#privatePool ?? acquirePool(this.#origin, this.#timeoutMs);
    this.#retry = resolveRetry(options.retry);
    this.#sleep = options.sleep ?? defaultSleep;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Calls one operation of the ENDPOINTS table. The body goes out as given: the platform is the
   * judge of it, so its 400 (with its text) reaches the caller rather than a local guess.
   */
  async call<Op extends Operation>(
    operation: Op,
    params: CallParams = {},
    body?: unknown,
    opts: CallOptions = {},
  ): Promise<ApiResponse<ResultOf<Op>>> {
    if (this.#closed) throw new Error('ApiClient is closed');
    const def: EndpointDef = ENDPOINTS[operation];
    const { path, query } = splitParams(def.path, params);
    const route = `${def.method} ${this.#prefix}${path}`;
    const headers: Record<string, string> = { authorization: this.#authorization, accept: 'application/json' };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    // One key per intended change, kept across the retries of this call.
    const idempotencyKey = opts.idempotencyKey ?? (def.method === 'PATCH' ? randomUUID() : undefined);
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    // Repeating a create after an ambiguous failure could create twice; a 429 is always safe.
    const idempotent = def.method !== 'POST' || opts.idempotencyKey !== undefined;
    const policy = opts.retry === false ? NO_RETRY : this.#retry;
    const started = this.#now();
    // An attempt that may have landed keeps the call's outcome unknown, whatever later ones answer.
    let reached: ApiReach = 'no';

    for (let attempt = 1; ; attempt++) {
      opts.signal?.throwIfAborted();
      const attemptStart = this.#now();
      try {
        const raw = await sendOnce({
          operation,
          dispatcher: this.#dispatcher,
          origin: this.#origin,
          path: `${this.#prefix}${path}${query}`,
          method: def.method,
          headers,
          body: payload,
          timeoutMs: this.#timeoutMs,
          signal: opts.signal,
          maxBytes: this.#maxResponseBytes,
          beforeSend: opts.beforeSend,
        });
        const parsed = parseResponse(raw, { operation, route, schema: def.response });
        const envelope = parsed.envelope as { requestId: string; result?: unknown };
        this.events.emit('request', {
          operation,
          method: def.method,
          status: raw.status,
          durationMs: this.#now() - attemptStart,
          attempt,
          requestId: envelope.requestId,
        });
        return {
          result: envelope.result,
          requestId: envelope.requestId,
          status: raw.status,
          rateLimit: rateLimitHeaders(raw.headers),
          ...(parsed.envelopeIssue !== undefined ? { envelopeIssue: parsed.envelopeIssue } : {}),
          ...(parsed.tolerated !== undefined ? { tolerated: parsed.tolerated } : {}),
        } as ApiResponse<ResultOf<Op>>;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err; // the caller's abort
        reached = furtherReach(reached, err.reached);
        this.#emitFailure(operation, def, err, attempt, attemptStart);
        const delay = retryDelay(err, {
          policy,
          attempt,
          elapsedMs: this.#now() - started,
          idempotent,
          random: this.#random,
        });
        if (delay === null) throw withAttempts(err, attempt, reached);
        this.events.emit('retry', { operation, code: err.code, attempt, delayMs: delay });
        await this.#sleep(delay, opts.signal);
      }
    }
  }

  #emitFailure(operation: Operation, def: EndpointDef, err: ApiError, attempt: number, attemptStart: number): void {
    this.events.emit('request', {
      operation,
      method: def.method,
      status: err.status ?? null,
      code: err.code,
      durationMs: this.#now() - attemptStart,
      attempt,
      ...(err.requestId ? { requestId: err.requestId } : {}),
    });
    if (err.code === 'API_RATE_LIMITED') {
      this.events.emit('rateLimited', { operation, resetSeconds: err.retryAfterSeconds ?? 0 });
    }
  }

  /** The pipe asked about (answerAbout: an answer about another one is refused). */
  async scalePipe(ref: PipeRef, body: ScalingRequest, opts?: CallOptions): Promise<ApiResponse<Pipe>> {
    const res = await this.call('scalePipe', pick(ref, 'organizationId', 'serviceId', 'pipeId'), body, opts);
    return answerAbout(res, 'scalePipe', 'pipe', ref.pipeId);
  }

  listServices(
    organizationId: string,
    filter?: readonly string[],
    opts?: CallOptions,
  ): Promise<ApiResponse<Service[]>> {
    return this.call('listServices', { organizationId, filter }, undefined, opts);
  }

  async getReversePrivateEndpoint(
    ref: ReversePrivateEndpointRef,
    opts?: CallOptions,
  ): Promise<ApiResponse<ReversePrivateEndpoint>> {
    const res = await this.call(
      'getReversePrivateEndpoint',
      pick(ref, 'organizationId', 'serviceId', 'reversePrivateEndpointId'),
      undefined,
      opts,
    );
    return answerAbout(res, 'getReversePrivateEndpoint', 'endpoint', ref.reversePrivateEndpointId);
  }

  listDashboards(ref: ServiceRef, opts?: CallOptions): Promise<ApiResponse<Dashboard[]>> {
    return this.call('listDashboards', pick(ref, 'organizationId', 'serviceId'), undefined, opts);
  }
  getDashboard(ref: DashboardRef, opts?: CallOptions): Promise<ApiResponse<Dashboard>> {
    return this.call('getDashboard', pick(ref, 'organizationId', 'serviceId', 'dashboardId'), undefined, opts);
  }
  createDashboard(ref: ServiceRef, body: DashboardInput, opts?: CallOptions): Promise<ApiResponse<Dashboard>> {
    return this.call('createDashboard', pick(ref, 'organizationId', 'serviceId'), body, opts);
  }
  updateDashboard(ref: DashboardRef, body: DashboardInput, opts?: CallOptions): Promise<ApiResponse<Dashboard>> {
    return this.call('updateDashboard', pick(ref, 'organizationId', 'serviceId', 'dashboardId'), body, opts);
  }
  async deleteDashboard(ref: DashboardRef, opts?: CallOptions): Promise<Deleted> {
    const { requestId, status } = await this.call(
      'deleteDashboard',
      pick(ref, 'organizationId', 'serviceId', 'dashboardId'),
      undefined,
      opts,
    );
    return { requestId, status };
  }

  listAlerts(ref: ServiceRef, opts?: CallOptions): Promise<ApiResponse<Alert[]>> {
    return this.call('listAlerts', pick(ref, 'organizationId', 'serviceId'), undefined, opts);
  }
  getAlert(ref: AlertRef, opts?: CallOptions): Promise<ApiResponse<Alert>> {
    return this.call('getAlert', pick(ref, 'organizationId', 'serviceId', 'alertId'), undefined, opts);
  }
  createAlert(ref: ServiceRef, body: AlertInput, opts?: CallOptions): Promise<ApiResponse<Alert>> {
    return this.call('createAlert', pick(ref, 'organizationId', 'serviceId'), body, opts);
  }
  updateAlert(ref: AlertRef, body: AlertInput, opts?: CallOptions): Promise<ApiResponse<Alert>> {
    return this.call('updateAlert', pick(ref, 'organizationId', 'serviceId', 'alertId'), body, opts);
  }
  async deleteAlert(ref: AlertRef, opts?: CallOptions): Promise<Deleted> {
    const { requestId, status } = await this.call(
      'deleteAlert',
      pick(ref, 'organizationId', 'serviceId', 'alertId'),
      undefined,
      opts,
    );
    return { requestId, status };
  }

  listSources(ref: ServiceRef, opts?: CallOptions): Promise<ApiResponse<Source[]>> {
    return this.call('listSources', pick(ref, 'organizationId', 'serviceId'), undefined, opts);
  }

  /** Releases the shared Pool (an injected dispatcher stays the caller's to close). */
  async close(opts: { force?: boolean } = {}): Promise<void> {
    if (this.#closed && !opts.force) return;
    this.#closed = true;
    if (this.#privatePool) {
      // force: requests in flight fail now (API_NETWORK) instead of being waited for
      await (opts.force ? this.#privatePool.destroy() : this.#privatePool.close());
      return;
    }
    if (this.#ownsPool) await releasePool(this.#origin, this.#timeoutMs);
  }
}

// Only the named members: a caller's wider object must not leak extra query parameters.
function pick<T extends object, K extends keyof T & string>(ref: T, ...keys: K[]): Record<K, string> {
  const out = {} as Record<K, string>;
  for (const k of keys) out[k] = String(ref[k]);
  return out;
}

function splitParams(template: string, params: CallParams): { path: string; query: string } {
  const { names } = pathTemplate(template);
  let search: URLSearchParams | undefined;
  for (const k in params) {
    const v = params[k];
    if (v === undefined) continue;
    if (names.has(k)) {
      if (typeof v !== 'string') throw new TypeError(`path parameter ${k} must be a string`);
    } else {
      search ??= new URLSearchParams();
      for (const item of typeof v === 'string' ? [v] : v) search.append(k, item);
    }
  }
  const qs = search?.toString();
  return {
    path: buildPath(template, params as Readonly<Record<string, string | undefined>>),
    query: qs ? `?${qs}` : '',
  };
}

function withAttempts(err: ApiError, attempts: number, reached: ApiReach): ApiError {
  return new ApiError(err.code, err.message, {
    status: err.status,
    platformError: err.platformError,
    requestId: err.requestId,
    operation: err.operation,
    retryAfterSeconds: err.retryAfterSeconds,
    attempts,
    rateLimit: err.rateLimit,
    cause: err.cause,
    reached,
  });
}
