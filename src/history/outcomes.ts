// The outcome vocabulary: what the daemon did to a pipe (or did not do, and why), as one event
// shape that the history recorder and the notifier both take. The daemon emits it as its `outcome`
// event (src/daemon/model/events.ts); nothing downstream reads the daemon's other events.
//
// Adding an outcome: append its name to OUTCOMES with a severity in OUTCOME_SEVERITY (tsc refuses
// a name without one), emit `{ outcome: '<name>', pipe, at, reason, ... }` on the daemon's emitter,
// and add a line for it in the README's outcome table. History stores it and sinks can filter on
// it with no other change; the stored form (codec.ts) keeps any name.
import type { ScalingValues } from '../api/index.js';

export const OUTCOMES = [
  /** A change the platform answered 2xx. */
  'applied',
  /** A change or read that failed for good (after the daemon's retries); reason: the API error code. */
  'failed',
  /** A change sent whose outcome is unknown (timed out or cut after it was sent, or a 2xx whose
   *  answer could not be read); reason: the API error code. A read settles it before any other change. */
  'unsettled',
  /** An unsettled change that the read settling it (or a later one) shows carried out. */
  'landed_late',
  /** A change answered 200 and not in force within evaluate.actuation.max; reason: not_at_target. */
  'unconfirmed',
  /** A change wanted but not made; reason: the skip code. Recorded when the reason changes. */
  'skipped',
  /** A change decided under dryRun: never sent. */
  'dry_run',
  'paused',
  'resumed',
  /** A pause with `--for` ran out. */
  'pause_expired',
  /** The pipe's API key keeps failing auth: nothing is sent for it until a reload. */
  'parked',
  /** The platform's values differ from what was applied (someone scaled it by hand). */
  'drift_found',
  /** The first change applied after a drift. */
  'drift_corrected',
  /** A window's at-target verdict (reason: met, missed...). */
  'verdict',
  /** A reload changed the pipe (policy, bounds, key...). */
  'reload',
  /** An operator's override or freeze started or ended. */
  'override',
  'freeze',
  /** `pipescaler notify test`: never stored in history. */
  'test',
] as const;

export type OutcomeName = (typeof OUTCOMES)[number];

export const SEVERITIES = ['info', 'warning', 'error'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const OUTCOME_SEVERITY: Readonly<Record<OutcomeName, Severity>> = {
  applied: 'info',
  failed: 'error',
  unsettled: 'warning',
  landed_late: 'warning',
  unconfirmed: 'warning',
  skipped: 'info',
  dry_run: 'info',
  paused: 'warning',
  resumed: 'info',
  pause_expired: 'info',
  parked: 'error',
  drift_found: 'warning',
  drift_corrected: 'info',
  verdict: 'info',
  reload: 'info',
  override: 'warning',
  freeze: 'warning',
  test: 'info',
};

/** One thing that happened to one pipe: the payload of the daemon's `outcome` event. */
export interface Outcome {
  readonly pipe: string;
  readonly outcome: OutcomeName;
  /** Epoch ms. */
  readonly at: number;
  /** Machine reason: window, baseline, pipe_bound, lead_time, a skip code (paused, cooldown...), an API error code. */
  readonly reason: string;
  /** What the platform had, what it has after, what the policy wanted. */
  readonly before?: ScalingValues;
  readonly after?: ScalingValues;
  readonly target?: ScalingValues;
  /** The windows in force. */
  readonly windows?: readonly string[];
  /** The API key's config name. */
  readonly key?: string;
  /** The platform's requestId of the call, where there was one. */
  readonly requestId?: string;
  /** A short human text (a pause's reason, a verdict's detail); may be cut when stored. */
  readonly message?: string;
  /** Overrides OUTCOME_SEVERITY (a verdict that missed its target is a warning). */
  readonly severity?: Severity;
}

export function severityOf(o: Pick<Outcome, 'outcome' | 'severity'>): Severity {
  return o.severity ?? OUTCOME_SEVERITY[o.outcome];
}

export function isOutcomeName(s: string): s is OutcomeName {
  return (OUTCOMES as readonly string[]).includes(s);
}
