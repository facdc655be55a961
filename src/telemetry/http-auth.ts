// Credentials of the telemetry port: a bearer token or HTTP basic auth, compared in constant time
// (over SHA-256 digests, so the lengths do not leak either). The secret is never put in an answer,
// a log line or an error.
import { createHash, timingSafeEqual } from 'node:crypto';

/** What /metrics and /history ask for (the config's telemetry.auth, resolved). */
export type TelemetryCredentials =
  | { readonly type: 'bearer'; readonly token: string }
  | { readonly type: 'basic'; readonly username: string; readonly password: string };

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();
const same = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b));

/** Whether an Authorization header carries the credentials. */
export function authorized(header: string | undefined, auth: TelemetryCredentials): boolean {
  const [, rawScheme, value] = /^\s*(\S+)\s+(\S+)\s*$/.exec(header ?? '') ?? [];
  if (rawScheme === undefined || value === undefined) return false;
  const scheme = rawScheme.toLowerCase();
  if (auth.type === 'bearer') return scheme === 'bearer' && same(value, auth.token);
  if (scheme !== 'basic') return false;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  // both compared, always: which one was wrong does not show in the time taken
  const user = same(decoded.slice(0, colon), auth.username);
  const password = same(decoded.slice(colon + 1), auth.password);
  return user && password;
}

/** The WWW-Authenticate header of a 401. */
export const challenge = (auth: TelemetryCredentials): string =>
  auth.type === 'bearer' ? 'Bearer realm="pipescaler"' : 'Basic realm="pipescaler", charset="UTF-8"';
