// `${VAR}` and `${VAR:-default}` in the config's scalar values, done on the parsed YAML nodes so
// every value keeps its line. `$${` writes a literal `${`. Keys are never interpolated.
import { isMap, isScalar, isSeq, parse, type Document, type Node } from 'yaml';
import { formatPath } from './errors.js';

export type Env = Readonly<Record<string, string | undefined>>;

export type InterpolateResult =
  | { readonly ok: true; readonly value: string; readonly interpolated: boolean }
  | { readonly ok: false; readonly message: string };

const TOKEN = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Expand one string. Like the shell, `:-` takes the default when the variable is unset or empty. */
export function interpolate(raw: string, env: Env): InterpolateResult {
  let interpolated = false;
  const missing: string[] = [];
  let malformed: string | undefined;
  const value = raw.replace(TOKEN, (token, inner: string | undefined) => {
    if (token === '$${') return '${';
    if (inner === undefined) {
      malformed ??= 'an unclosed "${" (write "$${" for a literal "${")';
      return token;
    }
    const sep = inner.indexOf(':-');
    const name = sep === -1 ? inner : inner.slice(0, sep);
    if (!NAME.test(name)) {
      malformed ??= `"\${${name}}" is not a variable name (letters, digits and _)`;
      return token;
    }
    interpolated = true;
    const set = env[name];
    if (sep !== -1) return set === undefined || set === '' ? inner.slice(sep + 2) : set;
    if (set === undefined) {
      missing.push(name);
      return token;
    }
    return set;
  });
  if (malformed !== undefined) return { ok: false, message: `malformed interpolation: ${malformed}` };
  if (missing.length > 0) {
    const names = missing.map((n) => `\${${n}}`).join(', ');
    return {
      ok: false,
      message: `environment variable${missing.length > 1 ? 's' : ''} ${names} not set (give it a value or a default: \${${missing[0]}:-...})`,
    };
  }
  return { ok: true, value, interpolated };
}

export interface InterpolationProblem {
  readonly path: readonly (string | number)[];
  readonly node: Node;
  readonly message: string;
}

export interface DocumentInterpolation {
  readonly problems: InterpolationProblem[];
  /** Source text of every scalar that held an interpolation, by formatted path. */
  readonly raw: Map<string, string>;
  /** The subset of `raw` written in quotes: their values stay text. */
  readonly quoted: Map<string, string>;
  /** Each interpolated result -> its source text: an error names `${VAR}`, never what it held. */
  readonly expanded: Map<string, string>;
}

/**
 * Credentials are text whatever they look like: a secret `123456`, `0123` or `true` from the
 * environment is that string, never a number or a boolean (nor `0123` turned into 123).
 */
const TEXT_FIELDS = new Set(['keyId', 'keySecret', 'username', 'password', 'sentinelPassword']);

/**
 * Expand every string scalar value of the document in place. A plain (unquoted) scalar that was
 * interpolated is re-typed as YAML would have typed the result, so `replicas: ${N:-4}` is a number
 * (credentials excepted: TEXT_FIELDS).
 */
export function interpolateDocument(doc: Document, env: Env): DocumentInterpolation {
  const problems: InterpolationProblem[] = [];
  const rawByPath = new Map<string, string>();
  const quoted = new Map<string, string>();
  const expanded = new Map<string, string>();
  const walk = (node: unknown, path: (string | number)[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        walk(pair.value, [...path, String(key)]);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => walk(item, [...path, i]));
    } else if (isScalar(node) && typeof node.value === 'string' && node.value.includes('$')) {
      const raw = node.value;
      const r = interpolate(raw, env);
      if (!r.ok) {
        problems.push({ path, node, message: r.message });
        return;
      }
      if (r.value === raw) return;
      if (r.interpolated) rawByPath.set(formatPath(path), raw);
      if (r.interpolated && r.value !== '') expanded.set(r.value, raw);
      if (r.interpolated && node.type !== 'PLAIN') quoted.set(formatPath(path), raw);
      const typed = r.interpolated && node.type === 'PLAIN' && !TEXT_FIELDS.has(String(path[path.length - 1]));
      node.value = typed ? retype(r.value) : r.value;
    }
  };
  walk(doc.contents, []);
  return { problems, raw: rawByPath, quoted, expanded };
}

function retype(text: string): string | number | boolean {
  try {
    const v: unknown = parse(text);
    return typeof v === 'number' || typeof v === 'boolean' ? v : text;
  } catch {
    return text;
  }
}
