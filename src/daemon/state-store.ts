// What the daemon knows of each pipe, in Redis so every replica and the CLI share it. One hash
// per pipe, one JSON value per field, so a writer touches only the fields it owns (the evaluator
// its decision, the applier what the platform answered) without read-modify-write races.
import type { Redis } from 'ioredis';
import type { PipeKind, PipeState, ReversePrivateEndpointStatus, ScalingValues, ServiceState } from '../api/index.js';
import type { Decision, Direction, PipeView, Reason } from '../policy/types.js';
import { redisKeys } from './redis-keys.js';

export interface StoredDecision {
  readonly at: number;
  readonly action: Decision['action'];
  readonly direction: Direction;
  readonly windows: readonly string[];
  readonly desired: ScalingValues;
  readonly changes: ScalingValues;
  readonly reasons: readonly Reason[];
  readonly dryRun?: boolean;
}

export interface StoredError {
  readonly at: number;
  readonly code: string;
  readonly message: string;
  readonly requestId?: string;
}

export interface PipeRecord {
  readonly kind: PipeKind | null;
  readonly state: PipeState | null;
  /** The scaling the platform last reported (a transient null keeps the previous value). */
  readonly applied: ScalingValues;
  /** What pipescaler itself last applied successfully: the reference for drift. */
  readonly lastApplied: ScalingValues | null;
  /** The newest desire of a decision; an apply job sends what of it differs from `applied`. */
  readonly desired: ScalingValues | null;
  readonly desiredDirection: Direction;
  readonly endpoints: Readonly<Record<string, ReversePrivateEndpointStatus>>;
  readonly lastChange: { readonly up?: number; readonly down?: number };
  readonly recommendations: readonly { readonly at: number; readonly values: ScalingValues }[];
  readonly lastDecision: StoredDecision | null;
  readonly lastError: StoredError | null;
  /** Epoch ms of the last read of the pipe (first contact or reconcile). */
  readonly lastReadAt: number | null;
  /** A reconcile read is due: the pipe's next apply-queue turn reads it first. */
  readonly readDue: boolean;
  /** Reverse private endpoints still to read after a read of the pipe (one request per turn). */
  readonly endpointsDue: readonly string[];
  /** First contact waits for its endpoints' statuses before deciding, at this tick instant. */
  readonly contactTickAt: number | null;
  readonly authFailures: number;
  readonly parked: StoredError | null;
  readonly drifts: number;
  /** Whether the last evaluation found the pipe paused, to emit 'paused' on each change only. */
  readonly pausedSeen: boolean;
}

const EMPTY: PipeRecord = {
  kind: null, state: null, applied: {}, lastApplied: null, desired: null, desiredDirection: 'none',
  endpoints: {}, lastChange: {}, recommendations: [], lastDecision: null, lastError: null,
  lastReadAt: null, readDue: false, endpointsDue: [], contactTickAt: null, authFailures: 0, parked: null, drifts: 0, pausedSeen: false,
};

export interface PauseFlag {
  readonly reason: string;
  readonly until?: number;
  /** 'all' when it comes from `pause --all`. */
  readonly scope?: 'pipe' | 'all';
}

export interface ServiceIds {
  readonly organizationId: string;
  readonly serviceId: string;
}

/** A service's state as last read; null when the platform did not say (or did not list it). */
export interface StoredService {
  readonly state: ServiceState | null;
  readonly at: number;
}

export interface Snapshot {
  readonly rec: PipeRecord;
  readonly pause: PauseFlag | null;
  readonly service: StoredService | null;
}

// Keys of one pipe under one prefix: a Redis Cluster needs a {hash tag} in the prefix, as BullMQ does.
const SNAPSHOT_SCRIPT = "return {redis.call('HGETALL', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3]), redis.call('HGET', KEYS[4], ARGV[1])}";

export class StateStore {
  readonly keys: ReturnType<typeof redisKeys>;

  constructor(readonly redis: Redis, prefix: string) {
    this.keys = redisKeys(prefix);
  }

  async read(pipe: string): Promise<PipeRecord> {
    return parseRecord(await this.redis.hgetall(this.keys.pipe(pipe)));
  }

  /** The record, the pause that applies and (given the pipe's ids) its service's last known
   *  state: what every evaluation and apply starts from, in one command (a short script) rather
   *  than three. Each command costs this process ~25 µs of CPU, which a steady tick of 10,000
   *  pipes is bound by (bench/steady-tick.ts). */
  async snapshot(pipe: string, ids?: ServiceIds): Promise<Snapshot> {
    const keys = [this.keys.pipe(pipe), this.keys.pause(pipe), this.keys.pauseAll, this.keys.services(ids?.organizationId ?? '')];
    const [raw, own, all, service] = await this.redis.eval(SNAPSHOT_SCRIPT, 4, ...keys, ids?.serviceId.toLowerCase() ?? '') as
      [string[], string | null, string | null, string | null];
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < raw.length; i += 2) fields[raw[i]!] = raw[i + 1]!;
    return { rec: parseRecord(fields), pause: parsePause(own, all), service: service ? JSON.parse(service) as StoredService : null };
  }

  /** What a services list (or a 424) said of an organization's services, at `at`. */
  async writeServices(organizationId: string, services: readonly { id: string; state: ServiceState | null }[], at: number): Promise<void> {
    if (services.length === 0) return;
    await this.redis.hset(this.keys.services(organizationId), Object.fromEntries(
      services.map((s) => [s.id.toLowerCase(), JSON.stringify({ state: s.state, at } satisfies StoredService)])));
  }

  async write(pipe: string, fields: Partial<PipeRecord>): Promise<void> {
    const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return;
    await this.redis.hset(this.keys.pipe(pipe), Object.fromEntries(entries.map(([k, v]) => [k, JSON.stringify(v)])));
  }

  /** Atomic counter fields (authFailures, drifts) so concurrent replicas don't lose a count. */
  async increment(pipe: string, field: 'authFailures' | 'drifts'): Promise<number> {
    return this.redis.hincrby(this.keys.pipe(pipe), field, 1);
  }

  /** The pause that applies to a pipe: its own, or the fleet-wide one. */
  async pause(pipe: string): Promise<PauseFlag | null> {
    const [own, all] = await this.redis.mget(this.keys.pause(pipe), this.keys.pauseAll);
    return parsePause(own ?? null, all ?? null);
  }

  /** Pause one pipe (or all with pipe null); Redis expires the flag at `until`. */
  async setPause(pipe: string | null, flag: { reason: string; until?: number }): Promise<void> {
    const key = pipe === null ? this.keys.pauseAll : this.keys.pause(pipe);
    const value = JSON.stringify(flag);
    if (flag.until !== undefined) await this.redis.set(key, value, 'PXAT', flag.until);
    else await this.redis.set(key, value);
  }

  /** Resume one pipe, or with null every pipe (the fleet flag and every pipe's own). */
  async clearPause(pipe: string | null, pipes: readonly string[] = []): Promise<void> {
    const keys = pipe === null ? [this.keys.pauseAll, ...pipes.map((p) => this.keys.pause(p))] : [this.keys.pause(pipe)];
    await this.redis.del(...keys);
  }

  /** Parking is cleared on reload: the operator may have fixed the key. */
  async unpark(pipes: readonly string[]): Promise<void> {
    if (pipes.length === 0) return;
    const multi = this.redis.multi();
    for (const p of pipes) multi.hset(this.keys.pipe(p), { parked: 'null', authFailures: '0' });
    await multi.exec();
  }
}

function parseRecord(raw: Record<string, string>): PipeRecord {
  const out: Record<string, unknown> = { ...EMPTY };
  for (const field in raw) {
    if (Object.hasOwn(EMPTY, field)) out[field] = JSON.parse(raw[field]!);
  }
  return out as unknown as PipeRecord;
}

function parsePause(own: string | null, all: string | null): PauseFlag | null {
  if (own) return { ...(JSON.parse(own) as PauseFlag), scope: 'pipe' };
  if (all) return { ...(JSON.parse(all) as PauseFlag), scope: 'all' };
  return null;
}

/** The view decide() takes, from the stored record plus the config's bounds, the pause flag and
 *  the service's state when it was read recently enough to trust. */
export function toView(rec: PipeRecord, bounds: PipeView['bounds'], pause: PauseFlag | null, serviceState?: ServiceState): PipeView {
  return {
    kind: rec.kind,
    state: rec.state,
    applied: rec.applied,
    bounds,
    lastChange: rec.lastChange,
    recommendations: rec.recommendations,
    endpoints: rec.endpoints,
    ...(pause ? { paused: { reason: pause.reason, ...(pause.until !== undefined ? { until: pause.until } : {}) } } : {}),
    ...(serviceState !== undefined ? { serviceState } : {}),
  };
}
