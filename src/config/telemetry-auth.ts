// `telemetry.auth`: who may read /metrics and /history. A bearer token, or a user name and its
// password (HTTP basic), the secret from the environment (`${VAR}`) or a file like every other
// secret of the config (secrets.ts), never written in the file itself. /healthz and /readyz stay
// open: a kubelet probes them without credentials.
import { z } from 'zod';
import { nonEmptyString } from './fields.js';
import { isRecord, type RawIssue } from './issue.js';
import type { Strict } from './metric.js';
import type { TelemetryAuth } from './types.js';

export function telemetryAuthSchema(strict: Strict) {
  return strict({
    bearerToken: z.string({ error: 'must be a string from ${ENV_VAR}' }).optional(),
    bearerTokenFile: nonEmptyString.optional(),
    username: nonEmptyString.optional(),
    password: z.string({ error: 'must be a string from ${ENV_VAR}' }).optional(),
    passwordFile: nonEmptyString.optional(),
  });
}

type SecretOf = (
  spec: Record<string, unknown>,
  path: (string | number)[],
  valueKey: string,
  fileKey: string,
) => { secret?: string; badType?: true };

/** telemetry.auth resolved, its issues pushed to `issues`; undefined when there is none (or it is wrong). */
export function telemetryAuth(
  raw: Record<string, unknown>,
  secretOf: SecretOf,
  issues: RawIssue[],
): TelemetryAuth | undefined {
  const telemetry = isRecord(raw.telemetry) ? raw.telemetry : {};
  const spec = telemetry.auth;
  if (!isRecord(spec)) return undefined;
  const path = ['telemetry', 'auth'];
  const bearer = spec.bearerToken !== undefined || spec.bearerTokenFile !== undefined;
  const basic = spec.username !== undefined || spec.password !== undefined || spec.passwordFile !== undefined;
  if (bearer && basic) {
    issues.push({
      path,
      message: 'give a bearer token (bearerToken or bearerTokenFile) or basic auth (username and password), not both',
    });
    return undefined;
  }
  if (bearer) {
    const { secret } = secretOf(spec, path, 'bearerToken', 'bearerTokenFile');
    return secret === undefined ? undefined : { type: 'bearer', token: secret };
  }
  if (!basic) {
    issues.push({
      path,
      message: 'needs bearerToken (or bearerTokenFile), or username with password (or passwordFile)',
    });
    return undefined;
  }
  if (typeof spec.username !== 'string') {
    if (spec.username === undefined) issues.push({ path, message: 'basic auth needs a username' });
    return undefined;
  }
  if (spec.username.includes(':')) {
    issues.push({ path: [...path, 'username'], message: 'must not contain ":" (HTTP basic auth cannot carry it)' });
    return undefined;
  }
  if (spec.password === undefined && spec.passwordFile === undefined) {
    issues.push({ path, message: 'basic auth needs password: ${ENV_VAR} or passwordFile' });
    return undefined;
  }
  const { secret } = secretOf(spec, path, 'password', 'passwordFile');
  return secret === undefined ? undefined : { type: 'basic', username: spec.username, password: secret };
}
