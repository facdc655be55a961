// Turns what came back from one attempt (a response, or a transport failure) into the validated
// envelope or one ApiError. Messages name the operation and, for a response that does not fit,
// the field path; they never carry request headers.
import type { IncomingHttpHeaders } from 'node:http';
import { formatPath } from './issue-path.js';
import type { z } from 'zod';
import { ApiError, codeForStatus } from './errors.js';
import { DEFAULT_RATE_LIMIT_WAIT_S } from './retry-policy.js';
import { bounded } from './safe-text.js';

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface ResponseContext {
  operation: string;
  /** "PATCH /v1/organizations/..." (no query string). */
  route: string;
  schema: z.ZodType;
}

/** What X-RateLimit-Remaining and X-RateLimit-Reset said (each absent when missing or unparsable). */
export interface RateLimitHeaders {
  readonly remaining?: number;
  readonly resetSeconds?: number;
  /** The header as sent, when it was there but not a non-negative number. */
  readonly resetInvalid?: string;
}

export interface ParsedAnswer {
  envelope: unknown;
  envelopeIssue?: string;
  /** What the answer had that the client read leniently (a pipe state it does not know). */
  tolerated?: readonly string[];
}

/** The validated envelope of a 2xx answer; an ApiError for anything else. An envelope whose
 *  requestId alone does not fit (not a uuid) is still the answer: `envelopeIssue` says what. */
export function parseResponse(raw: RawResponse, ctx: ResponseContext): ParsedAnswer {
  const json = tryJson(raw.text);
  if (raw.status >= 200 && raw.status < 300) return validSuccess(raw, json, ctx);
  throw errorFromResponse(raw, json, ctx);
}

/** The rate-limit headers of any answer. */
export function rateLimitHeaders(headers: IncomingHttpHeaders): RateLimitHeaders {
  const remainingRaw = headerValue(headers, 'x-ratelimit-remaining');
  const remaining = remainingRaw === undefined ? undefined : Number(remainingRaw);
  const resetSeconds = rateLimitReset(headers);
  const resetRaw = headerValue(headers, 'x-ratelimit-reset');
  return {
    ...(remaining !== undefined && Number.isInteger(remaining) && remaining >= 0 ? { remaining } : {}),
    ...(resetSeconds !== undefined ? { resetSeconds } : {}),
    ...(resetSeconds === undefined && resetRaw !== undefined && resetRaw.trim() !== ''
      ? { resetInvalid: resetRaw.slice(0, 40) }
      : {}),
  };
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function validSuccess(raw: RawResponse, json: JsonResult, ctx: ResponseContext): ParsedAnswer {
  const answer = envelopeOf(raw, json, ctx);
  const tolerated = json.ok ? toleratedIn(json.value, answer.envelope) : [];
  return tolerated.length > 0 ? { ...answer, tolerated } : answer;
}

/** A result's `state` that the schema read as something else (ReportedPipeState: Unknown). */
function toleratedIn(sent: unknown, read: unknown): string[] {
  const s = isRecord(sent) && isRecord(sent.result) ? sent.result.state : undefined;
  const r = isRecord(read) && isRecord(read.result) ? read.result.state : undefined;
  return typeof s === 'string' && s !== r
    ? [`result.state ${JSON.stringify(s.slice(0, 40))} is not a state the client knows: read as ${String(r)}`]
    : [];
}

function envelopeOf(raw: RawResponse, json: JsonResult, ctx: ResponseContext): ParsedAnswer {
  const { operation } = ctx;
  const requestId = headerRequestId(raw.headers);
  if (!json.ok) {
    throw new ApiError(
      'API_BAD_RESPONSE',
      `${operation}: HTTP ${raw.status} answer is not JSON (${describeBody(raw)})`,
      {
        status: raw.status,
        operation,
        requestId,
      },
    );
  }
  const parsed = ctx.schema.safeParse(json.value);
  if (
    !parsed.success &&
    isRecord(json.value) &&
    typeof json.value.requestId === 'string' &&
    parsed.error.issues.every((i) => i.path.length === 1 && i.path[0] === 'requestId')
  ) {
    // The answer itself fits; only the envelope's id is odd. Refusing it would re-send a change
    // the platform already made: keep the result and report the envelope.
    const patched = ctx.schema.safeParse({ ...json.value, requestId: PLACEHOLDER_UUID });
    if (patched.success) {
      const odd = json.value.requestId;
      return {
        envelope: { ...(patched.data as object), requestId: odd },
        envelopeIssue: `${operation}: envelope requestId is not a uuid (${JSON.stringify(odd.slice(0, 80))})`,
      };
    }
  }
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue ? formatPath(issue.path) : '';
    throw new ApiError(
      'API_BAD_RESPONSE',
      `${operation}: response does not fit the schema at ${at || '(root)'}: ${issue?.message ?? 'invalid'}`,
      { status: raw.status, operation, requestId: bodyRequestId(json.value) ?? requestId },
    );
  }
  return { envelope: parsed.data };
}

const PLACEHOLDER_UUID = '00000000-0000-4000-8000-000000000000';

function errorFromResponse(raw: RawResponse, json: JsonResult, ctx: ResponseContext): ApiError {
  const err = errorWithoutHeaders(raw, json, ctx);
  return new ApiError(err.code, err.message, {
    status: err.status,
    operation: err.operation,
    requestId: err.requestId,
    platformError: err.platformError,
    retryAfterSeconds: err.retryAfterSeconds,
    rateLimit: rateLimitHeaders(raw.headers),
  });
}

function errorWithoutHeaders(raw: RawResponse, json: JsonResult, ctx: ResponseContext): ApiError {
  const { operation, route } = ctx;
  const { status } = raw;
  const code = codeForStatus(status);
  const body = json.ok ? json.value : undefined;
  const requestId = bodyRequestId(body) ?? headerRequestId(raw.headers);
  const platformError = bodyErrorText(body);

  if (status === 429) {
    const resetSeconds = rateLimitReset(raw.headers) ?? DEFAULT_RATE_LIMIT_WAIT_S;
    return new ApiError(
      code,
      `${operation}: ${platformError ?? 'TOO_MANY_REQUESTS'} (window resets in ${resetSeconds} s)`,
      {
        status,
        operation,
        requestId,
        platformError: platformError ?? 'TOO_MANY_REQUESTS',
        retryAfterSeconds: resetSeconds,
      },
    );
  }
  if (platformError !== undefined) {
    return new ApiError(code, `${operation}: ${platformError}`, { status, operation, requestId, platformError });
  }
  // No platform error body: the gateway answered (an unrouted path gets its HTML 404).
  const message =
    status === 404
      ? `${operation}: no such route: ${route} (HTTP 404, ${describeBody(raw)})`
      : `${operation}: HTTP ${status} without an error body (${describeBody(raw)})`;
  return new ApiError(code, message, { status, operation, requestId });
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

/** Failures while connecting: the request never left, so the platform surely did not act on it. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A failure with no (complete) response: timeout, reset, refused, malformed HTTP. Only a failure
 *  to connect says the request never reached the platform (reached `no`); the rest are `maybe`. */
export function transportError(
  err: unknown,
  ctx: { operation: string; timedOut: boolean; timeoutMs: number },
): ApiError {
  const { operation } = ctx;
  const code = errorCode(err);
  // A sanitized cause: undici's errors can hold sockets and, through them, the request.
  const cause = { code, message: err instanceof Error ? err.message : String(err) };
  const reached = code !== undefined && NOT_SENT_CODES.has(code) ? 'no' : 'maybe';
  if (ctx.timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new ApiError('API_TIMEOUT', `${operation}: no complete answer within ${ctx.timeoutMs} ms`, {
      operation,
      cause,
      reached,
    });
  }
  // undici 7 leaves `code` unset on some parser errors (an invalid status line): the name tells.
  if (code?.startsWith('HPE_') || (err instanceof Error && err.name === 'HTTPParserError')) {
    return new ApiError('API_BAD_RESPONSE', `${operation}: malformed HTTP answer (${code ?? cause.message})`, {
      operation,
      cause,
    });
  }
  return new ApiError('API_NETWORK', `${operation}: network error (${code ?? 'unknown'}: ${cause.message})`, {
    operation,
    cause,
    reached,
  });
}

type JsonResult = { ok: true; value: unknown } | { ok: false };

function tryJson(text: string): JsonResult {
  if (!/\S/.test(text)) return { ok: false }; // not trim(): that copies the whole body
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function describeBody(raw: RawResponse): string {
  if (raw.text.length === 0) return 'empty body';
  const type = raw.headers['content-type'] ?? 'no content-type';
  return `${type}, ${Buffer.byteLength(raw.text)} bytes`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The platform's error text, bounded: it travels into logs, Redis and every status. */
function bodyErrorText(body: unknown): string | undefined {
  return isRecord(body) && typeof body.error === 'string' ? bounded(body.error) : undefined;
}

function bodyRequestId(body: unknown): string | undefined {
  return isRecord(body) && typeof body.requestId === 'string' ? bounded(body.requestId, MAX_REQUEST_ID) : undefined;
}

/** A request id is a UUID; anything much longer is not one worth keeping whole. */
const MAX_REQUEST_ID = 100;

function headerRequestId(headers: IncomingHttpHeaders): string | undefined {
  const v = headers['x-request-id'];
  return typeof v === 'string' ? v : undefined;
}

/** X-RateLimit-Reset: seconds until the window resets, possibly fractional ("3.42"). */
export function rateLimitReset(headers: IncomingHttpHeaders): number | undefined {
  const v = headers['x-ratelimit-reset'];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || s.trim() === '') return undefined;
  const n = Number(s);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function errorCode(err: unknown): string | undefined {
  if (isRecord(err) || err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    // A timeout reason from AbortSignal.timeout is a DOMException named TimeoutError.
    if ((err as { name?: unknown }).name === 'TimeoutError') return 'ETIMEDOUT';
  }
  return undefined;
}

/** ["result", 0, "id"] -> "result[0].id" */
