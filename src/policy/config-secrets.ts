// API key secrets and the Redis password: from the environment (`${VAR}`) or a file, never written
// in the config itself, and never repeated in a message. Returns the resolved credentials per key
// name and every secret value, so the loader can scrub them from anything it prints.
import { isAbsolute, join } from 'node:path';
import { formatPath } from './config-errors.js';
import { isRecord, type RawIssue } from './config-issue.js';

export interface ResolvedKey {
  readonly keyId: string;
  readonly keySecret: string;
}

export interface SecretsResult {
  readonly keys: Record<string, ResolvedKey>;
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
}

/** Credentials of the default key when baseUrl is embedded and none are given: the fixtures' demo key. */
export const DEMO_KEY: ResolvedKey = { keyId: '', keySecret: '' };

export function resolveSecrets({ raw, interpolated, dir, readFile }: SecretsInput): SecretsResult {
  const issues: RawIssue[] = [];
  const secrets: string[] = [];
  const keys: Record<string, ResolvedKey> = {};
  if (!isRecord(raw)) return { keys, issues, secrets };
  const api = isRecord(raw.api) ? raw.api : {};
  const embedded = api.baseUrl === undefined || api.baseUrl === 'embedded';

  const resolve = (spec: Record<string, unknown>, path: (string | number)[], name: string, optional: boolean): void => {
    const { keyId, keySecret, keySecretFile } = spec;
    let secret: string | undefined;
    if (keySecret !== undefined && keySecret !== null) {
      const secretPath = [...path, 'keySecret'];
      if (typeof keySecret !== 'string') return; // the schema reports the type
      if (!interpolated.has(formatPath(secretPath))) {
        issues.push({ path: secretPath, message: 'a secret must not be written in the config file: use keySecret: ${ENV_VAR} or keySecretFile: /path/to/file' });
      } else if (keySecret === '') {
        issues.push({ path: secretPath, message: `is empty (${interpolated.get(formatPath(secretPath))} resolved to nothing)` });
      } else {
        secret = keySecret;
        secrets.push(keySecret);
      }
      if (keySecretFile !== undefined) issues.push({ path: [...path, 'keySecretFile'], message: 'give keySecret or keySecretFile, not both' });
    } else if (typeof keySecretFile === 'string' && keySecretFile !== '') {
      const file = isAbsolute(keySecretFile) ? keySecretFile : join(dir, keySecretFile);
      try {
        secret = readFile(file).replace(/\r?\n$/, '');
        if (secret === '') issues.push({ path: [...path, 'keySecretFile'], message: `the file ${JSON.stringify(file)} is empty` });
        else secrets.push(secret);
      } catch (err) {
        const code = isRecord(err) && typeof err.code === 'string' ? err.code : 'unreadable';
        issues.push({ path: [...path, 'keySecretFile'], message: `cannot read ${JSON.stringify(file)} (${code})` });
      }
    }
    const hasSecret = keySecret !== undefined || keySecretFile !== undefined;
    if (keyId === undefined && !hasSecret) {
      if (!optional) {
        issues.push({ path, message: embedded
          ? 'needs keyId and keySecret (or keySecretFile)'
          : 'baseUrl is not embedded: give keyId: ${PIPESCALER_KEY_ID} and keySecret: ${PIPESCALER_KEY_SECRET} (or keySecretFile)' });
      }
      return;
    }
    if (keyId === undefined) issues.push({ path, message: 'has a secret but no keyId' });
    else if (!hasSecret) issues.push({ path: [...path, 'keyId'], message: 'needs keySecret (from ${ENV_VAR}) or keySecretFile' });
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
  if (typeof redis.url === 'string' && URL.canParse(redis.url)) {
    const password = new URL(redis.url).password;
    if (password !== '') {
      secrets.push(password, decodeURIComponent(password));
      if (!interpolated.has('redis.url')) {
        issues.push({ path: ['redis', 'url'], message: 'a password must not be written in the config file: use url: ${REDIS_URL} (or redis://:${REDIS_PASSWORD}@host:6379)' });
      }
    }
  }
  return { keys, issues, secrets };
}
