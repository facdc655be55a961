// A pipe's lifecycle in words: the stages a pipe's record puts it in, the steps its next turn may
// take, and the situation (everything besides the record and the clock) the next step depends on.
// next-step.ts gives the step; answers.ts what an answer makes of the record.
import type { ScalingValues } from '../../api/index.js';
import type { Decision, ActuationSettings, Direction, MetricReading, PipeConfig, Policy } from '../../policy/index.js';
import { ACTUATION_DEFAULTS } from '../../policy/index.js';
import { confirmTiming, type ConfirmTiming } from './confirmation.js';
import type { ReadWhy } from '../model/job-results.js';
import type { PauseFlag, StoredOverrideValue, StoredService } from '../model/record.js';

/**
 * Where a pipe is, read off its stored record (the table in docs/architecture.md):
 * - unseen: never read (or forgotten: a lost Redis, ids changed; or a record that names no ids).
 *   Its state is unknown, so its next step is a read, never a change.
 * - moved: the record is of other ids than the config's pipe (a reload changed them): forget it.
 * - unsettled: a change's outcome is unknown (timed out, cut, an unreadable 2xx), or its request
 *   is on its way (its intent, stored before it goes out): a read settles it before anything else,
 *   once its request's time has run out; no other change meanwhile, and never the same again.
 * - parked: 401/403 again and again; nothing until a reload.
 * - refused: a 400/404/424 answered; its changes wait for its next reconcile read.
 * - endpoints: read, and the reverse private endpoints it uses are still to read (one per turn).
 * - confirming: a change was answered 200 and no read has shown its target in force yet: a
 *   confirmation read at the expected propagation, then with back-off up to the limit; meanwhile
 *   decide() decides against the target (the same change is never sent again), a new target goes
 *   out at once, and the old values are not drift. Past the limit: unconfirmed, sent once more.
 * - seen: read, its state takes scaling: decide() says whether to change it.
 * - unscalable: read, its state takes no scaling (Stopped, Failed...): skipped, read at reconcile.
 */
export const STAGES = [
  'unseen',
  'moved',
  'unsettled',
  'parked',
  'refused',
  'endpoints',
  'confirming',
  'seen',
  'unscalable',
] as const;
export type Stage = (typeof STAGES)[number];

/** Why a turn sends nothing although the pipe may be scaled. */
export type WaitReason =
  'at_target' | 'dry_run' | 'refused' | 'state_lost' | 'confirming' | 'unconfirmed' | 'backoff' | 'sending';

/** Why the pipe must not be scaled now: decide()'s skip codes, parking, or a safety violation. */
export type SkipReason = string;

/** What the pipe's next turn does. */
export type NextStep =
  | { readonly do: 'forget' }
  | { readonly do: 'read'; readonly why: ReadWhy }
  | { readonly do: 'read_endpoint'; readonly endpointId: string }
  /** The service's state is unknown or old: list it first, then decide the change again. */
  | { readonly do: 'list_services'; readonly direction: Direction }
  | { readonly do: 'change'; readonly body: ScalingValues; readonly direction: Direction }
  | { readonly do: 'wait'; readonly reason: WaitReason }
  | { readonly do: 'skip'; readonly reason: SkipReason };

/** Everything besides the record and the clock that the next step depends on. */
export interface Situation {
  readonly pipe: PipeConfig;
  readonly policy: Policy;
  readonly dryRun: boolean;
  /** The pause in force: the config's, else the pipe's own, else the fleet's. */
  readonly pause: PauseFlag | null;
  /** The service's state as last stored (a services list, or a 424's "Current state"). */
  readonly service: StoredService | null;
  /** How long a stored service state is trusted (evaluate.reconcile). */
  readonly serviceTrustMs: number;
  /** The pipe's reconcile period (evaluate.reconcile stretched to its key's read share). */
  readonly reconcileMs: number;
  /** How long after its last read the pipe's next read is due (lead-plans.ts readDueAfterMs). */
  readonly readDueAfterMs: number;
  readonly metric?: MetricReading;
  readonly leadUntil?: number;
  /** Why Redis' state is not to be trusted (redis-guard.ts), or null: no change goes out then. */
  readonly stateLost: string | null;
  /** The pipe's override (operator-state.ts), ended or not: decide() applies it while in force. */
  readonly override?: StoredOverrideValue | null;
  /**
   * Who asks: the tick's evaluation finds a reconcile read due by time (and marks it in the
   * record); a turn on the apply queue reads only what an evaluation marked, so a key whose reads
   * go round continuously (due at once) reads each pipe once per round, not in a loop.
   */
  readonly asker: 'tick' | 'turn';
  /** The turn is a job's retry, which the pipe's backoff scheduled (backingOff does not hold it). */
  readonly retry?: boolean;
  /** evaluate.actuation (default ACTUATION_DEFAULTS): the confirmation's expected time and limit. */
  readonly actuation?: ActuationSettings;
  /** The pipe's measured actuation (p95 of its own or its kind's samples), once there are enough:
   *  its confirmation read is due then rather than at evaluate.actuation.expected. */
  readonly measuredActuationMs?: number;
  /** When this replica last reloaded its config: an unconfirmed change is sent once more after. */
  readonly reloadedAt?: number;
}

/** When the situation's confirmation reads go, and its limit. */
export function timingOf(sit: Pick<Situation, 'actuation' | 'measuredActuationMs'>): ConfirmTiming {
  return confirmTiming(sit.actuation ?? ACTUATION_DEFAULTS, sit.measuredActuationMs);
}

export interface Next {
  readonly stage: Stage;
  readonly step: NextStep;
  /** decide()'s answer, for the stages that decide (seen, unscalable, refused once read). */
  readonly decision?: Decision;
  readonly recommendations?: readonly { readonly at: number; readonly values: ScalingValues }[];
  /** The pipe's reconcile read is due (the evaluation marks it, so the turn reads it). */
  readonly readDue: boolean;
}
