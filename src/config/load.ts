// Loads config/pipescaler.yaml: YAML -> `${VAR}` interpolation on the nodes -> zod schema ->
// cross references and secrets -> Config. Every problem is collected and thrown at once as one
// ConfigError, each with its line and column. Synchronous: it runs once at start and on reload.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { expandCalendars } from './calendar.js';
import { withCurrentNames } from './env-names.js';
import { ConfigError, formatPath, type ConfigIssue } from './errors.js';
import { isRecord, type RawIssue } from './issue.js';
import { crossCheck } from './refs.js';
import { HISTORY_DEFAULTS, notifySettings } from './notify.js';
import { DEFAULTS, configSchema, type ParsedConfig } from './schema.js';
import { clusterUrl, redisIssues, sentinelUrl } from './redis.js';
import { DEMO_KEY, resolveSecrets, type SecretsResult } from './secrets.js';
import { cutConnections } from './redis-only.js';
import { interpolateDocument, type Env } from './interpolate.js';
import { metricMatchIssues } from './metric-refs.js';
import { envOverrides, type EnvOverrides } from './env-overrides.js';
import { ACTUATION_DEFAULTS, assignPools, type ActuationSettings } from '../policy/index.js';
import type { ApiKeyConfig, Config, PrometheusConfig, RedisSettings } from './types.js';
import { locate } from './yaml-locate.js';
import { STACK_OVERFLOW, syntaxIssue, TOO_DEEP } from './yaml-syntax.js';
import { aliasBombIssue, expandedSize, nodeIssues, withoutRefused } from './yaml-nodes.js';

/** The largest config file, in characters: 10,000 pipes take about 3 MB. A larger one is refused
 *  before it is parsed (a 20 MB value made validate use 856 MB). */
export const MAX_CONFIG_CHARS = 8 * 1024 * 1024;

/** How many nodes a config may hold with its aliases expanded (expandedSize): 10,000 pipes that
 *  merge a shared anchor each fit many times over; a document that multiplies itself does not. */
const MAX_EXPANDED_NODES = 5_000_000;

export interface ParseOptions {
  /** The file name used in messages; keySecretFile and fixtures are relative to its folder. */
  readonly file: string;
  readonly env?: Env;
  /** Reads a keySecretFile or a calendar (tests inject one); default fs.readFileSync as UTF-8. */
  readonly readFile?: (path: string) => string;
  /**
   * 'redis': for the commands that talk to Redis only (status, pause, resume). The API's base URL
   * and credentials and the Prometheus server are not read (redis-only.ts): every key comes
   * back with an empty id and secret, and the API is the embedded one. Default 'all'.
   */
  readonly needs?: 'all' | 'redis';
  /**
   * Folders where a relative calendar, fixtures or Prometheus credential file that is not next to
   * the config is looked for next (diff: the other config's folder, so an edited copy written
   * elsewhere, `head.yaml` at the repository's root, still finds `holidays/...`).
   */
  readonly alsoIn?: readonly string[];
  /** `validate --offline`: absent secret files are told to this, not errors (secrets.ts). */
  readonly absentSecretFile?: (file: string, code: string) => void;
}

/** Where a file the config names is: absolute as it is; else next to the config, or in the first
 *  of `alsoIn` that has it, or (none has it) next to the config, for the error to name. */
function relativeTo(dir: string, alsoIn: readonly string[] = []): (file: string) => string {
  return (file) => {
    if (isAbsolute(file)) return file;
    const here = join(dir, file);
    if (alsoIn.length === 0 || existsSync(here)) return here;
    const there = alsoIn.map((d) => join(d, file)).find((p) => existsSync(p));
    return there ?? here;
  };
}

const readUtf8 = (path: string): string => readFileSync(path, 'utf8');

/** Read, validate and normalize a config file. Throws ConfigError (CONFIG_INVALID or CONFIG_UNREADABLE). */
export function loadConfig(
  path: string,
  env: Env = process.env,
  needs: ParseOptions['needs'] = 'all',
  /** Reads the config and every file it names (the daemon's reload notes what each held). */
  readFile: (path: string) => string = readUtf8,
  alsoIn: readonly string[] = [],
  absentSecretFile?: (file: string, code: string) => void,
): Config {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    const code = isRecord(err) && typeof err.code === 'string' ? err.code : 'unreadable';
    throw new ConfigError('CONFIG_UNREADABLE', path, [
      { path: '', line: 1, column: 1, message: `cannot read the config file (${code})` },
    ]);
  }
  return parseConfig(text, {
    file: path,
    env,
    needs,
    readFile,
    alsoIn,
    ...(absentSecretFile ? { absentSecretFile } : {}),
  });
}

/** True for the default key of an embedded config that gave no credentials: use the fixtures' demo key. */
export function isDemoKey(key: Pick<ApiKeyConfig, 'keyId'>): boolean {
  return key.keyId === DEMO_KEY.keyId;
}

export function parseConfig(text: string, opts: ParseOptions): Config {
  try {
    return parseText(text, opts);
  } catch (err) {
    // a document yaml could read but that is nested too deeply for the steps after it
    if (!(err instanceof RangeError && err.message.includes(STACK_OVERFLOW))) throw err;
    throw new ConfigError('CONFIG_INVALID', opts.file, [{ path: '', line: 1, column: 1, message: TOO_DEEP }]);
  }
}

function parseText(text: string, opts: ParseOptions): Config {
  const { file } = opts;
  if (text.length > MAX_CONFIG_CHARS) {
    throw new ConfigError('CONFIG_INVALID', file, [
      {
        path: '',
        line: 1,
        column: 1,
        message: `the config file holds ${text.length.toLocaleString('en-US')} characters, at most ${MAX_CONFIG_CHARS.toLocaleString('en-US')} (10,000 pipes take about 3 million)`,
      },
    ]);
  }
  const lc = new LineCounter();
  // merge keys (`<<: *defaults`) let policies share a behavior block
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true, merge: true });
  if (doc.errors.length > 0) throw new ConfigError('CONFIG_INVALID', file, [syntaxIssue(doc.errors, lc, text)]);
  if (doc.contents === null) {
    // `: > config.yaml`, or an editor that truncates before it writes: not a config of defaults
    throw new ConfigError('CONFIG_INVALID', file, [
      { path: '', line: 1, column: 1, message: 'the config file is empty (nothing but whitespace or comments)' },
    ]);
  }
  const env = withCurrentNames(opts.env ?? process.env);
  if (opts.needs === 'redis') cutConnections(doc);
  const interpolation = interpolateDocument(doc, env);
  // yaml's own guard (maxAliasCount, 100 uses of an anchor) refused a fleet whose pipes merge one
  // anchor: the expanded size is what costs, so that is what is bounded, before anything expands
  if (expandedSize(doc, MAX_EXPANDED_NODES) > MAX_EXPANDED_NODES)
    throw new ConfigError('CONFIG_INVALID', file, [aliasBombIssue(doc, lc, MAX_EXPANDED_NODES)]);
  const raw: unknown = doc.toJS({ maxAliasCount: -1 }) ?? {};
  unsetEmptyCredentials(raw, interpolation.raw);
  const dir = dirname(file);
  const at = relativeTo(dir, opts.alsoIn);

  const refused = nodeIssues(doc);
  const rawIssues: RawIssue[] = [
    ...refused,
    ...interpolation.problems.map((p) => ({ path: p.path, message: p.message })),
  ];
  if (!isRecord(raw)) {
    rawIssues.push({
      path: [],
      message: 'the config must be a mapping (api, redis, evaluate, telemetry, dryRun, pipes, policies)',
    });
    throw toError(file, doc, lc, rawIssues, []);
  }
  const readFile = opts.readFile ?? readUtf8;
  rawIssues.push(...expandCalendars(raw, at, readFile));
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    // a value whose interpolation failed is already reported; its leftover text is no second issue
    const failed = new Set(interpolation.problems.map((p) => formatPath(p.path)));
    rawIssues.push(
      ...parsed.error.issues
        .flatMap((i) => fromZod(i, raw, interpolation.quoted))
        .filter((i) => !failed.has(formatPath(i.path))),
    );
  }
  rawIssues.push(...crossCheck(raw), ...metricMatchIssues(raw), ...redisIssues(raw));
  const secrets = resolveSecrets({
    raw,
    interpolated: interpolation.raw,
    dir,
    readFile,
    apiCredentials: opts.needs !== 'redis',
    ...(opts.absentSecretFile ? { absentSecretFile: opts.absentSecretFile } : {}),
  });
  rawIssues.push(...secrets.issues);
  const fromEnv = envOverrides(env);
  rawIssues.push(...fromEnv.issues);
  if (rawIssues.length > 0 || !parsed.success)
    throw toError(file, doc, lc, withoutRefused(rawIssues, refused), secrets.secrets, interpolation.expanded);
  return assemble(parsed.data, secrets, at, fromEnv.overrides);
}

function assemble(
  c: ParsedConfig,
  secrets: Pick<SecretsResult, 'keys' | 'redis' | 'notify' | 'telemetryAuth'>,
  at: (file: string) => string,
  overrides: EnvOverrides,
): Config {
  const resolved = secrets.keys;
  const api = c.api ?? {};
  const defaultRate = api.rateLimit ?? DEFAULTS.rateLimit;
  const keys: Record<string, ApiKeyConfig> = {
    default: { ...(resolved.default ?? DEMO_KEY), rateLimit: defaultRate },
  };
  for (const [name, spec] of Object.entries(api.keys ?? {})) {
    const creds = resolved[name];
    if (creds)
      keys[name] = {
        ...creds,
        rateLimit: spec.rateLimit ?? defaultRate,
        ...(spec.pool !== undefined ? { pool: spec.pool } : {}),
      };
  }
  // the default is the repository's demo fixtures (from the working folder, as `npm start` runs);
  // a path written in the config is relative to the config, like keySecretFile
  const fixtures = api.fixtures === undefined ? DEFAULTS.fixtures : at(api.fixtures);
  return assignPools({
    api: {
      baseUrl: api.baseUrl ?? DEFAULTS.baseUrl,
      fixtures,
      timeoutMs: api.timeout ?? DEFAULTS.timeoutMs,
      keys,
      ...(api.maxResponseBytes !== undefined ? { maxResponseBytes: api.maxResponseBytes } : {}),
      ...(api.checkEvery !== undefined ? { checkEveryMs: api.checkEvery } : {}),
    },
    redis: redisSettings(c.redis, secrets.redis),
    evaluate: {
      cron: c.evaluate?.cron ?? DEFAULTS.cron,
      reconcileMs: c.evaluate?.reconcile ?? DEFAULTS.reconcileMs,
      concurrency: c.evaluate?.concurrency ?? DEFAULTS.concurrency,
      readShare: c.evaluate?.readShare ?? DEFAULTS.readShare,
      ...(c.evaluate?.actuation ? { actuation: actuationSettings(c.evaluate.actuation) } : {}),
    },
    telemetry: {
      listen: c.telemetry?.listen ?? DEFAULTS.listen,
      logLevel: overrides.logLevel ?? c.telemetry?.logLevel ?? DEFAULTS.logLevel,
      perPipeDetail: c.telemetry?.perPipeDetail ?? false,
      ...(secrets.telemetryAuth ? { auth: secrets.telemetryAuth } : {}),
    },
    dryRun: overrides.dryRun ?? c.dryRun ?? false,
    pipes: c.pipes ?? [],
    policies: c.policies ?? {},
    metrics: c.metrics?.prometheus ? { prometheus: resolvePrometheusPaths(c.metrics.prometheus, at) } : null,
    history: c.history ?? { ...HISTORY_DEFAULTS },
    notify: notifySettings(c.notify, secrets.notify),
  });
}

/** evaluate.actuation with its defaults (ACTUATION_DEFAULTS of lead-plan.ts; firstRead's is the daemon's). */
function actuationSettings(a: {
  expected?: number;
  max?: number;
  minSamples?: number;
  measured?: boolean;
  firstRead?: number;
}): ActuationSettings {
  return {
    expectedMs: a.expected ?? ACTUATION_DEFAULTS.expectedMs,
    maxMs: a.max ?? ACTUATION_DEFAULTS.maxMs,
    minSamples: a.minSamples ?? ACTUATION_DEFAULTS.minSamples,
    ...(a.measured === false ? { measured: false } : {}),
    // absent: the daemon's FIRST_READ_MS (src/daemon/lifecycle/confirmation.ts)
    ...(a.firstRead !== undefined ? { firstReadMs: a.firstRead } : {}),
  };
}

/** The servers as one URL of their mode (the list forms become redis+sentinel:// or redis+cluster://). */
function redisSettings(r: ParsedConfig['redis'], secrets: SecretsResult['redis']): RedisSettings {
  const url = r?.cluster
    ? clusterUrl(r.cluster)
    : r?.sentinels && r.name !== undefined
      ? sentinelUrl(r.sentinels, r.name)
      : (r?.url ?? DEFAULTS.redisUrl);
  return {
    url,
    prefix: r?.prefix ?? DEFAULTS.redisPrefix,
    ...(r?.username !== undefined ? { username: r.username } : {}),
    ...secrets,
  };
}

/** Token and password files are relative to the config's folder, like keySecretFile. */
function resolvePrometheusPaths(p: PrometheusConfig, at: (file: string) => string): PrometheusConfig {
  return {
    ...p,
    ...(p.bearerTokenFile !== undefined ? { bearerTokenFile: at(p.bearerTokenFile) } : {}),
    ...(p.basicAuth !== undefined ? { basicAuth: { ...p.basicAuth, passwordFile: at(p.basicAuth.passwordFile) } } : {}),
  };
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const seg of path) {
    if (Array.isArray(v) && typeof seg === 'number') v = v[seg];
    else if (isRecord(v) && typeof seg === 'string') v = v[seg];
    else return undefined;
  }
  return v;
}

function describe(v: unknown): string {
  if (v === null) return 'an empty value';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return `a ${typeof v}`;
}

const EXPECTED: Record<string, string> = {
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
  string: 'a string',
  number: 'a number',
  boolean: 'true or false',
  int: 'an integer',
};

function fromZod(issue: z.core.$ZodIssue, raw: unknown, quoted: ReadonlyMap<string, string>): RawIssue[] {
  const path = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
  const source = quoted.get(formatPath(path));
  if (
    source !== undefined &&
    typeof valueAt(raw, path) === 'string' &&
    /number|integer|true or false/.test(issue.message)
  ) {
    return [
      { path, message: `${issue.message} (${source}: a quoted value stays text; write it unquoted, in block style)` },
    ];
  }
  if (issue.code === 'unrecognized_keys') {
    const messages = issue.message.split('\n');
    return issue.keys.map((k, i) => ({
      path: [...path, k],
      atKey: true,
      message: messages[i] ?? `unknown key "${k}"`,
    }));
  }
  if (issue.code === 'invalid_type') {
    const v = valueAt(raw, path);
    if (v === undefined) return [{ path, message: 'is required' }];
    if (issue.message.startsWith('Invalid input')) {
      return [{ path, message: `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${describe(v)}` }];
    }
  }
  return [{ path, message: issue.message }];
}

function toError(
  file: string,
  doc: Parameters<typeof locate>[0],
  lc: LineCounter,
  issues: readonly RawIssue[],
  secrets: readonly string[],
  expanded: ReadonlyMap<string, string> = new Map(),
): ConfigError {
  // `${VAR}` can hold anything of the environment (a password read by mistake into a pipe name):
  // a message names the variable, never its value; quoted forms first, longer values before shorter.
  const values = [...expanded].sort(([a], [b]) => b.length - a.length);
  const unexpand = (s: string): string =>
    values.reduce((acc, [value, source]) => {
      const quotedForm = acc.replaceAll(JSON.stringify(value), source);
      return value.length >= 4 ? quotedForm.replaceAll(value, source) : quotedForm;
    }, s);
  const scrub = (s: string): string =>
    secrets.filter((x) => x.length >= 3).reduce((acc, x) => acc.replaceAll(x, '[redacted]'), unexpand(s));
  const seen = new Set<string>();
  const out: ConfigIssue[] = [];
  for (const i of withoutEchoes(issues)) {
    const pos = locate(doc, lc, i.path, i.atKey);
    const issue = { path: formatPath(i.path), line: pos.line, column: pos.column, message: scrub(i.message) };
    const id = `${issue.line}:${issue.column}:${issue.path}:${issue.message}`;
    if (!seen.has(id)) {
      seen.add(id);
      out.push(issue);
    }
  }
  out.sort((a, b) => a.line - b.line || a.column - b.column);
  return new ConfigError('CONFIG_INVALID', file, out);
}

/**
 * Drop what an unknown key already explains: the object it sits in ("sets no field") and the
 * required key it was probably meant to be ("needs timezone" next to `tmezone`).
 */
function withoutEchoes(issues: readonly RawIssue[]): RawIssue[] {
  const explained = new Set<string>();
  for (const i of issues) {
    if (!i.atKey) continue;
    const parent = i.path.slice(0, -1);
    explained.add(formatPath(parent));
    const meant = /did you mean "([^"]+)"/.exec(i.message)?.[1];
    if (meant !== undefined) explained.add(formatPath([...parent, meant]));
  }
  return issues.filter((i) => i.atKey === true || !explained.has(formatPath(i.path)));
}

/**
 * `keyId: ${PIPESCALER_KEY_ID:-}` with the variable unset means "no key given", not an empty key:
 * one file then serves the embedded demo (the fixtures' key) and a deployment whose environment
 * carries the credentials. Only when every credential member came from interpolation and is empty;
 * a literal '' or a half-given key is still an error of its own.
 */
function unsetEmptyCredentials(raw: unknown, interpolated: ReadonlyMap<string, string>): void {
  if (!isRecord(raw) || !isRecord(raw.api)) return;
  const specs: [Record<string, unknown>, string][] = [[raw.api, 'api']];
  if (isRecord(raw.api.keys)) {
    for (const [name, spec] of Object.entries(raw.api.keys)) if (isRecord(spec)) specs.push([spec, `api.keys.${name}`]);
  }
  const members = ['keyId', 'keySecret', 'keySecretFile'];
  for (const [spec, path] of specs) {
    const given = members.filter((m) => spec[m] !== undefined);
    // A half-given key (an id with an empty secret) stays, so its own error names what is empty.
    if (given.length > 0 && given.every((m) => spec[m] === '' && interpolated.has(`${path}.${m}`))) {
      // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- the raw YAML mapping, cleaned in place of the three names above
      for (const m of given) delete spec[m];
    }
  }
}
