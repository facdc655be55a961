// The response envelope and the error bodies (docs/platform-api.md#response-envelope, #errors).
import { z } from 'zod';
import { Uuid } from './ids.js';

export const envelope = <T extends z.ZodType>(result: T) =>
  z.looseObject({ status: z.number().int(), requestId: Uuid, result });

/** A DELETE answers {status, requestId} with no result. */
export const EmptyEnvelope = z.looseObject({ status: z.number().int(), requestId: Uuid });

/** `{"status": 404, "error": "NOT_FOUND: Unknown pipe", "requestId": "..."}` */
export const ErrorBody = z.looseObject({
  status: z.number().int(),
  error: z.string(),
  requestId: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The 429 body: `{"error":"TOO_MANY_REQUESTS"}`, no status, no requestId. */
export const RateLimitBody = z.looseObject({ error: z.literal('TOO_MANY_REQUESTS') });

/** HTTP reasons in the platform's SCREAMING_SNAKE form, the prefix of every error text. */
export const REASONS: Readonly<Record<number, string>> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  424: 'FAILED_DEPENDENCY',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};
