// Errors the embedded cloud answers with, and the one formatter that turns zod issues into the
// platform's `BAD_REQUEST: <field>: <what is wrong>` text.
import type { z } from 'zod';
import { formatPath, REASONS } from '../api/internal.js';

export { formatPath };

/** Thrown by a route handler; the server turns it into `{status, error: "REASON: text", requestId}`. */
export class CloudHttpError extends Error {
  override readonly name = 'CloudHttpError';
  constructor(
    readonly status: number,
    text: string,
  ) {
    super(text);
  }
  /** "NOT_FOUND: Unknown pipe" */
  get platformText(): string {
    return `${REASONS[this.status] ?? 'ERROR'}: ${this.message}`;
  }
}

export const badRequest = (text: string) => new CloudHttpError(400, text);
export const notFound = (what: string) => new CloudHttpError(404, `Unknown ${what}`);

/** `tiles[0].w` from ['tiles', 0, 'w']. */

function bound(word: 'most' | 'least', n: unknown, origin: unknown): string {
  if (origin === 'string') return `must be at ${word} ${String(n)} characters`;
  if (origin === 'array' || origin === 'set') return `must have at ${word} ${String(n)} items`;
  return `must be at ${word} ${String(n)}`;
}

// Short messages for zod's built-in issues; schema-level messages (the scaling ranges, the alert
// rules of src/api) take precedence over this map, so they reach the client unchanged.
export const issueMessages: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'too_big':
      return bound('most', iss.maximum, iss.origin);
    case 'too_small':
      return bound('least', iss.minimum, iss.origin);
    case 'invalid_type':
      if (iss.input === undefined) return 'is required';
      return `must be ${iss.expected === 'int' ? 'an integer' : /^[aeiou]/.test(iss.expected) ? `an ${iss.expected}` : `a ${iss.expected}`}`;
    case 'invalid_value':
      return `must be one of ${iss.values.map((v) => String(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `unknown member${iss.keys.length > 1 ? 's' : ''} ${iss.keys.join(', ')}`;
    case 'invalid_format':
      return iss.format === 'regex' ? undefined : `must be a valid ${iss.format}`;
    default:
      return undefined;
  }
};

/** One line naming each failing field: `tiles[0].w: must be at most 24; name: is required`. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((iss) => {
      const path = formatPath(iss.path);
      if (path === '' && iss.code === 'invalid_type') return `body ${iss.message}`;
      if (path === '' || iss.message.startsWith(path)) return iss.message;
      return `${path}: ${iss.message}`;
    })
    .join('; ');
}

/** Parse a request body with the schema of the endpoint table, or throw the 400 naming the field. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const r = schema.safeParse(body, { error: issueMessages });
  if (!r.success) throw badRequest(formatIssues(r.error.issues));
  return r.data;
}
