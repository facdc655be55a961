// Turns what came back from one attempt (a response, or a transport failure) into the validated
// envelope or one ApiError. Messages name the operation and, for a response that does not fit,
// the field path; they never carry request headers.
import type { IncomingHttpHeaders } from 'node:http';
import { formatPath } from './issue-path.js';
import type { z } from 'zod';
import { ApiError, codeForStatus } from './errors.js';
import { DEFAULT_RATE_LIMIT_WAIT_S } from './retry-policy.js';

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

/** The validated envelope of a 2xx answer; an ApiError for anything else. */
export function parseResponse(raw: RawResponse, ctx: ResponseContext): unknown {
  const json = tryJson(raw.text);
  if (raw.status >= 200 && raw.status < 300) return validSuccess(raw, json, ctx);
  throw errorFromResponse(raw, json, ctx);
}

function validSuccess(raw: RawResponse, json: JsonResult, ctx: ResponseContext): unknown {
  const { operation } = ctx;
  const requestId = headerRequestId(raw.headers);
  if (!json.ok) {
    throw new ApiError('API_BAD_RESPONSE', `${operation}: HTTP ${raw.status} answer is not JSON (${describeBody(raw)})`, {
      status: raw.status, operation, requestId,
    });
  }
  const parsed = ctx.schema.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue ? formatPath(issue.path) : '';
    throw new ApiError(
      'API_BAD_RESPONSE',
      `${operation}: response does not fit the schema at ${at || '(root)'}: ${issue?.message ?? 'invalid'}`,
      { status: raw.status, operation, requestId: bodyRequestId(json.value) ?? requestId },
    );
  }
  return parsed.data;
}

function errorFromResponse(raw: RawResponse, json: JsonResult, ctx: ResponseContext): ApiError {
  const { operation, route } = ctx;
  const { status } = raw;
  const code = codeForStatus(status);
  const body = json.ok ? json.value : undefined;
  const requestId = bodyRequestId(body) ?? headerRequestId(raw.headers);
  const platformError = bodyErrorText(body);

  if (status === 429) {
    const resetSeconds = rateLimitReset(raw.headers) ?? DEFAULT_RATE_LIMIT_WAIT_S;
    return new ApiError(code, `${operation}: ${platformError ?? 'TOO_MANY_REQUESTS'} (window resets in ${resetSeconds} s)`, {
      status, operation, requestId, platformError: platformError ?? 'TOO_MANY_REQUESTS', retryAfterSeconds: resetSeconds,
    });
  }
  if (platformError !== undefined) {
    return new ApiError(code, `${operation}: ${platformError}`, { status, operation, requestId, platformError });
  }
  // No platform error body: the gateway answered (an unrouted path gets its HTML 404).
  const message = status === 404
    ? `${operation}: no such route: ${route} (HTTP 404, ${describeBody(raw)})`
    : `${operation}: HTTP ${status} without an error body (${describeBody(raw)})`;
  return new ApiError(code, message, { status, operation, requestId });
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/** A failure with no (complete) response: timeout, reset, refused, malformed HTTP. */
export function transportError(err: unknown, ctx: { operation: string; timedOut: boolean; timeoutMs: number }): ApiError {
  const { operation } = ctx;
  const code = errorCode(err);
  // A sanitized cause: undici's errors can hold sockets and, through them, the request.
  const cause = { code, message: err instanceof Error ? err.message : String(err) };
  if (ctx.timedOut || (code !== undefined && TIMEOUT_CODES.has(code))) {
    return new ApiError('API_TIMEOUT', `${operation}: no complete answer within ${ctx.timeoutMs} ms`, { operation, cause });
  }
  // undici 7 leaves `code` unset on some parser errors (an invalid status line): the name tells.
  if (code?.startsWith('HPE_') || (err instanceof Error && err.name === 'HTTPParserError')) {
    return new ApiError('API_BAD_RESPONSE', `${operation}: malformed HTTP answer (${code ?? cause.message})`, { operation, cause });
  }
  return new ApiError('API_NETWORK', `${operation}: network error (${code ?? 'unknown'}: ${cause.message})`, { operation, cause });
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

function bodyErrorText(body: unknown): string | undefined {
  return isRecord(body) && typeof body.error === 'string' ? body.error : undefined;
}

function bodyRequestId(body: unknown): string | undefined {
  return isRecord(body) && typeof body.requestId === 'string' ? body.requestId : undefined;
}

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
