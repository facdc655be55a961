// What the daemon knows of each pipe, in Redis so every replica and the CLI share it. One hash
// per pipe, one JSON value per field, so a writer touches only the fields it owns (the evaluator
// its decision, the applier what the platform answered) without read-modify-write races.
import { defineLua } from './lua.js';
import type { RedisClient } from './redis-connection.js';
import type { PipeKind, PipeState, ReversePrivateEndpointStatus, ScalingValues, ServiceState } from '../api/index.js';
import type { Confirming } from './confirmation.js';
import type {
  Confirmed,
  Decision,
  Direction,
  Exclusion,
  Miss,
  Override,
  PipeView,
  Reason,
  VerdictDue,
  VerdictName,
} from '../policy/index.js';
import { redisKeys } from './redis-keys.js';
import { STORE_COMMANDS } from './state-scripts.js';
import {
  parseField,
  parseStored,
  RECORD_FIELDS,
  sameJson,
  storedText,
  StoredServiceSchema,
  type RecordField,
} from './stored-record.js';
import {
  OperatorStore,
  parseOverride,
  parsePause,
  refOf,
  type PauseFlag,
  type StoredOverrideValue,
} from './operator-state.js';

export { refOf, type PauseFlag, type PipeIdentity } from './operator-state.js';

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
  readonly authFailures: number;
  /** Calls of the pipe that failed in a row (5xx, timeout, reset, network); a success sets it to 0. */
  readonly failures: number;
  /** While `failures` > 0: the instant before which no new turn is queued for the pipe (backoff,
   *  lifecycle-answers.ts afterCallFailure); the retry the backoff scheduled runs then. */
  readonly retryAt: number | null;
  readonly parked: StoredError | null;
  readonly drifts: number;
  /** Whether the last evaluation found the pipe paused, to emit 'paused' on each change only. */
  readonly pausedSeen: boolean;
  /** "<organization>/<service>/<pipe>" ids this record is about: a reload that points the name at
   *  another pipe resets the record (refOf). */
  readonly ref: string | null;
  /** The tick instant of the newest stored decision: an older one never overwrites it (writeDecision). */
  readonly decidedAt: number | null;
  /** How many decisions were stored: a decision written as its difference from a record goes in
   *  only while this is still the record's (writeDecision). */
  readonly decisions: number;
  /** The first decision instant that wanted the pending change (the apply-wait metric starts here). */
  readonly wantedSince: number | null;
  /** A change whose outcome is unknown (timed out, cut, or a 2xx whose answer could not be read),
   *  or still on its way (its intent, stored before its request goes out: intent.ts): what was sent
   *  and when. No other change goes out until its answer or a read has settled it, and a read that
   *  finds these values is the change landing late, not drift. */
  readonly unsettled: Unsettled | null;
  /** A change answered 200 whose target no read has shown in force yet (confirmation.ts): the pipe
   *  is `confirming` (docs/architecture.md#every-change-is-confirmed). */
  readonly confirming: Confirming | null;
  /** The pipe's last confirmation: the values of its desired target (or of the change confirmed;
   *  with neither, as after Redis lost the record, the values a read showed) and the first read (or
   *  change answer) that showed them in force in a state that takes scaling; later reads that show
   *  them again keep that instant (lifecycle-answers.ts). Null: never seen in force. */
  readonly confirmed: Confirmed | null;
  /** The override the last evaluation found in force, to emit 'override' on each change only. */
  readonly overrideSeen: OverrideSeen | null;
  /** The freezes the last evaluation found holding a change, to emit 'freeze' on each change only. */
  readonly freezeSeen: readonly string[] | null;
  /** The window start whose verdict is still to give (verdicts.ts): one at a time, fleet-wide. */
  readonly verdictDue: VerdictDue | null;
  /** The last verdict given (what `status` shows). */
  readonly lastVerdict: StoredVerdict | null;
}

/** A change sent whose answer is not recorded: its intent until its answer comes (code
 *  `in_flight`), or the change whose outcome is unknown after it failed (its API error code). */
export interface Unsettled {
  readonly sent: ScalingValues;
  /** When it was sent (its intent stored), after every read the pipe had before it. */
  readonly at: number;
  readonly code: string;
  /** The platform answered 2xx (its answer could not be read): the change was taken. */
  readonly taken?: boolean;
  /** The intent's own id: its answer is recorded only while the record still holds it. */
  readonly id?: string;
  /** The Idempotency-Key it was sent with. */
  readonly key?: string;
  /** The job's attempt that sent it (1: its first). */
  readonly attempt?: number;
  /** In flight: the instant its request's time runs out (api.timeout after its send). */
  readonly until?: number;
}

/** A verdict as stored: the window start, what it was, when it was given. */
export interface StoredVerdict extends VerdictDue {
  readonly verdict: VerdictName;
  /** When it was given. */
  readonly at: number;
  /** met and late: how long after the boundary the pipe was confirmed at target (0: met). */
  readonly lateMs?: number;
  readonly confirmedAt?: number;
  /** missed: why; excluded: what took the pipe out of the policy's hands. */
  readonly reason?: Miss | Exclusion;
}

export interface OverrideSeen {
  readonly id: string;
  readonly until: number;
  readonly source: 'operator' | 'manual';
  readonly values: ScalingValues;
  readonly reason: string;
}

const EMPTY: PipeRecord = {
  kind: null,
  state: null,
  applied: {},
  lastApplied: null,
  desired: null,
  desiredDirection: 'none',
  endpoints: {},
  lastChange: {},
  recommendations: [],
  lastDecision: null,
  lastError: null,
  lastReadAt: null,
  readDue: false,
  endpointsDue: [],
  authFailures: 0,
  failures: 0,
  retryAt: null,
  parked: null,
  drifts: 0,
  pausedSeen: false,
  ref: null,
  decidedAt: null,
  decisions: 0,
  wantedSince: null,
  unsettled: null,
  confirming: null,
  confirmed: null,
  overrideSeen: null,
  freezeSeen: null,
  verdictDue: null,
  lastVerdict: null,
};

/** The ids a snapshot reads by: the service's for its state, the pipe's for its operator state. */
export interface ServiceIds {
  readonly organizationId: string;
  readonly serviceId: string;
  readonly pipeId?: string;
}

/** A service's state as last read; null when the platform did not say (or did not list it). */
export interface StoredService {
  readonly state: ServiceState | null;
  readonly at: number;
}

export interface Snapshot {
  readonly rec: PipeRecord;
  /** The record's fields that did not parse (their empty values stand in `rec`). */
  readonly invalid: readonly string[];
  readonly pause: PauseFlag | null;
  /** The pipe's override, ended or not (decide() ignores an ended one). */
  readonly override: StoredOverrideValue | null;
  readonly service: StoredService | null;
}

export class StateStore {
  readonly keys: ReturnType<typeof redisKeys>;
  /** Pauses and overrides, by the pipe's identity. */
  readonly operator: OperatorStore;

  /**
   * @param onInvalid called with the fields of a pipe's record that did not parse (dropped, and
   *   the pipe read again); the daemon logs and counts them.
   */
  constructor(
    readonly redis: RedisClient,
    prefix: string,
    private readonly onInvalid: (pipe: string, fields: readonly string[]) => void = () => {},
  ) {
    this.keys = redisKeys(prefix);
    this.operator = new OperatorStore(redis, this.keys);
    defineLua(redis, STORE_COMMANDS);
  }

  async read(pipe: string): Promise<PipeRecord> {
    return this.parse(pipe, await this.redis.hgetall(this.keys.pipe(pipe)));
  }

  private parse(pipe: string, raw: Record<string, string>): PipeRecord {
    return this.parseAll(pipe, raw).rec;
  }

  private parseAll(pipe: string, raw: Record<string, string>): { rec: PipeRecord; invalid: string[] } {
    const parsed = parseRecord(raw);
    if (parsed.invalid.length > 0) this.onInvalid(pipe, parsed.invalid);
    return parsed;
  }

  /** The record, the pause and override that apply (by the pipe's identity, given its ids) and
   *  its service's last known state: what every evaluation and apply starts from, in one command
   *  (a short script) rather than four. Each command costs this process ~25 µs of CPU, which a
   *  steady tick of 10,000 pipes is bound by (bench/steady-tick.ts). */
  async snapshot(pipe: string, ids?: ServiceIds): Promise<Snapshot> {
    const ref = ids?.pipeId === undefined ? null : refOf(ids as Required<ServiceIds>);
    const [raw, own, all, service, override] = await this.redis.pipescalerSnapshot(
      this.keys.pipe(pipe),
      // without a pipe id: a key nothing writes (the pipe hash's own name under another prefix)
      ref === null ? `${this.keys.pipe(pipe)}:none` : this.keys.pause(ref),
      this.keys.pauseAll,
      this.keys.services(ids?.organizationId ?? ''),
      ref === null ? `${this.keys.pipe(pipe)}:none` : this.keys.override(ref),
      ids?.serviceId.toLowerCase() ?? '',
    );
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const field = raw[i]; // i + 1 < length: both there
      const value = raw[i + 1];
      if (field !== undefined && value !== undefined) fields[field] = value;
    }
    const { rec, invalid } = this.parseAll(pipe, fields);
    return {
      rec,
      invalid,
      pause: parsePause(own, all),
      override: parseOverride(override),
      service: parseStored(StoredServiceSchema, service),
    };
  }

  /** The service's state as last stored, or null. */
  async service(ids: ServiceIds): Promise<StoredService | null> {
    const text = await this.redis.hget(this.keys.services(ids.organizationId), ids.serviceId.toLowerCase());
    return parseStored(StoredServiceSchema, text);
  }

  /** What a services list (or a 424) said of an organization's services, at `at`. */
  async writeServices(
    organizationId: string,
    services: readonly { id: string; state: ServiceState | null }[],
    at: number,
  ): Promise<void> {
    if (services.length === 0) return;
    await this.redis.hset(
      this.keys.services(organizationId),
      Object.fromEntries(
        services.map((s) => [s.id.toLowerCase(), JSON.stringify({ state: s.state, at } satisfies StoredService)]),
      ),
    );
  }

  async write(pipe: string, fields: Partial<PipeRecord>): Promise<void> {
    const entries = Object.entries<unknown>(fields).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return;
    await this.redis.hset(this.keys.pipe(pipe), Object.fromEntries(entries.map(([k, v]) => [k, storedText(v)])));
  }

  /**
   * Write `fields` only while the record's unsettled change is the one whose id is `intent` (''
   * none): a change's intent stored before its request, its answer recorded, a read's transition
   * (one script, state-scripts.ts). False when refused: another attempt sent or recorded meanwhile.
   */
  async writeIfIntent(pipe: string, intent: string, fields: Partial<PipeRecord>): Promise<boolean> {
    const args = Object.entries<unknown>(fields)
      .filter(([, v]) => v !== undefined)
      .flatMap(([k, v]) => [k, storedText(v)]);
    if (args.length === 0) return true;
    return (await this.redis.pipescalerWriteIfIntent(this.keys.pipe(pipe), intent, ...args)) === 1;
  }

  /**
   * Write a decision of the tick at `tickAt` unless a newer tick's decision is stored already
   * (compare-and-set in one script): a stalled evaluation of an older tick that finishes late must
   * not overwrite a newer desire (seen: 8 -> 2 -> 8 after a window ended). False when refused.
   */
  async writeDecision(pipe: string, tickAt: number, fields: Partial<PipeRecord>, base?: PipeRecord): Promise<boolean> {
    const write = async (f: Partial<PipeRecord>, since: string): Promise<number> => {
      const entries = Object.entries<unknown>({ ...f, decidedAt: tickAt }).filter(([, v]) => v !== undefined);
      const args = entries.flatMap(([k, v]) => [k, storedText(v)]);
      return await this.redis.pipescalerWriteDecision(this.keys.pipe(pipe), String(tickAt), since, ...args);
    };
    if (base === undefined) return (await write(fields, '')) === 1;
    // Only what differs from the record it was decided from, as long as no other decision was
    // stored since (the record's count of them); else the whole decision, as before.
    const written = await write(changedFrom(base, fields), String(base.decisions));
    return written === 2 ? (await write(fields, '')) === 1 : written === 1;
  }

  /**
   * A window start's verdict, once fleet-wide (one script): `open` stores it as due, `close`
   * gives the due one, `exclude` gives one at once. False when another replica did it first (or
   * a later start is already due or given).
   */
  async verdict(
    pipe: string,
    action: 'open' | 'close' | 'exclude',
    value: VerdictDue | StoredVerdict,
  ): Promise<boolean> {
    const r = await this.redis.pipescalerVerdict(
      this.keys.pipe(pipe),
      action,
      String(value.boundary),
      storedText(value),
    );
    return r === 1;
  }

  /** Forget everything known of a pipe (its name now points at another pipe). */
  async reset(pipe: string): Promise<void> {
    await this.redis.del(this.keys.pipe(pipe));
  }

  /** Atomic counter fields (authFailures, failures, drifts) so concurrent replicas don't lose a count. */
  async increment(pipe: string, field: 'authFailures' | 'failures' | 'drifts'): Promise<number> {
    return this.redis.hincrby(this.keys.pipe(pipe), field, 1);
  }

  /** Parking is cleared on reload: the operator may have fixed the key. */
  async unpark(pipes: readonly string[]): Promise<void> {
    if (pipes.length === 0) return;
    const multi = this.redis.multi();
    for (const p of pipes) multi.hset(this.keys.pipe(p), { parked: 'null', authFailures: '0' });
    await multi.exec();
  }
}

/**
 * The fields of a decision that differ from the record `base` it was decided from. A steady pipe
 * decides what it decided at the tick before, and writing that again was the daemon's largest cost
 * of a steady tick after BullMQ's own (10,000 pipes: ~15 % of its CPU, most of it the texts of the
 * last decision and the desire going out to Redis; bench/steady-tick.ts). The last decision is
 * compared without its instant, which the record's decidedAt gives (parseRecord).
 */
export function changedFrom(base: PipeRecord, fields: Partial<PipeRecord>): Partial<PipeRecord> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries<unknown>(fields)) {
    if (v === undefined) continue;
    const was: unknown = base[k as keyof PipeRecord];
    const same =
      k === 'lastDecision' && v !== null && was !== null
        ? sameJson({ ...(v as StoredDecision), at: 0 }, { ...(was as StoredDecision), at: 0 })
        : sameJson(v, was);
    if (!same) out[k] = v;
  }
  return out;
}

/**
 * The record from its hash, every field checked by its schema (stored-record.ts). A field that
 * does not parse keeps its empty value and is named in `invalid`; the pipe is then read again
 * (readDue), as after a lost state, so nothing is decided on a value nobody can vouch for.
 */
export function parseRecord(raw: Record<string, string>): { rec: PipeRecord; invalid: string[] } {
  const out: Record<string, unknown> = { ...EMPTY };
  const invalid: string[] = [];
  for (const field in raw) {
    const text = raw[field]; // an own key of raw: there
    if (text === undefined || !Object.hasOwn(RECORD_FIELDS, field)) continue;
    const r = parseField(field as RecordField, text);
    if (r.ok) out[field] = r.value;
    else invalid.push(field);
  }
  if (invalid.length > 0) out.readDue = true;
  // A decision that repeats the last one stores only its instant (changedFrom): the last decision
  // was made then.
  const last = out.lastDecision as StoredDecision | null;
  const decidedAt = out.decidedAt as number | null;
  if (last !== null && decidedAt !== null && decidedAt > last.at) out.lastDecision = { ...last, at: decidedAt };
  // Every field has passed its schema (or is EMPTY's): the shape is PipeRecord's.
  return { rec: out as unknown as PipeRecord, invalid };
}

/** The view decide() takes, from the stored record plus the config's bounds, the pause flag and
 *  the service's state when it was read recently enough to trust. */
export function toView(
  rec: PipeRecord,
  bounds: PipeView['bounds'],
  pause: PauseFlag | null,
  serviceState?: ServiceState,
  override?: StoredOverrideValue | null,
): PipeView {
  return {
    kind: rec.kind,
    state: rec.state,
    applied: rec.applied,
    bounds,
    lastChange: rec.lastChange,
    recommendations: rec.recommendations,
    endpoints: rec.endpoints,
    ...(pause
      ? { paused: { reason: pause.reason, ...(pause.until !== undefined ? { until: pause.until } : {}) } }
      : {}),
    ...(serviceState !== undefined ? { serviceState } : {}),
    ...(override ? { override: withoutName(override) } : {}),
  };
}

/** The policy's Override from a stored one (the name it was set under is for people only). */
function withoutName(stored: StoredOverrideValue): Override {
  const { pipe: _name, ...override } = stored;
  return override;
}
