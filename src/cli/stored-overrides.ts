// What `plan` shows of the overrides in Redis (set by `pipescaler override`, or kept by onDrift as
// `manual`), read by the pipes' identities as `override --list` reads them, and how a what-if
// `--override` lies on top: it supersedes the pipe's stored one, as a newer override does in the
// daemon; and the actuation the daemon measured, that `plan` and `simulate` count on as its lead
// plans do. Redis is optional here: without it they say so in one line and count on the
// configured actuation.
import { withCurrentNames, withEnvOverrides, type Config } from '../config/index.js';
import {
  connectRedisOnce,
  describeRedis,
  isUnreachable,
  readEstimates,
  StateStore,
  type ActuationEstimate,
  type StoredOverrideValue,
} from '../daemon/index.js';
import { overrideValuesAt, type Override, type PipeView } from '../policy/index.js';
import { printable } from '../api/internal.js';
import { withSimulatedOverrides } from './override-args.js';
import { formatValues } from './scaling-text.js';

/** The stored overrides by pipe name (ended ones too while their key is kept), or why none were read. */
export type StoredOverrides =
  { readonly byPipe: Readonly<Record<string, StoredOverrideValue>> } | { readonly unreadable: string };

/** The override a plan decides a pipe with, and where it comes from. */
export interface PlanOverride {
  readonly override: Override;
  readonly origin: 'stored' | 'what-if';
  /** The stored override a what-if replaced. */
  readonly superseded?: StoredOverrideValue;
}

/** What `plan` reads from the daemon's Redis: the stored overrides of `config`'s pipes and the
 *  measured actuation of the whole fleet's (its lead plans are the fleet's); or why it could not. */
export async function readPlanState(
  config: Config,
  fleet: Config,
  file: string,
): Promise<{ overrides: StoredOverrides; estimates: ReadonlyMap<string, ActuationEstimate> | null }> {
  const read = await readFromRedis(fleet, file, async (store) => ({
    overrides: await store.operator.overrides(config.pipes),
    estimates: await readEstimates(store.redis, store.keys, fleet),
  }));
  if ('unreadable' in read) return { overrides: read, estimates: null };
  const byPipe = Object.fromEntries(read.value.overrides.map((o) => [o.pipe, o.override]));
  return { overrides: { byPipe }, estimates: read.value.estimates };
}

/** What `simulate` reads from the daemon's Redis: the measured actuation of the fleet's pipes (its
 *  lead plans are the fleet's), or why it could not (then the configured expectation). */
export async function readMeasuredActuation(
  fleet: Config,
  file: string,
): Promise<{ readonly estimates: ReadonlyMap<string, ActuationEstimate> } | { readonly unreadable: string }> {
  const read = await readFromRedis(fleet, file, (store) => readEstimates(store.redis, store.keys, fleet));
  return 'unreadable' in read ? read : { estimates: read.value };
}

/** One read of what the daemon keeps in `config`'s Redis (the environment's overrides applied), on
 *  a connection of its own that does not wait for Redis to come up; or why it could not be read. */
export async function readFromRedis<T>(
  config: Config,
  file: string,
  read: (store: StateStore) => Promise<T>,
): Promise<{ readonly value: T } | { readonly unreadable: string }> {
  let target: Config['redis'];
  try {
    target = withEnvOverrides(config, file, withCurrentNames(process.env)).redis;
  } catch (err) {
    return { unreadable: oneLine(err) };
  }
  const redis = connectRedisOnce(target);
  try {
    return { value: await read(new StateStore(redis, target.prefix)) };
  } catch (err) {
    const where = isUnreachable(err) ? 'cannot reach Redis at' : 'Redis at';
    return { unreadable: `${where} ${describeRedis(target)}: ${oneLine(err)}` };
  } finally {
    redis.disconnect();
  }
}

function oneLine(err: unknown): string {
  const first = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
  return printable(first.replace(/\.$/, ''));
}

/** What plan (or simulate) says on stderr when it could not read Redis (null: it could). */
export function unreadableLine(
  read: StoredOverrides | { readonly unreadable: string } | { readonly estimates: unknown },
  what = 'the plan shows no stored override and counts',
): string | null {
  return 'unreadable' in read
    ? `warning: could not read Redis (${read.unreadable}): ${what} on the configured actuation (evaluate.actuation.expected)`
    : null;
}

/**
 * The views with each pipe's stored override, then each what-if `--override` on top (it replaces
 * the stored one of its pipe), and per pipe which override it decides with.
 */
export function withPlanOverrides(
  views: Readonly<Record<string, PipeView>>,
  stored: StoredOverrides,
  whatIf: readonly string[] | undefined,
  pipes: Config['pipes'],
): { views: Record<string, PipeView>; overrides: Record<string, PlanOverride> } {
  const byPipe = 'byPipe' in stored ? stored.byPipe : {};
  const withStored: Record<string, PipeView> = {};
  for (const [name, view] of Object.entries(views)) {
    const own = byPipe[name];
    withStored[name] = own ? { ...view, override: own } : view;
  }
  const out = withSimulatedOverrides(withStored, whatIf, pipes);
  const overrides: Record<string, PlanOverride> = {};
  for (const [name, view] of Object.entries(out)) {
    if (view.override === undefined) continue;
    const own = byPipe[name];
    overrides[name] =
      view.override === own
        ? { override: own, origin: 'stored' }
        : { override: view.override, origin: 'what-if', ...(own ? { superseded: own } : {}) };
  }
  return { views: out, overrides };
}

const iso = (t: number): string => new Date(t).toISOString();

/**
 * plan's `override` row: the values, when it holds relative to the plan's instant, where it comes
 * from and why, and (in force) whether it moved the target. `took`: the decision took a field of it.
 */
export function describePlanOverride(at: number, shown: PlanOverride, took: boolean, scaleUpOnly: boolean): string {
  const o = shown.override;
  const inForce = overrideValuesAt(o, at) !== null;
  const floor = o.mode === 'floor' || scaleUpOnly;
  const span =
    at < o.setAt
      ? `from ${iso(o.setAt)} until ${iso(o.until)} (not in force yet)`
      : inForce
        ? `until ${iso(o.until)}`
        : `ended ${iso(o.until)}`;
  const origin =
    shown.origin === 'what-if'
      ? 'what-if --override'
      : o.source === 'manual'
        ? 'stored: a change made by hand, onDrift'
        : 'stored: pipescaler override';
  const why = shown.origin === 'what-if' ? '' : `: ${printable(o.reason)}`;
  const idle = inForce && !took ? (floor ? '; the target is at or above it' : '; sets no field this pipe takes') : '';
  const s = shown.superseded;
  const over = s
    ? `; supersedes the stored ${formatValues(s.values)} until ${iso(s.until)}: ${printable(s.reason)}`
    : '';
  return `${floor ? 'floor ' : ''}${formatValues(o.values)} ${span} (${origin})${why}${idle}${over}`;
}

/** plan --json: the pipe's override and where it comes from (nothing without one). */
export function planOverrideJson(shown: PlanOverride | undefined): object {
  if (shown === undefined) return {};
  const o = shown.override;
  const s = shown.superseded;
  return {
    pipeOverride: {
      origin: shown.origin,
      id: o.id,
      source: o.source,
      mode: o.mode,
      values: o.values,
      setAt: iso(o.setAt),
      until: iso(o.until),
      reason: o.reason,
      ...(o.ramp ? { ramp: o.ramp } : {}),
      ...(s ? { supersedes: { id: s.id, values: s.values, until: iso(s.until), reason: s.reason } } : {}),
    },
  };
}
