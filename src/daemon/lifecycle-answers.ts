// What an answer makes of a pipe's record, and what its next turn is: the second half of the
// lifecycle (lifecycle.ts has the first). Pure: the apply processor writes what these return,
// emits their events and enqueues their next step.
import {
  KIND_FIELDS,
  type PipeKind,
  type PipeScaling,
  type PipeState,
  type ReversePrivateEndpointStatus,
  type ScalingValues,
} from '../api/index.js';
import { afterChange, changeDirections } from '../policy/index.js';
import { REFUSALS } from './lifecycle.js';
import { changesFor, driftOf, isEmpty, mergeReported, sameValues } from './scaling-values.js';
import type { PipeRecord, StoredError } from './state-store.js';

/** What a read or a change answered about the pipe. */
export interface PipeAnswer {
  readonly kind: PipeKind | null;
  readonly state: PipeState;
  readonly scaling: PipeScaling;
  readonly endpointIds: readonly string[];
}

/** What comes after an answer: a turn on the key's queue (a read, or a change with its
 *  direction), a new evaluation at the same tick instant, or nothing. */
export type Then =
  | { readonly then: 'read' }
  | { readonly then: 'change'; readonly up: boolean }
  | { readonly then: 'evaluate' }
  | { readonly then: 'nothing' };

export interface Transition {
  readonly write: Partial<PipeRecord>;
  readonly next: Then;
  /** Fields that differ from what pipescaler last applied: changed behind its back. */
  readonly drift: { readonly expected: ScalingValues; readonly actual: ScalingValues } | null;
  /** A change whose outcome was unknown shows in the answer: it landed (late), it is not drift. */
  readonly landed?: { readonly sent: ScalingValues; readonly at: number };
}

/** How long a change whose outcome is unknown may still land: a read that finds its values later
 *  than this calls them drift. The platform carries out a request it received within seconds to
 *  minutes; a request a client gave up on was seen landing up to 6-9 minutes later. */
export const UNSETTLED_MS = 15 * 60_000;

const NOTHING: Then = { then: 'nothing' };

export interface ReadContext {
  readonly ref: string;
  /** The key's reads go round continuously (its period stretched to its read share). */
  readonly continuousReads: boolean;
  readonly dryRun: boolean;
}

/** A read's answer: the pipe as the platform has it now. */
export function afterRead(rec: PipeRecord, answer: PipeAnswer, now: number, ctx: ReadContext): Transition {
  const contact = rec.lastReadAt === null || rec.kind === null;
  // Statuses of endpoints the pipe no longer uses are dropped; the others are read again, each in
  // a turn of its own so the key's budget counts every request.
  const endpoints: Record<string, ReversePrivateEndpointStatus> = {};
  for (const id of answer.endpointIds) {
    const status = rec.endpoints[id];
    if (status !== undefined) endpoints[id] = status;
  }
  const applied = mergeReported(rec.applied, answer.scaling);
  // A change whose outcome was unknown: its values, found now, are that change landing (late).
  const u = rec.unsettled;
  const landed = u !== null && Object.entries(u.sent).every(([f, v]) => applied[f as keyof ScalingValues] === v);
  const expected = landed ? { ...(rec.lastApplied ?? {}), ...u.sent } : rec.lastApplied;
  const drift = !contact && answer.kind && expected ? driftOf(answer.kind, expected, applied) : null;
  const moved = !contact && !sameValues(applied, rec.applied);
  const write: Partial<PipeRecord> = {
    kind: answer.kind,
    state: answer.state,
    applied,
    endpoints,
    endpointsDue: answer.endpointIds,
    lastReadAt: now,
    readDue: false,
    lastError: null,
    authFailures: 0,
    ref: ctx.ref,
    // The platform has other values than the stored desire was decided against: decide again from
    // what it has, so the correction follows maxStep, cooldowns and each direction's rules.
    ...(moved ? { desired: null } : {}),
    // What a first contact finds is the reference for drift until pipescaler changes the pipe: a
    // pipe already at target would otherwise never see a change made by hand called drift.
    ...(contact ? { lastApplied: applied } : {}),
    ...(landed
      ? {
          lastApplied: expected,
          lastChange: afterChange(rec.applied, rec.lastChange, u.sent, u.at, applied).lastChange,
          unsettled: null,
        }
      : u !== null && now - u.at > UNSETTLED_MS
        ? { unsettled: null }
        : {}),
  };
  let next: Then;
  if (answer.endpointIds.length > 0) next = { then: 'read' };
  else if (contact || moved) next = { then: 'evaluate' };
  else
    next = pending(answer.kind, rec.desired, applied, ctx.dryRun) ?? (ctx.continuousReads ? { then: 'read' } : NOTHING);
  return {
    write,
    next,
    drift: drift ? { expected: expected ?? {}, actual: applied } : null,
    ...(landed ? { landed: { sent: u.sent, at: u.at } } : {}),
  };
}

/** A change's answer: the pipe with what was sent (or still its old values: applied later). */
export function afterSentChange(
  rec: PipeRecord,
  answer: PipeAnswer,
  sent: ScalingValues,
  now: number,
  ref: string,
): Transition {
  // The kind sent was known from a read; the answer's is the platform's word.
  const kind = answer.kind ?? rec.kind;
  const applied = mergeReported(rec.applied, answer.scaling, sent);
  // The answer is the pipe's read: a field not sent that differs from what we last applied
  // drifted behind our back.
  const notSent = rec.lastApplied
    ? Object.fromEntries(Object.entries(rec.lastApplied).filter(([f]) => !(f in sent)))
    : null;
  const drift = kind && notSent ? driftOf(kind, notSent, applied) : null;
  const write: Partial<PipeRecord> = {
    applied,
    lastApplied: applied,
    state: answer.state,
    kind,
    // Stamped by the evaluation step's rule (both directions when one PATCH moves fields both ways).
    lastChange: afterChange(rec.applied, rec.lastChange, sent, now, applied).lastChange,
    lastError: null,
    authFailures: 0,
    lastReadAt: now,
    readDue: false,
    wantedSince: null,
    unsettled: null,
    ref,
  };
  return {
    write,
    next: drift ? { then: 'evaluate' } : NOTHING,
    drift: drift ? { expected: notSent ?? {}, actual: applied } : null,
  };
}

/** A reverse private endpoint's status: the next one is read, or the pipe decided again. */
export function afterEndpoint(rec: PipeRecord, id: string, status: ReversePrivateEndpointStatus): Transition {
  const rest = rec.endpointsDue.filter((e) => e !== id);
  return {
    write: { endpoints: { ...rec.endpoints, [id]: status }, endpointsDue: rest },
    next: rest.length > 0 ? { then: 'read' } : { then: 'evaluate' },
    drift: null,
  };
}

/** What a failed request leaves in the record; `authFailures` counts 401/403 in a row (this one
 *  included), after `parkAfter` of which the pipe is parked until a reload. */
export function afterFailure(
  error: StoredError,
  authFailures: number,
  parkAfter: number,
): { readonly write: Partial<PipeRecord>; readonly parked: boolean; readonly refused: boolean } {
  const parked = (error.code === 'API_UNAUTHORIZED' || error.code === 'API_FORBIDDEN') && authFailures >= parkAfter;
  return {
    write: { lastError: error, ...(parked ? { parked: error } : {}) },
    parked,
    refused: REFUSALS.has(error.code),
  };
}

/** A desire that waited behind a read gets its own turn. */
function pending(
  kind: PipeKind | null,
  desired: ScalingValues | null,
  applied: ScalingValues,
  dryRun: boolean,
): Then | null {
  if (!kind || !desired || dryRun || KIND_FIELDS[kind].length === 0) return null;
  const body = changesFor(kind, desired, applied);
  if (isEmpty(body)) return null;
  return { then: 'change', up: changeDirections(applied, body).up };
}
