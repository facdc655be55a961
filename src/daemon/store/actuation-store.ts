// Measured actuation latency (a change sent to confirmed at target), in Redis so every replica and
// the CLI share it and a restart keeps it: a list per pipe identity (refOf, so a rename keeps it)
// of its last ACTUATION_SAMPLES_KEPT latencies, and one per pipe kind of its last
// KIND_SAMPLES_KEPT; each list expires ACTUATION_KEPT_MS after its last write, as the history
// does, so a pipe gone from the config leaves nothing behind. leadTime auto counts on a pipe's p95
// once it has evaluate.actuation.minSamples of them, else its kind's p95 once the kind has as many,
// else the configured expectation (lead-plan.ts expectedActuationMs caps either at `max`).
import type { PipeKind } from '../../api/index.js';
import { ACTUATION_DEFAULTS, assumedKind, type ScalingConfig } from '../../policy/index.js';
import type { Result } from 'ioredis';
import { defineLua, type LuaCommand } from './lua.js';
import type { RedisClient } from './redis-connection.js';
import type { redisKeys } from './redis-keys.js';
import { refOf, type PipeIdentity } from '../model/record.js';

/** The latencies kept per pipe: its p95 follows the last ones (evaluate.actuation.minSamples <= this). */
export const ACTUATION_SAMPLES_KEPT = 50;
/** The latencies kept per pipe kind: the fleet's last changes of that kind. */
export const KIND_SAMPLES_KEPT = 500;
/** A pipe's (or kind's) samples expire this long after its last one: 30 days. */
export const ACTUATION_KEPT_MS = 30 * 86_400_000;

type Keys = ReturnType<typeof redisKeys>;

/** Who a measured change was of: its ids (the samples' key) and its kind, when known. */
export type ActuationPipe = Omit<PipeIdentity, 'name'> & { readonly kind: PipeKind | null };

/** Where a pipe's expected actuation comes from: its own p95, its kind's, or the config's. */
export type ActuationSource = 'pipe' | 'kind' | 'configured';

export interface ActuationEstimate {
  /** The measured p95 (ms); undefined: the configured expectation (`source` 'configured'). */
  readonly ms: number | undefined;
  readonly source: ActuationSource;
  /** The samples behind it (the pipe's, or its kind's; the pipe's own when configured). */
  readonly samples: number;
}

/** The nearest-rank 95th percentile of the values; undefined when there are none. */
export function p95(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.95 * sorted.length) - 1];
}

/** The latencies stored in a list, newest first; an entry that is not a non-negative number is skipped. */
function samplesOf(texts: readonly string[] | null | undefined): number[] {
  const out: number[] = [];
  for (const t of texts ?? []) {
    const ms = Number(t);
    if (t !== '' && Number.isFinite(ms) && ms >= 0) out.push(ms);
  }
  return out;
}

/**
 * Record one measured actuation (the confirm path: a change sent at `sentAt` seen at target at
 * `confirmedAt`, actuationMs = their difference). Bounded per pipe and per kind, refreshed expiry.
 * A latency that is not a finite non-negative number is ignored.
 */
export async function recordActuation(
  redis: RedisClient,
  keys: Keys,
  pipe: ActuationPipe,
  actuationMs: number,
): Promise<void> {
  if (!Number.isFinite(actuationMs) || actuationMs < 0) return;
  const ms = String(Math.round(actuationMs));
  const own = keys.actuation(refOf(pipe));
  const multi = redis.multi();
  multi
    .lpush(own, ms)
    .ltrim(own, 0, ACTUATION_SAMPLES_KEPT - 1)
    .pexpire(own, ACTUATION_KEPT_MS);
  if (pipe.kind) {
    const kind = keys.actuationKind(pipe.kind);
    multi
      .lpush(kind, ms)
      .ltrim(kind, 0, KIND_SAMPLES_KEPT - 1)
      .pexpire(kind, ACTUATION_KEPT_MS);
  }
  await multi.exec();
}

/**
 * The non-empty lists among KEYS, as pairs: the key's index (from 1) and its entries. A steady fleet
 * has samples for few of its pipes, so the answer is short; one command rather than one LRANGE per
 * pipe, which cost a 10,000-pipe daemon ~100-250 ms of CPU every refresh (bench/steady-tick.ts).
 */
const READ_LISTS_SCRIPT = `
local out = {}
for i = 1, #KEYS do
  local entries = redis.call('LRANGE', KEYS[i], 0, -1)
  if #entries > 0 then out[#out + 1] = i; out[#out + 1] = entries end
end
return out
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** READ_LISTS_SCRIPT: the number of keys, then the lists' keys. [index, entries, ...] of the non-empty ones. */
    pipescalerReadLists(keyCount: number, ...keys: string[]): Result<(number | string[])[], Context>;
  }
}

const READ_LISTS: LuaCommand = { name: 'pipescalerReadLists', lua: READ_LISTS_SCRIPT };

/** Keys per script call: a call holds Redis while it runs; the calls go out together. */
const KEYS_PER_READ = 2_000;

/** The entries of the lists at `keys` by their index there (a missing or empty list is absent). */
async function readLists(redis: RedisClient, keys: readonly string[]): Promise<Map<number, string[]>> {
  defineLua(redis, [READ_LISTS]);
  const calls: Promise<(number | string[])[]>[] = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_READ) {
    const chunk = keys.slice(i, i + KEYS_PER_READ);
    calls.push(redis.pipescalerReadLists(chunk.length, ...chunk));
  }
  const out = new Map<number, string[]>();
  (await Promise.all(calls)).forEach((answer, c) => {
    for (let j = 0; j + 1 < answer.length; j += 2) {
      const entries = answer[j + 1];
      if (Array.isArray(entries)) out.set(c * KEYS_PER_READ + Number(answer[j]) - 1, entries);
    }
  });
  return out;
}

/** Where each pipe's samples are: its ref, the index of its list's key and of its kind's. */
interface ListsOf {
  readonly keys: Keys;
  readonly refs: readonly string[];
  readonly own: readonly number[];
  readonly kind: readonly (number | null)[];
  readonly listKeys: readonly string[];
}

/** Made once per set of pipes (the daemon's: once per config) and keys. */
const listsOf = new WeakMap<readonly ActuationPipe[], ListsOf>();

function listsFor(keys: Keys, pipes: readonly ActuationPipe[]): ListsOf {
  const known = listsOf.get(pipes);
  if (known?.keys === keys) return known;
  const listKeys: string[] = [];
  const at = new Map<string, number>();
  const indexOf = (key: string): number => {
    let i = at.get(key);
    if (i === undefined) at.set(key, (i = listKeys.push(key) - 1));
    return i;
  };
  const refs = pipes.map(refOf);
  const own = refs.map((ref) => indexOf(keys.actuation(ref)));
  const kind = pipes.map((p) => (p.kind ? indexOf(keys.actuationKind(p.kind)) : null));
  const made = { keys, refs, own, kind, listKeys };
  listsOf.set(pipes, made);
  return made;
}

/** Each pipe's expected actuation (by refOf) from the samples in Redis; one round trip. */
export async function readActuation(
  redis: RedisClient,
  keys: Keys,
  pipes: readonly ActuationPipe[],
  minSamples: number,
): Promise<Map<string, ActuationEstimate>> {
  const out = new Map<string, ActuationEstimate>();
  if (pipes.length === 0) return out;
  const l = listsFor(keys, pipes);
  const lists = await readLists(redis, l.listKeys);
  const parsed = new Map<number, number[]>();
  const samples = (i: number | null | undefined): number[] => {
    const texts = i === null || i === undefined ? undefined : lists.get(i);
    if (texts === undefined || i === null || i === undefined) return [];
    let s = parsed.get(i);
    if (!s) parsed.set(i, (s = samplesOf(texts)));
    return s;
  };
  l.refs.forEach((ref, i) => out.set(ref, estimateOf(samples(l.own[i]), samples(l.kind[i]), minSamples)));
  return out;
}

/** The fewest newest samples whose p95 can lift an estimate (riseFastP95): their p95 is their
 *  second highest, so two slow changes lift it, one does not. */
export const RECENT_AT_LEAST = 20;

/**
 * The p95 of samples kept newest first, rising fast and falling slowly: the p95 of them all, or of
 * the newest `recent` when that is higher. A platform that got slower shows within `recent`
 * changes; one that got faster only once most of the kept samples say so (the probe read measures
 * it down, confirmation.ts). A pipe's kind keeps 500 samples: a cold start's changes, shown in
 * force by their own answer (0 ms), held its p95 at 17 ms for a whole boundary whose changes took
 * 30 s, and the lead plan counted on that (bench/actuation.ts).
 */
export function riseFastP95(newestFirst: readonly number[], recent: number): number | undefined {
  const all = p95(newestFirst);
  // at least RECENT_AT_LEAST of them, so that one slow change alone does not lift it
  const n = Math.max(recent, RECENT_AT_LEAST);
  const newest = newestFirst.length > n ? p95(newestFirst.slice(0, n)) : undefined;
  return all === undefined || newest === undefined ? all : Math.max(all, newest);
}

/** The pipe's p95 once it has `minSamples`, else its kind's once that has as many, else configured;
 *  either rising within its newest `minSamples` (riseFastP95). Samples are newest first. */
export function estimateOf(own: readonly number[], kind: readonly number[], minSamples: number): ActuationEstimate {
  if (own.length >= minSamples && own.length > 0)
    return { ms: riseFastP95(own, minSamples), source: 'pipe', samples: own.length };
  if (kind.length >= minSamples && kind.length > 0)
    return { ms: riseFastP95(kind, minSamples), source: 'kind', samples: kind.length };
  return { ms: undefined, source: 'configured', samples: own.length };
}

const pipesOf = new WeakMap<ScalingConfig, readonly ActuationPipe[]>();

/** The config's pipes as the samples know them: their ids and the kind declared or implied by
 *  their policy (a pipe of neither has no kind's estimate). Made once per config. */
export function actuationPipes(config: ScalingConfig): readonly ActuationPipe[] {
  let pipes = pipesOf.get(config);
  if (!pipes) {
    pipes = config.pipes.map((p) => {
      const policy = config.policies[p.policy];
      const kind = (policy ? assumedKind(p, policy)?.kind : undefined) ?? null;
      return { organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId, kind };
    });
    pipesOf.set(config, pipes);
  }
  return pipes;
}

/** Whether the lead plans count the measured actuation (evaluate.actuation.measured, default true). */
export function countsMeasured(config: ScalingConfig): boolean {
  return config.evaluate.actuation?.measured !== false;
}

/** evaluate.actuation.minSamples, or its default. */
export function minSamplesOf(config: ScalingConfig): number {
  return (config.evaluate.actuation ?? ACTUATION_DEFAULTS).minSamples;
}

/** How often the daemon reads the samples again for its lead plans. */
export const ACTUATION_REFRESH_MS = 60_000;

/**
 * The daemon's measured actuation, read from Redis at most every ACTUATION_REFRESH_MS and kept in
 * memory, for the lead plan's synchronous `actuationMs` (lead-plan.ts LeadPlanOptions).
 * `version` changes when the estimates do, so a cached plan is made again.
 */
export class ActuationEstimates {
  private estimates = new Map<string, ActuationEstimate>();
  private readAt = -Infinity;
  private reading: Promise<void> | null = null;
  /** Bumped when a refresh changed some estimate. */
  version = 0;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Read the samples again when the last read is ACTUATION_REFRESH_MS old (or `force`). Never throws:
   *  Redis unreachable keeps the last estimates. */
  async refresh(pipes: readonly ActuationPipe[], minSamples: number, now: number, force = false): Promise<void> {
    if (this.reading) return this.reading;
    if (!force && now - this.readAt < ACTUATION_REFRESH_MS) return;
    this.readAt = now;
    this.reading = (async () => {
      try {
        const next = await readActuation(this.redis, this.keys, pipes, minSamples);
        if (!sameEstimates(this.estimates, next)) this.version++;
        this.estimates = next;
      } catch {
        // kept: the next refresh tries again
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  /** refresh() for every pipe of the config, with its minSamples. */
  refreshFor(config: ScalingConfig, now: number, force = false): Promise<void> {
    return this.refresh(actuationPipes(config), minSamplesOf(config), now, force);
  }

  /** The pipe's estimate as last read; configured when nothing was read of it. */
  get(pipe: Omit<PipeIdentity, 'name'>): ActuationEstimate {
    return this.estimates.get(refOf(pipe)) ?? { ms: undefined, source: 'configured', samples: 0 };
  }

  /** The measured p95 the lead plan takes (undefined: the configured expectation). */
  readonly actuationMs = (pipe: Omit<PipeIdentity, 'name'>): number | undefined => this.get(pipe).ms;
}

/** Whether two reads give every pipe the same measured value and source (configured ones aside). */
function sameEstimates(a: ReadonlyMap<string, ActuationEstimate>, b: ReadonlyMap<string, ActuationEstimate>): boolean {
  const measured = (m: ReadonlyMap<string, ActuationEstimate>) =>
    [...m].filter(([, e]) => e.ms !== undefined).map(([ref, e]) => `${ref} ${e.source} ${e.ms}`);
  const x = measured(a);
  const y = new Set(measured(b));
  return x.length === y.size && x.every((e) => y.has(e));
}
