// A pipe's record: what the daemon knows of each pipe, the vocabulary every stage shares. Its
// types, the empty record, a record parsed from its Redis hash (each field by its schema,
// record-fields.ts), the fields of a decision that differ from it, and the view decide() takes of
// it. No I/O: the store (store/state-store.ts) reads and writes it.
import type {
  PipeKind,
  PipeState,
  ReversePrivateEndpointStatus,
  ScalingValues,
  ServiceState,
} from '../../api/index.js';
import type {
  CapacityMinutes,
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
} from '../../policy/index.js';
import {
  OWED_FIELD_PREFIX,
  OwedLineSchema,
  parseField,
  parseStored,
  RECORD_FIELDS,
  sameJson,
  type RecordField,
} from './record-fields.js';

/** Who a pipe is: its config name (for messages) and the ids its operator state is keyed by. */
export interface PipeIdentity {
  readonly name: string;
  readonly organizationId: string;
  readonly serviceId: string;
  readonly pipeId: string;
}

/** Each object's ref: an evaluation asks it of its pipe several times (snapshot, lifecycle, the
 *  decision, the actuation estimate). A pipe's ids never change in place: a reload makes new objects. */
const refs = new WeakMap<object, string>();

/** The ids a pipe's record and operator state are about, lower case: "<org>/<service>/<pipe>". */
export function refOf(p: {
  readonly organizationId: string;
  readonly serviceId: string;
  readonly pipeId: string;
}): string {
  let ref = refs.get(p);
  if (ref === undefined) {
    ref = `${p.organizationId}/${p.serviceId}/${p.pipeId}`.toLowerCase();
    refs.set(p, ref);
  }
  return ref;
}

export interface PauseFlag {
  readonly reason: string;
  readonly until?: number;
  /** 'all' when it comes from `pause --all`, 'config' from pipes[].paused. */
  readonly scope?: 'pipe' | 'all' | 'config';
}

/** An override as stored: the policy's Override plus the name the pipe had when it was set. */
export type StoredOverrideValue = Override & { readonly pipe: string };

/** A change answered 200 whose target no read has shown in force yet. */
export interface Confirming {
  /** The values sent for this target (every field of its changes). */
  readonly target: ScalingValues;
  /** The first send of this target: actuation latency counts from here. */
  readonly sentAt: number;
  /** The last send (the first, or the re-send after the limit): the limit counts from here. */
  readonly lastSentAt: number;
  /** When the next confirmation read is due; null: none (the limit passed, reconcile reads only). */
  readonly dueAt: number | null;
  /** Confirmation reads since the last send (counted; their instants are fixed at the send:
   *  confirmationReads). */
  readonly reads: number;
  /** The last read since the last send that did not show the target (the instant it was answered):
   *  the change was not in force yet, so its propagation is longer (the lower end of its actuation
   *  sample, confirmation.ts actuationSample). Absent: no read before the one that shows it. */
  readonly notShownAt?: number;
  /** Re-sends after the limit that the platform answered (confirm-read.ts onItsWay): at most MAX_RESENDS. */
  readonly resends: number;
  /** Values a read may show for a sent field meanwhile without being drift: the values before the
   *  first send, and earlier targets of the same fields still on their way. */
  readonly notYet: readonly ScalingValues[];
  /** When the limit passed with the target not in force (the `unconfirmed` outcome), or null. */
  readonly unconfirmedAt: number | null;
  /** The change's outcome was unknown (timed out, cut, unreadable) and a read did not show it: it
   *  may be on its way, or may never have reached the platform. Its confirmation is no sample. */
  readonly outcomeUnknown?: true;
}

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
  /** Epoch ms of the record's first read of the pipe (its first contact): a window start before
   *  it is judged on nothing the daemon read by its boundary (policy/verdict.ts judgeVerdict). Null:
   *  never read, or read before this was kept. */
  readonly seenAt: number | null;
  /** A reconcile read is due: the pipe's next apply-queue turn reads it first. */
  readonly readDue: boolean;
  /** Reverse private endpoints still to read after a read of the pipe (one request per turn). */
  readonly endpointsDue: readonly string[];
  readonly authFailures: number;
  /** Calls of the pipe that failed in a row (5xx, timeout, reset, network); a success sets it to 0. */
  readonly failures: number;
  /** While `failures` > 0: the instant before which no new turn is queued for the pipe (backoff,
   *  answers.ts afterCallFailure); the retry the backoff scheduled runs then. */
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
   *  or still on its way (its intent, stored before its request goes out: unsettled.ts): what was sent
   *  and when. No other change goes out until its answer or a read has settled it, and a read that
   *  finds these values is the change landing late, not drift. */
  readonly unsettled: Unsettled | null;
  /** Changes of unknown outcome that the intent of a newer change took the place of (unsettled.ts
   *  intentWrite), oldest first: the platform may still carry one out after the newer one, until
   *  UNSETTLED_MS after its send, and a read that then shows its values shows it landing late, not
   *  drift (unsettled.ts replacedShown). At most REPLACED_KEPT; older than that span, dropped. */
  readonly replaced: readonly Unsettled[];
  /** A change answered 200 whose target no read has shown in force yet (confirmation.ts): the pipe
   *  is `confirming` (docs/architecture.md#every-change-is-confirmed). */
  readonly confirming: Confirming | null;
  /** The pipe's last confirmation: the values of its desired target (or of the change confirmed;
   *  with neither, as after Redis lost the record, the values a read showed) and the first read (or
   *  change answer) that showed them in force in a state that takes scaling; later reads that show
   *  them again keep that instant (answers.ts). Null: never seen in force. */
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

/**
 * The audit line a change answered 200 owes (lifecycle/owed-line.ts), stored in the pipe's hash as
 * the field `owed:<intent id>` by the same script that records the answer, and deleted once the line
 * is written: a sender killed between the two leaves it there, and a later evaluation or turn of
 * the pipe, on any replica, writes it past `dueAt`.
 */
export interface OwedLine {
  /** The change's intent id (Unsettled.id): the field's name, one per change. */
  readonly id: string;
  /** When its 200 was recorded. */
  readonly answeredAt: number;
  /** From this instant any turn may take the line; its holder writes it only before the margin
   *  that precedes it (owed-line.ts holderMayWrite). A turn that takes it moves it on. */
  readonly dueAt: number;
  readonly line: OwedDecision;
}

/** What the owed audit line says: the sender's `decision` event, without the pipe. */
export interface OwedDecision {
  /** The line's kind: a change answered 200 is `applied` (the audit line `scaling applied`). */
  readonly kind: 'applied';
  /** events.ts AuditDirection: 'mixed' when one PATCH moves fields both ways. */
  readonly direction: Direction | 'mixed';
  readonly reason: string;
  readonly windows: readonly string[];
  readonly before: ScalingValues;
  readonly after: ScalingValues;
  readonly target?: ScalingValues;
  readonly reasons: readonly Reason[];
  readonly requestId?: string;
  readonly idempotencyKey: string;
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
  /** met, late and missed: the capacity the step to the target held before the boundary (early)
   *  and lacked after it (short), in minutes of each unit (policy/early-capacity.ts). */
  readonly early?: CapacityMinutes;
  readonly short?: CapacityMinutes;
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
  seenAt: null,
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
  replaced: [],
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
  /** The marker's text as the snapshot read it (redis-guard.ts), null when it is gone: Redis lost
   *  the state and no tick has noticed yet. The decision is written only while it is unchanged. */
  readonly marker: string | null;
  /** The audit lines the record owes (its `owed:<id>` fields; usually none): a change's sender died
   *  between recording its 200 and writing its line. */
  readonly owed: readonly OwedLine[];
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
 * The record from its hash, every field checked by its schema (record-fields.ts). A field that
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

/** The owed audit lines of a pipe's hash (its fields named OWED_FIELD_PREFIX + id); one that does
 *  not parse is left out (it is deleted with nothing written: its line cannot be told). */
export function parseOwed(raw: Record<string, string>): OwedLine[] {
  const out: OwedLine[] = [];
  for (const field in raw) {
    if (!field.startsWith(OWED_FIELD_PREFIX)) continue;
    const owed = parseStored(OwedLineSchema, raw[field]);
    if (owed !== null && OWED_FIELD_PREFIX + owed.id === field) out.push(owed);
  }
  return out;
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
