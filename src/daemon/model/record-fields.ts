// What is read back from Redis is checked like an API answer: another version of the daemon, a
// hand edit or a partial write may have left a field that is not what this code expects. Each
// field of a pipe's record has its schema; a field that does not parse is dropped (its empty
// value is used, as for a pipe never met) and named, and the pipe is read again.
import { z } from 'zod';
import {
  PIPE_KINDS,
  PipeState,
  ReversePrivateEndpointStatus,
  SCALING_FIELDS,
  ServiceState,
  type ScalingField,
} from '../../api/index.js';
import { CAPACITY_UNITS, EXCLUSIONS, MISSES, REASON_CODES, VERDICTS, type CapacityUnit } from '../../policy/index.js';
import { boundedTexts, MAX_TEXT } from '../../api/internal.js';

const epochMs = z.number();
const scalingValues = z.strictObject(
  Object.fromEntries(SCALING_FIELDS.map((f) => [f, z.number().optional()])) as Record<
    ScalingField,
    z.ZodOptional<z.ZodNumber>
  >,
);
const direction = z.enum(['up', 'down', 'none']);
const reason = z.object({
  code: z.enum(REASON_CODES),
  field: z.enum(SCALING_FIELDS as [ScalingField, ...ScalingField[]]).optional(),
  bound: z.enum(['min', 'max']).optional(),
  message: z.string(),
});
const storedError = z.object({ at: epochMs, code: z.string(), message: z.string(), requestId: z.string().optional() });
const verdictDue = z.object({
  boundary: epochMs,
  windows: z.array(z.string()),
  target: scalingValues,
  deadline: epochMs,
  before: scalingValues.optional(),
});
const minutes = z.object(
  Object.fromEntries(CAPACITY_UNITS.map((u) => [u, z.number().nonnegative()])) as Record<CapacityUnit, z.ZodNumber>,
);
const storedDecision = z.object({
  at: epochMs,
  action: z.enum(['change', 'none', 'skip']),
  direction,
  windows: z.array(z.string()),
  desired: scalingValues,
  changes: scalingValues,
  reasons: z.array(reason),
  dryRun: z.boolean().optional(),
});

/** A change sent whose answer is not recorded (record.ts Unsettled). */
const unsettled = z.object({
  sent: scalingValues,
  at: epochMs,
  code: z.string(),
  taken: z.boolean().optional(),
  id: z.string().optional(),
  key: z.string().optional(),
  attempt: z.number().int().nonnegative().optional(),
  until: epochMs.optional(),
});

/** One schema per stored field of a pipe's record (state-store.ts PipeRecord). */
export const RECORD_FIELDS = {
  kind: z.enum(PIPE_KINDS).nullable(),
  state: PipeState.nullable(),
  applied: scalingValues,
  lastApplied: scalingValues.nullable(),
  desired: scalingValues.nullable(),
  desiredDirection: direction,
  endpoints: z.record(z.string(), ReversePrivateEndpointStatus),
  lastChange: z.object({ up: epochMs.optional(), down: epochMs.optional() }),
  recommendations: z.array(z.object({ at: epochMs, values: scalingValues })),
  lastDecision: storedDecision.nullable(),
  lastError: storedError.nullable(),
  lastReadAt: epochMs.nullable(),
  seenAt: epochMs.nullable(),
  readDue: z.boolean(),
  endpointsDue: z.array(z.string()),
  authFailures: z.number().int().nonnegative(),
  failures: z.number().int().nonnegative(),
  retryAt: epochMs.nullable(),
  parked: storedError.nullable(),
  drifts: z.number().int().nonnegative(),
  pausedSeen: z.boolean(),
  ref: z.string().nullable(),
  decidedAt: epochMs.nullable(),
  decisions: z.number().int().nonnegative(),
  wantedSince: epochMs.nullable(),
  unsettled: unsettled.nullable(),
  // a record stored before this field was kept has none: its empty value, [] (record.ts EMPTY)
  replaced: z.array(unsettled),
  confirming: z
    .object({
      target: scalingValues,
      sentAt: epochMs,
      lastSentAt: epochMs,
      dueAt: epochMs.nullable(),
      reads: z.number().int().nonnegative(),
      notShownAt: epochMs.optional(),
      resends: z.number().int().nonnegative(),
      notYet: z.array(scalingValues),
      unconfirmedAt: epochMs.nullable(),
      outcomeUnknown: z.literal(true).optional(),
    })
    .nullable(),
  confirmed: z
    .object({
      values: scalingValues,
      at: epochMs,
      lowest: scalingValues.optional(),
      seen: epochMs.optional(),
      earlier: z
        .array(z.object({ held: scalingValues, at: epochMs, until: epochMs, outcomeUnknownFrom: epochMs.optional() }))
        .optional(),
      outcomeUnknownFrom: epochMs.optional(),
    })
    .nullable(),
  freezeSeen: z.array(z.string()).nullable(),
  overrideSeen: z
    .object({
      id: z.string(),
      until: epochMs,
      source: z.enum(['operator', 'manual']),
      values: scalingValues,
      reason: z.string(),
    })
    .nullable(),
  verdictDue: verdictDue.nullable(),
  lastVerdict: verdictDue
    .extend({
      verdict: z.enum(VERDICTS),
      at: epochMs,
      lateMs: z.number().nonnegative().optional(),
      confirmedAt: epochMs.optional(),
      reason: z.enum([...MISSES, ...EXCLUSIONS]).optional(),
      early: minutes.optional(),
      short: minutes.optional(),
    })
    .nullable(),
} as const;

export type RecordField = keyof typeof RECORD_FIELDS;

/**
 * The audit line a change answered 200 owes (record.ts OwedLine), in the pipe's hash beside the
 * fields above, as the field `owed:<intent id>` (one per change, usually none): written by the
 * script that records the 200 (state-scripts.ts ANSWER_SCRIPT), deleted by its sender once the line
 * is written, or, the sender dead, taken past `dueAt` and written by a later evaluation or turn of
 * the pipe (work/owed-lines.ts, lifecycle/owed-line.ts). Gone with the record when Redis loses it.
 */
export const OWED_FIELD_PREFIX = 'owed:';
export const OwedLineSchema = z.object({
  id: z.string(),
  answeredAt: epochMs,
  dueAt: epochMs,
  line: z.object({
    kind: z.literal('applied'),
    direction: z.enum(['up', 'down', 'none', 'mixed']),
    reason: z.string(),
    windows: z.array(z.string()),
    before: scalingValues,
    after: scalingValues,
    target: scalingValues.optional(),
    reasons: z.array(reason),
    requestId: z.string().optional(),
    idempotencyKey: z.string(),
  }),
});

type Parsed = { ok: true; value: unknown } | { ok: false };

/**
 * The last texts of each field, with what their schema made of them. A steady fleet stores the
 * same text in most fields of most pipes (applied, desired, the tick's decision and
 * recommendations, null, false, the state), so the schema runs once per distinct text rather than
 * once per pipe and evaluation. The result depends on the text alone; cached values are frozen,
 * shared by the records that read them. Bounded: a field's map starts over at PARSED_PER_FIELD texts.
 */
const parsed = new Map<RecordField, Map<string, Parsed>>();
const PARSED_PER_FIELD = 64;

/** The value of one stored field, or `invalid` when it is not JSON or does not fit its schema. */
export function parseField(field: RecordField, text: string): Parsed {
  // Numbers (instants, counts) and the ref differ from pipe to pipe: checked each time, they would
  // only crowd out the texts that repeat.
  const first = text.charCodeAt(0);
  if (field === 'ref' || first === 45 /* - */ || (first >= 48 && first <= 57) /* 0-9 */) return check(field, text);
  let known = parsed.get(field);
  if (!known) parsed.set(field, (known = new Map<string, Parsed>()));
  const hit = known.get(text);
  if (hit) return hit;
  const r = check(field, text);
  if (r.ok) deepFreeze(r.value);
  if (known.size >= PARSED_PER_FIELD) known.clear();
  known.set(text, r);
  return r;
}

function check(field: RecordField, text: string): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false };
  }
  const r = RECORD_FIELDS[field].safeParse(json);
  return r.success ? { ok: true, value: r.data } : { ok: false };
}

function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

/** A pause flag; `pipe`: the pipe's name when it was set (identity-keyed flags, operator-state.ts). */
export const StoredPause = z.object({ reason: z.string(), until: epochMs.optional(), pipe: z.string().optional() });
/** An override (policy/override.ts) and the pipe's name when it was set. */
export const StoredOverride = z.object({
  id: z.string(),
  pipe: z.string(),
  values: scalingValues,
  setAt: epochMs,
  until: epochMs,
  reason: z.string(),
  source: z.enum(['operator', 'manual']),
  mode: z.enum(['set', 'floor']),
  ramp: z.object({ step: scalingValues, everyMs: z.number().positive(), start: scalingValues }).optional(),
});
export const StoredServiceSchema = z.object({ state: ServiceState.nullable(), at: epochMs });

/** Whether two plain JSON values (parsed, or about to be stored: no Dates, no NaN) are the same
 *  JSON: keys in any order, an undefined member as absent and an undefined element as null, as
 *  JSON.stringify writes them. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i] ?? null, b[i] ?? null)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (x[k] === undefined) continue;
    n++;
    if (!sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (y[k] !== undefined) n--;
  return n === 0;
}

/** A value as stored: every text in it bounded (a 3 MB error page is kept as its first MAX_TEXT
 *  characters), so a record or flag stays small to read back on every evaluation and status. */
export function storedText(value: unknown): string {
  const text = JSON.stringify(value);
  // no text inside can be longer than the whole: the common case walks nothing
  return text.length <= MAX_TEXT ? text : JSON.stringify(boundedTexts(value));
}

/** A stored JSON value checked by `schema`, or null when absent or not what it should be. */
export function parseStored<T>(schema: z.ZodType<T>, text: string | null | undefined): T | null {
  if (!text) return null;
  try {
    const r = schema.safeParse(JSON.parse(text));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

/** One stored field by its schema, typed; null when absent, stored as null, or not what it should be. */
export function fieldValue<F extends RecordField>(
  field: F,
  text: string | null | undefined,
): z.infer<(typeof RECORD_FIELDS)[F]> | null {
  const schema: z.ZodType = RECORD_FIELDS[field];
  // parsed by the field's own schema, so the value is that schema's output
  return parseStored(schema, text) as z.infer<(typeof RECORD_FIELDS)[F]> | null;
}
