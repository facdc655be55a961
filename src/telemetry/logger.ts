// The pino logger: JSON lines by default, pino-pretty only for a person at a terminal. Secrets are
// kept out twice: `redact` censors the known secret-bearing keys of logged objects, and a final
// scrub of every written line replaces the configured secret values wherever they hide (an error
// message, a URL, a header logged under some other key).
import { pino, type DestinationStream, type Logger } from 'pino';
import { createRequire } from 'node:module';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';
import type { TelemetryCredentials } from './http-auth.js';

// pino-pretty (and its colour and date dependencies) load only when a person reads the lines. It
// is an optional dependency: a production install without it (`npm ci --omit=optional`) logs JSON
// lines at a terminal too, and says so once on stderr.
function requirePretty(): ((options: PrettyOptions) => PrettyStream) | null {
  try {
    return createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'MODULE_NOT_FOUND') throw err;
    process.stderr.write(
      'pipescaler: pino-pretty (an optional dependency) is not installed, so the log stays JSON lines; ' +
        '`npm install --include=optional` adds it\n',
    );
    return null;
  }
}

export type TelemetryLogger = Logger;

export const CENSOR = '[redacted]';

/** Keys that hold secrets, at the depths the daemon's objects put them (fast-redact has no `**`). */
export const REDACT_PATHS: readonly string[] = [
  'keySecret',
  '*.keySecret',
  '*.*.keySecret',
  '*.*.*.keySecret',
  '*.*.*.*.keySecret',
  '*.*.*.*.*.keySecret',
  'password',
  '*.password',
  '*.*.password',
  '*.*.*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.*.headers.authorization',
  '*.*.headers.Authorization',
];

export interface LoggerOptions {
  readonly level?: string;
  /** Human-readable lines; default: only when stdout is a TTY. */
  readonly pretty?: boolean;
  /** Secret values to scrub from every line (API key secrets, Redis passwords; see secretForms).
   *  A function is asked again for each line, so keys added by a reload are scrubbed too. */
  readonly secrets?: readonly string[] | (() => readonly string[]);
  /** Where lines go (default stdout); tests pass a stream they read. */
  readonly destination?: DestinationStream;
}

/** Shorter values would scrub ordinary words; the config loader asks for real secrets anyway. */
const MIN_SECRET_LENGTH = 4;

/** The ways a secret may appear in text: as is, JSON-escaped, URL-encoded; with its key id, as HTTP Basic. */
export function secretForms(secret: string, keyId?: string): string[] {
  const forms = [secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)];
  if (keyId !== undefined) forms.push(Buffer.from(`${keyId}:${secret}`).toString('base64'));
  return [...new Set(forms)].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/** The parts of the loaded config that hold secrets (src/config/types.ts Config fits). */
export interface SecretBearingConfig {
  readonly api: { readonly keys: Readonly<Record<string, { readonly keyId: string; readonly keySecret: string }>> };
  readonly redis: { readonly url: string; readonly password?: string; readonly sentinelPassword?: string };
  /** A webhook's HMAC key; a Slack sink's URL, which is its credential. */
  readonly notify?: {
    readonly sinks: readonly { readonly type: string; readonly url: string; readonly secret?: string }[];
  };
  /** The credentials of /metrics and /history. */
  readonly telemetry?: { readonly auth?: TelemetryCredentials };
}

const configSecretsCache = new WeakMap<SecretBearingConfig, readonly string[]>();

/** Every secret of a config in every spelling, the same array for the same config object, so
 *  `secrets: () => configSecrets(daemon.config())` rebuilds the scrubber only after a reload. */
export function configSecrets(config: SecretBearingConfig): readonly string[] {
  let secrets = configSecretsCache.get(config);
  if (secrets === undefined) {
    const list = Object.values(config.api.keys).flatMap((k) => secretForms(k.keySecret, k.keyId));
    const password = urlPassword(config.redis.url);
    if (password !== '') list.push(...secretForms(decodeURIComponent(password)), password);
    for (const p of [config.redis.password, config.redis.sentinelPassword]) if (p) list.push(...secretForms(p), p);
    const auth = config.telemetry?.auth;
    if (auth?.type === 'bearer') list.push(...secretForms(auth.token));
    if (auth?.type === 'basic') list.push(...secretForms(auth.password, auth.username));
    for (const sink of config.notify?.sinks ?? []) {
      if (sink.secret) list.push(...secretForms(sink.secret), sink.secret);
      if (sink.type === 'slack') list.push(...secretForms(sink.url), sink.url);
    }
    secrets = [...new Set(list)];
    configSecretsCache.set(config, secrets);
  }
  return secrets;
}

/** The password of a Redis URL of any form (redis://, rediss://, redis+sentinel://, redis+cluster://), as written. */
function urlPassword(url: string): string {
  const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^@/]*)@/i.exec(url)?.[1];
  const colon = userinfo?.indexOf(':') ?? -1;
  return userinfo !== undefined && colon >= 0 ? userinfo.slice(colon + 1) : '';
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** URL userinfo (redis://user:password@host) and Basic/Bearer credentials in free text. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s"'/@]+@/gi;
const AUTH_SCHEME = /\b(Basic|Bearer)\s+[A-Za-z0-9+/=._~-]{6,}/g;

function secretPattern(secrets: readonly string[]): RegExp | null {
  // Longest first, so a secret that contains another is replaced whole.
  const forms = [...new Set(secrets.flatMap((s) => secretForms(s)))].sort((a, b) => b.length - a.length);
  return forms.length > 0 ? new RegExp(forms.map(escapeRegExp).join('|'), 'g') : null;
}

export function createScrubber(secrets: readonly string[] | (() => readonly string[]) = []): (line: string) => string {
  const current = typeof secrets === 'function' ? secrets : () => secrets;
  let last: readonly string[] | undefined;
  let lastKey = '';
  let known: RegExp | null = null;
  return (line) => {
    const list = current();
    if (list !== last) {
      // A getter may build a fresh array per line: rebuild the pattern only when the values change.
      last = list;
      const key = list.join('\u0000');
      if (key !== lastKey || known === null) {
        lastKey = key;
        known = secretPattern(list);
      }
    }
    let out = line.replace(URL_USERINFO, `$1${CENSOR}@`).replace(AUTH_SCHEME, `$1 ${CENSOR}`);
    if (known !== null) out = out.replace(known, CENSOR);
    return out;
  };
}

/**
 * A JSON line for pino-pretty, which decodes its strings onto a person's terminal: the control
 * characters a string holds (escaped in JSON: `\u001b`; C1 and bidi overrides raw) become spaces,
 * so a platform text or a pause reason cannot move the cursor or rewrite lines.
 */
export function terminalSafeJson(line: string): string {
  // an escaped backslash is consumed as a pair, so `\\n` (a backslash and an n) stays as it is
  return line
    .replace(/\\(?:\\|u00(?:[01][0-9a-fA-F]|7[fF]|[89][0-9a-fA-F])|[bfnrt])/g, (m) => (m === '\\\\' ? m : ' '))
    .replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, ' ');
}

export function createLogger(options: LoggerOptions = {}): TelemetryLogger {
  const pretty = (options.pretty ?? process.stdout.isTTY) ? requirePretty() : null;
  const scrubSecrets = createScrubber(options.secrets);
  const scrub = pretty ? (line: string) => terminalSafeJson(scrubSecrets(line)) : scrubSecrets;
  const destination = pretty
    ? pretty({
        colorize: options.destination === undefined,
        sync: true,
        destination: options.destination ?? 1,
      })
    : // Each line is written to stdout as it is logged, none kept in a buffer: an audit line
      // logged right after its change is recorded in Redis is on stdout even if a SIGKILL comes next
      // (test/daemon/audit-sigkill.test.ts). A write per line: 1,000 audit lines take about 70 ms
      // rather than 50 ms buffered (most of either is the secret scrubbing).
      (options.destination ?? pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level: options.level ?? 'info',
      base: { pid: process.pid },
      // An ISO instant reads in any log tool without conversion.
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...REDACT_PATHS], censor: CENSOR },
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
      hooks: { streamWrite: scrub },
    },
    destination,
  );
}
