// What a reload changed, for its `config reloaded` log line: pipes added, removed and changed,
// policies and API keys added, removed and changed, and the other settings that changed. Names
// only: never a value of a key (its secret) or of a setting.
import type { Config } from '../../config/index.js';

export interface ConfigChanges {
  readonly pipesAdded: readonly string[];
  readonly pipesRemoved: readonly string[];
  /** Same name, other ids, policy, key, bounds, kind, labels or pause. */
  readonly pipesChanged: readonly string[];
  readonly policiesAdded: readonly string[];
  readonly policiesRemoved: readonly string[];
  readonly policiesChanged: readonly string[];
  readonly keysAdded: readonly string[];
  readonly keysRemoved: readonly string[];
  /** Another id, secret, rate limit or pool. */
  readonly keysChanged: readonly string[];
  /** The other settings that changed and take effect on reload ('evaluate.cron', 'api.timeout'...). */
  readonly settingsChanged: readonly string[];
}

/** JSON with the keys of every object sorted: two equal values give the same text. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  );
}

function compare<T extends object>(
  before: ReadonlyMap<string, T>,
  after: ReadonlyMap<string, T>,
  same: (a: T, b: T) => boolean,
) {
  return {
    added: [...after.keys()].filter((n) => !before.has(n)),
    removed: [...before.keys()].filter((n) => !after.has(n)),
    changed: [...after]
      .filter(([n, b]) => {
        const a = before.get(n);
        return a !== undefined && !same(a, b);
      })
      .map(([n]) => n),
  };
}

const SETTINGS: readonly [string, (c: Config) => unknown][] = [
  ['api.timeout', (c) => c.api.timeoutMs],
  ['api.maxResponseBytes', (c) => c.api.maxResponseBytes],
  ['api.checkEvery', (c) => c.api.checkEveryMs],
  ['evaluate.cron', (c) => c.evaluate.cron],
  ['evaluate.reconcile', (c) => c.evaluate.reconcileMs],
  ['evaluate.concurrency', (c) => c.evaluate.concurrency],
  ['evaluate.readShare', (c) => c.evaluate.readShare],
  ['telemetry.logLevel', (c) => c.telemetry.logLevel],
  ['dryRun', (c) => c.dryRun],
  ['metrics.prometheus', (c) => c.metrics?.prometheus ?? null],
];

export function configChanges(before: Config, after: Config): ConfigChanges {
  const byName = <T extends { name: string }>(xs: readonly T[]) => new Map(xs.map((x) => [x.name, x]));
  const pipes = compare(byName(before.pipes), byName(after.pipes), (a, b) => canonical(a) === canonical(b));
  const policies = compare(
    new Map(Object.entries(before.policies)),
    new Map(Object.entries(after.policies)),
    (a, b) => canonical(a) === canonical(b),
  );
  const keys = compare(
    new Map(Object.entries(before.api.keys)),
    new Map(Object.entries(after.api.keys)),
    (a, b) =>
      a.keyId === b.keyId &&
      a.keySecret === b.keySecret &&
      canonical(a.rateLimit) === canonical(b.rateLimit) &&
      a.pool === b.pool,
  );
  return {
    pipesAdded: pipes.added,
    pipesRemoved: pipes.removed,
    pipesChanged: pipes.changed,
    policiesAdded: policies.added,
    policiesRemoved: policies.removed,
    policiesChanged: policies.changed,
    keysAdded: keys.added,
    keysRemoved: keys.removed,
    keysChanged: keys.changed,
    settingsChanged: SETTINGS.filter(([, of]) => canonical(of(before)) !== canonical(of(after))).map(([name]) => name),
  };
}

/** "pipes added: a, b; pipes removed: c; policies changed: p", or "nothing changed". */
export function describeChanges(c: ConfigChanges): string {
  const parts: [string, readonly string[]][] = [
    ['pipes added', c.pipesAdded],
    ['pipes removed', c.pipesRemoved],
    ['pipes changed', c.pipesChanged],
    ['policies added', c.policiesAdded],
    ['policies removed', c.policiesRemoved],
    ['policies changed', c.policiesChanged],
    ['keys added', c.keysAdded],
    ['keys removed', c.keysRemoved],
    ['keys changed', c.keysChanged],
    ['settings changed', c.settingsChanged],
  ];
  const said = parts.filter(([, names]) => names.length > 0).map(([what, names]) => `${what}: ${names.join(', ')}`);
  return said.length === 0 ? 'nothing changed' : said.join('; ');
}
