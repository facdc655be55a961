// API key secrets and the Redis password: from the environment (`${VAR}`) or a file, never written
// in the config itself, and never repeated in a message. Returns the resolved credentials per key
// name and every secret value, so the loader can scrub them from anything it prints.
import { isAbsolute, join } from 'node:path';
import { formatPath } from './errors.js';
import { parseRedisUrl } from './redis.js';
import { isRecord, type RawIssue } from './issue.js';
import { privateHost } from './sink-address.js';
import { telemetryAuth } from './telemetry-auth.js';
import type { TelemetryAuth } from './types.js';

export interface ResolvedKey {
  readonly keyId: string;
  readonly keySecret: string;
}

export interface SecretsResult {
  readonly keys: Record<string, ResolvedKey>;
  /** redis.password and redis.sentinelPassword, resolved. */
  readonly redis: { readonly password?: string; readonly sentinelPassword?: string };
  /** Per notification sink: its URL when it came from urlFile or is a credential (Slack), its secret. */
  readonly notify: Record<string, { url?: string; secret?: string }>;
  /** telemetry.auth resolved (absent: the telemetry port is open). */
  readonly telemetryAuth?: TelemetryAuth;
  readonly issues: RawIssue[];
  /** Every secret value met, to scrub from messages. */
  readonly secrets: string[];
}

export interface SecretsInput {
  readonly raw: unknown;
  /** Paths (formatted) of the scalars whose value came from an interpolation. */
  readonly interpolated: ReadonlyMap<string, string>;
  /** Folder of the config file: keySecretFile is relative to it. */
  readonly dir: string;
  readonly readFile: (path: string) => string;
  /** false: the keys' credentials are not wanted (status, pause, resume): each key is resolved
   *  with an empty id and secret, and nothing is asked of it. Default true. */
  readonly apiCredentials?: boolean;
  /** `validate --offline`: a secret file that is not there (or not readable here) is told to this
   *  and stands in with a placeholder, instead of being an error: the file exists only where the
   *  daemon runs (a Kubernetes Secret's mount, systemd's credentials directory). */
  readonly absentSecretFile?: (file: string, code: string) => void;
}

/** What an absent secret file stands in with under `absentSecretFile` (a URL for a urlFile). */
export const ABSENT_SECRET = 'absent-secret-file';
const ABSENT_URL = 'https://absent-secret-file.invalid/';

/** The variables a `${VAR}` / `${VAR:-default}` source text names. */
function variablesOf(source: string): string[] {
  return [...source.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g)].map((m) => m[1] ?? '');
}

/** Credentials of the default key when baseUrl is embedded and none are given: the fixtures' demo key. */
export const DEMO_KEY: ResolvedKey = { keyId: '', keySecret: '' };

export function resolveSecrets({
  raw,
  interpolated,
  dir,
  readFile,
  apiCredentials = true,
  absentSecretFile,
}: SecretsInput): SecretsResult {
  const issues: RawIssue[] = [];
  const secrets: string[] = [];
  const keys: Record<string, ResolvedKey> = {};
  if (!isRecord(raw)) return { keys, redis: {}, notify: {}, issues, secrets };
  const api = isRecord(raw.api) ? raw.api : {};
  const embedded = api.baseUrl === undefined || api.baseUrl === 'embedded';

  /** A secret from `${ENV_VAR}` (a literal is refused) or from a file relative to the config. */
  const secretOf = (
    spec: Record<string, unknown>,
    path: (string | number)[],
    valueKey: string,
    fileKey: string,
  ): { secret?: string; badType?: true } => {
    const value = spec[valueKey];
    const fileName = spec[fileKey];
    if (value !== undefined && value !== null) {
      const valuePath = [...path, valueKey];
      if (typeof value !== 'string') return { badType: true }; // the schema reports the type
      let secret: string | undefined;
      if (!interpolated.has(formatPath(valuePath))) {
        issues.push({
          path: valuePath,
          message: `a secret must not be written in the config file: use ${valueKey}: \${ENV_VAR} or ${fileKey}: /path/to/file`,
        });
      } else if (value === '') {
        const source = interpolated.get(formatPath(valuePath)) ?? '';
        issues.push({
          path: valuePath,
          message: `is empty: ${variablesOf(source).join(', ') || 'the variable'} is not set or empty (${source} resolved to nothing)`,
        });
      } else {
        secret = value;
        secrets.push(value);
      }
      if (fileName !== undefined)
        issues.push({ path: [...path, fileKey], message: `give ${valueKey} or ${fileKey}, not both` });
      return secret !== undefined ? { secret } : {};
    }
    if (typeof fileName !== 'string' || fileName === '') return {};
    const file = isAbsolute(fileName) ? fileName : join(dir, fileName);
    try {
      const secret = readFile(file).replace(/\r?\n$/, '');
      if (secret === '') {
        issues.push({ path: [...path, fileKey], message: `the file ${JSON.stringify(file)} is empty` });
        return {};
      }
      secrets.push(secret);
      return { secret };
    } catch (err) {
      const code = isRecord(err) && typeof err.code === 'string' ? err.code : 'unreadable';
      if (absentSecretFile && (code === 'ENOENT' || code === 'EACCES' || code === 'ENOTDIR')) {
        absentSecretFile(file, code);
        return { secret: fileKey === 'urlFile' ? ABSENT_URL : ABSENT_SECRET };
      }
      issues.push({ path: [...path, fileKey], message: `cannot read ${JSON.stringify(file)} (${code})` });
      return {};
    }
  };

  const resolve = (spec: Record<string, unknown>, path: (string | number)[], name: string, optional: boolean): void => {
    if (!apiCredentials) {
      keys[name] = { keyId: '', keySecret: '' };
      return;
    }
    const { keyId, keySecret, keySecretFile } = spec;
    const { secret, badType } = secretOf(spec, path, 'keySecret', 'keySecretFile');
    if (badType) return;
    const hasSecret = keySecret !== undefined || keySecretFile !== undefined;
    if (keyId === undefined && !hasSecret) {
      // members given as `${VAR:-}` with VAR unset were dropped by the loader: name the variables
      const unset = ['keyId', 'keySecret', 'keySecretFile'].flatMap((m) =>
        variablesOf(interpolated.get(formatPath([...path, m])) ?? ''),
      );
      if (!optional) {
        issues.push({
          path,
          message: embedded
            ? 'needs keyId and keySecret (or keySecretFile)'
            : unset.length > 0
              ? `baseUrl is not embedded and the key's environment variable${unset.length > 1 ? 's' : ''} ${unset.join(', ')} ${unset.length > 1 ? 'are' : 'is'} not set: export ${unset.length > 1 ? 'them' : 'it'} (or use keySecretFile)`
              : 'baseUrl is not embedded: give keyId: ${PIPESCALER_KEY_ID} and keySecret: ${PIPESCALER_KEY_SECRET} (or keySecretFile)',
        });
      }
      return;
    }
    if (keyId === undefined) issues.push({ path, message: 'has a secret but no keyId' });
    else if (!hasSecret)
      issues.push({ path: [...path, 'keyId'], message: 'needs keySecret (from ${ENV_VAR}) or keySecretFile' });
    if (typeof keyId === 'string' && secret !== undefined) keys[name] = { keyId, keySecret: secret };
  };

  resolve(api, ['api'], 'default', embedded);
  if (embedded && api.keyId === undefined && api.keySecret === undefined && api.keySecretFile === undefined) {
    keys.default = DEMO_KEY;
  }
  if (isRecord(api.keys)) {
    for (const [name, spec] of Object.entries(api.keys)) {
      if (isRecord(spec)) resolve(spec, ['api', 'keys', name], name, false);
    }
  }

  const redis = isRecord(raw.redis) ? raw.redis : {};
  const endpoint = typeof redis.url === 'string' ? parseRedisUrl(redis.url) : null;
  const urlPassword =
    endpoint === null || 'error' in endpoint
      ? undefined
      : endpoint.mode === 'standalone'
        ? URL.canParse(endpoint.url)
          ? new URL(endpoint.url).password
          : undefined
        : endpoint.password;
  if (urlPassword !== undefined && urlPassword !== '') {
    secrets.push(urlPassword, safeDecode(urlPassword), encodeURIComponent(urlPassword));
    if (!interpolated.has('redis.url')) {
      issues.push({
        path: ['redis', 'url'],
        message:
          'a password must not be written in the config file: use url: ${PIPESCALER_REDIS_URL} (or redis://:${REDIS_PASSWORD}@host:6379), or password: ${REDIS_PASSWORD}',
      });
    }
  }
  const password = secretOf(redis, ['redis'], 'password', 'passwordFile').secret;
  const sentinelPassword = secretOf(redis, ['redis'], 'sentinelPassword', 'sentinelPasswordFile').secret;
  const resolvedRedis = {
    ...(password !== undefined ? { password } : {}),
    ...(sentinelPassword !== undefined ? { sentinelPassword } : {}),
  };
  const notify = notifySecrets(raw, secretOf, issues);
  // the daemon's alone: commands that only read Redis (status, pause) do not need its secret
  const auth = apiCredentials ? telemetryAuth(raw, secretOf, issues) : undefined;
  return { keys, redis: resolvedRedis, notify, ...(auth ? { telemetryAuth: auth } : {}), issues, secrets };
}

type SecretOf = (
  spec: Record<string, unknown>,
  path: (string | number)[],
  valueKey: string,
  fileKey: string,
) => { secret?: string; badType?: true };

/**
 * A webhook's HMAC key (required: a receiver must be able to tell our messages from anyone's), a
 * CloudEvents sink's optional one, and a Slack webhook URL, which is a credential itself: each from
 * ${ENV_VAR} or a file. A webhook's or CloudEvents' URL may be written or come from urlFile.
 */
function notifySecrets(
  raw: Record<string, unknown>,
  secretOf: SecretOf,
  issues: RawIssue[],
): Record<string, { url?: string; secret?: string }> {
  const out: Record<string, { url?: string; secret?: string }> = {};
  const sinks = isRecord(raw.notify) && isRecord(raw.notify.sinks) ? raw.notify.sinks : {};
  for (const [name, spec] of Object.entries(sinks)) {
    if (!isRecord(spec)) continue;
    const path = ['notify', 'sinks', name];
    const hasSecret = spec.secret !== undefined || spec.secretFile !== undefined;
    const secret = secretOf(spec, path, 'secret', 'secretFile').secret;
    if (spec.type === 'slack' && hasSecret)
      issues.push({ path: [...path, 'secret'], message: 'a Slack webhook is not signed: remove secret' });
    if (spec.type === 'webhook' && !hasSecret)
      issues.push({
        path,
        message: 'a webhook needs secret: ${ENV_VAR} or secretFile (the key of its X-Pipescaler-Signature header)',
      });
    let url: string | undefined;
    if (spec.url === undefined && spec.urlFile === undefined) {
      issues.push({
        path,
        message: spec.type === 'slack' ? 'needs url: ${SLACK_WEBHOOK_URL} or urlFile' : 'needs url (or urlFile)',
      });
    } else if (spec.type === 'slack') {
      url = secretOf(spec, path, 'url', 'urlFile').secret;
    } else if (spec.urlFile !== undefined) {
      if (spec.url !== undefined) issues.push({ path: [...path, 'urlFile'], message: 'give url or urlFile, not both' });
      else url = secretOf({ urlFile: spec.urlFile }, path, 'url', 'urlFile').secret;
    }
    if (url !== undefined && !(/^https?:\/\//.test(url) && URL.canParse(url))) {
      issues.push({
        path: [...path, spec.urlFile !== undefined ? 'urlFile' : 'url'],
        message: 'must be an http(s) URL',
      });
      url = undefined;
    }
    const target = url ?? (typeof spec.url === 'string' ? spec.url : undefined);
    const inside = target === undefined || spec.allowPrivateNetwork === true ? null : privateHost(target);
    if (inside !== null) {
      issues.push({
        path: [...path, spec.urlFile !== undefined ? 'urlFile' : 'url'],
        message: `points at ${inside}: a sink inside this machine or its private network needs allowPrivateNetwork: true`,
      });
    }
    out[name] = { ...(url !== undefined ? { url } : {}), ...(secret !== undefined ? { secret } : {}) };
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
