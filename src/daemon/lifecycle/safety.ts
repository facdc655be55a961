// The safety invariants of a change, checked in one place right before every PATCH that changes
// something (next-step.ts), whatever decide() said and whatever rule of economy led there: a value
// goes out only when the current config and the pipe's last seen state allow it.
import {
  clampToLimit,
  KIND_FIELDS,
  SCALABLE_PIPE_STATES,
  type ScalingField,
  type ScalingValues,
} from '../../api/index.js';
import type { Situation } from './steps.js';
import { trustedState, refuses } from './service-state.js';
import { refOf, type PipeRecord } from '../model/record.js';

/** Every SafetyViolation: the reason label of a change the safety check refused. */
export const SAFETY_VIOLATIONS = [
  'unseen',
  'ids_changed',
  'unsettled',
  'pipe_state',
  'paused',
  'endpoint_not_ready',
  'service_not_running',
  'field_of_other_kind',
  'out_of_bounds',
  'superseded',
] as const satisfies readonly SafetyViolation[];

/** Why a change must not be sent: each names the invariant it would break. */
export type SafetyViolation =
  /** The pipe's state was never seen: it may be Stopped, Completed, another kind. */
  | 'unseen'
  /** The record is of other ids than the config's pipe. */
  | 'ids_changed'
  /** The outcome of the last change is unknown: a read must settle it first. */
  | 'unsettled'
  /** The last seen state takes no scaling (Stopped, Failed, Completed, Paused, InternalError...). */
  | 'pipe_state'
  | 'paused'
  | 'endpoint_not_ready'
  | 'service_not_running'
  /** A field the pipe's kind does not have. */
  | 'field_of_other_kind'
  /** Outside the pipe's bounds in the current config, or the platform's ranges. */
  | 'out_of_bounds'
  /** A newer decision than the one this change comes from is stored. */
  | 'superseded';

/** Whether the pipe's last seen state takes a scaling change. */
export function takesScaling(rec: PipeRecord): boolean {
  return rec.state !== null && SCALABLE_PIPE_STATES.has(rec.state);
}

/**
 * The first invariant `body` would break if sent now, or null. `decidedAt` is the instant of the
 * decision the body comes from (the send-time decision: now).
 */
export function unsafeChange(
  rec: PipeRecord,
  sit: Situation,
  body: ScalingValues,
  now: number,
  decidedAt: number = now,
): SafetyViolation | null {
  if (rec.lastReadAt === null || rec.kind === null) return 'unseen';
  if (rec.ref !== refOf(sit.pipe)) return 'ids_changed';
  if (rec.unsettled !== null && rec.lastReadAt < rec.unsettled.at) return 'unsettled';
  if (!takesScaling(rec)) return 'pipe_state';
  const pause = sit.pause;
  if (pause && (pause.until === undefined || now < pause.until)) return 'paused';
  if (Object.values(rec.endpoints).some((s) => s !== 'Ready')) return 'endpoint_not_ready';
  if (refuses(trustedState(sit.service, now, sit.serviceTrustMs))) return 'service_not_running';
  if (rec.decidedAt !== null && rec.decidedAt > decidedAt) return 'superseded';
  const fields = KIND_FIELDS[rec.kind];
  for (const [f, v] of Object.entries(body) as [ScalingField, number][]) {
    if (!fields.includes(f)) return 'field_of_other_kind';
    const b = sit.pipe.bounds[f];
    if (clampToLimit(f, v) !== v || (b?.min !== undefined && v < b.min) || (b?.max !== undefined && v > b.max))
      return 'out_of_bounds';
  }
  return null;
}
