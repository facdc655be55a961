// The daemon's typed event map: the seam between the work and its telemetry (as in graphile/worker;
// docs/architecture.md#telemetry). The daemon emits these; metrics and logs subscribe. Nothing in the daemon
// calls a metric or writes an audit line directly.
import { EventEmitter } from 'node:events';
import type { ApiErrorCode, PipeKind, ScalingValues } from '../../api/index.js';
import type { Outcome } from '../../history/index.js';
import type { Decision, Direction, Reason } from '../../policy/index.js';
import type { StoredVerdict } from './record.js';
import type { ReadWhy } from './job-results.js';
import type { ConfigChanges } from './config-changes.js';

export type SampleSkip = 'in_force_at_answer' | 'unconfirmed' | 'outcome_unknown';

/** Why Redis' state is not to be trusted: its marker key is gone (data_lost), or maxmemory-policy
 *  lets it evict keys (eviction_policy). */
export const STATE_LOSS_CAUSES = ['data_lost', 'eviction_policy'] as const;
export type StateLossCause = (typeof STATE_LOSS_CAUSES)[number];

export type DecisionResult = 'applied' | 'skipped' | 'failed' | 'dry_run' | 'none';

/** The direction of an audited outcome: 'mixed' when one PATCH moves fields both ways. */
export type AuditDirection = Direction | 'mixed';

export interface DaemonEvents {
  /** A cron tick fired and enqueued one evaluation per pipe. */
  tick: { at: number; pipes: number };
  /** One pipe evaluated. lagMs: from the tick instant to the evaluation. */
  evaluation: { pipe: string; policy: string; tickAt: number; durationMs: number; lagMs: number; decision: Decision };
  /** The outcome of a decision: one per evaluation that led somewhere, and one per apply. */
  decision: {
    pipe: string;
    direction: AuditDirection;
    result: DecisionResult;
    /** Short machine reason (outcomeReason, src/policy/outcome-reason.ts): window, baseline, pipe_bound, lead_time, a skip code, an API error code
     *  (docs/decisions.md#the-reason-label-of-the-decisions-metric). */
    reason: string;
    windows: readonly string[];
    before: ScalingValues;
    after: ScalingValues;
    /** What the policy wants in the end (the recommendation, before behavior's steps), where known. */
    target?: ScalingValues;
    reasons: readonly Reason[];
    requestId?: string;
    /** A change's Idempotency-Key: one per change sent (a retry of the same body keeps it). */
    idempotencyKey?: string;
    /** An applied change whose outcome was reported already: a read found it in force before its
     *  late 200 came (landed_late). The 200 is its audit line, not a second outcome. */
    outcomeReported?: 'landed_late';
    /** A change's line written by a later evaluation or turn, not by its sender (killed between
     *  recording the 200 and writing the line; lifecycle/owed-line.ts): when the 200 was recorded. */
    answeredAt?: number;
    /** A failed read, not a change: why it was made, and what failed ("the confirmation read failed"). */
    read?: ReadWhy | 'endpoint';
    message?: string;
  };
  /**
   * What happened to a pipe, in the vocabulary of src/history/outcomes.ts: history and notifications
   * read only this. outcome-bridge.ts derives it from decision, paused, drift, parked and
   * config:reload and verdict; an outcome with no such event (unsettled, landed_late,
   * unconfirmed...) is emitted as this directly by the code that knows it.
   */
  outcome: Outcome;
  /** A change of unknown outcome (its answer lost: timed out, cut, its sender gone) that a read
   *  shows in force: one per change, its `landed_late` outcome. The audit log's line of it. */
  'change:landed': { pipe: string; sent: ScalingValues; sentAt: number; at: number; idempotencyKey?: string };
  /** A change of unknown outcome that a read settled without knowing whether it landed (its
   *  values in force but explained otherwise, or never shown in time; lifecycle/transition.ts
   *  `unknown`), or that the intent of a later change replaced before any read showed it (work/turn-change.ts
   *  reportReplaced): its answer, if one came, went to a sender that did not record it. The audit log's
   *  line of it (result outcome_unknown); no outcome, its `unsettled` one said it already or its
   *  late 200 is its `applied`. */
  'change:unknown': { pipe: string; sent: ScalingValues; sentAt: number; at: number; idempotencyKey?: string };
  /** A window start's verdict for a pipe (verdicts.ts): met, late (lateMs), missed (reason) or
   *  excluded (reason: paused, override, freeze, dry_run). Once per pipe and start, fleet-wide. */
  verdict: StoredVerdict & { pipe: string };
  /** A notification was delivered to a sink, or given up on after its last attempt (dead letter). */
  'notify:delivery': { sink: string; result: 'delivered' | 'retry' | 'dead'; events: number };
  /** Gauges: what the pipe should have and what the platform reports. */
  desired: { pipe: string; values: ScalingValues };
  applied: { pipe: string; values: ScalingValues };
  window: { pipe: string; windows: readonly string[] };
  paused: { pipe: string; paused: boolean; reason?: string; until?: number };
  /** A change was seen in force (a read, or its own answer, showed its target in a state that takes
   *  scaling), once per confirmed change: actuationMs = confirmedAt - sentAt, from the first send
   *  of this target to that answer (docs/architecture.md#every-change-is-confirmed). */
  confirmed: {
    pipe: string;
    kind: PipeKind;
    values: ScalingValues;
    sentAt: number;
    confirmedAt: number;
    /** Its actuation sample (confirmation.ts actuationSample: the read's wait in the queue not
     *  counted); when it is none, the time from its first send to the answer that showed it. */
    actuationMs: number;
    /** The sample's lower end: from the first send to the last read before it that did not show
     *  the target (the propagation is longer); absent when no read came before it, or no sample. */
    actuationLowMs?: number;
    /** Why it is not an actuation sample (confirmation.ts actuationSample); absent when it is one. */
    notSample?: SampleSkip;
  };
  /** A change went unconfirmed (reason limit: evaluate.actuation.max passed with its target not in
   *  force), or stopped being so (confirmed after all, replaced by a new target, set aside by a
   *  change made by hand, or a reload): once per change of state. */
  unconfirmed: {
    pipe: string;
    kind: PipeKind | null;
    unconfirmed: boolean;
    reason: 'limit' | 'confirmed' | 'new_target' | 'drift' | 'reload';
    target: ScalingValues;
    sentAt: number;
    at: number;
    /** Re-sends made before it went unconfirmed (a first time: 0, and it is sent once more). */
    resends?: number;
  };
  /** Whether the pipe's last change is unconfirmed, as each evaluation finds it in the shared state
   *  (every replica's gauge follows the pipe, not only the replica that read it). */
  'unconfirmed:seen': { pipe: string; unconfirmed: boolean };
  /** A change's PATCH was answered; queueWaitMs runs from the first decision that wanted the change
   *  (not only the last queue wait of a re-queued turn). */
  'apply:start': { pipe: string; key: string; queueWaitMs: number };
  /** BullMQ will retry the job: the daemon's clients do not retry themselves (retry: false), so
   *  this is the daemon's API retry; operation is the API operation that failed. */
  'apply:retry': { pipe: string; code: ApiErrorCode; attempt: number; delayMs: number; operation?: string };
  /** A pipe's calls began failing (backingOff: its next attempts wait exponentially longer, up to
   *  its reconcile period, code: the first failure's) or one was answered again (backingOff false,
   *  failures: how many failed in a row). Once per change of state. */
  backoff: { pipe: string; backingOff: boolean; failures: number; code?: ApiErrorCode; delayMs?: number };
  /** The key's queue was paused for a 429 until the platform's window resets. */
  'rate-limited': { key: string; resetMs: number };
  /** A request of the key was not written: its budget unit expired before its first byte (the
   *  process busy between the budget's mark and the write, spend.ts UnitExpired). Nothing went out;
   *  the job went back to its place in the queue (a key check was skipped). */
  'budget:unit-expired': { key: string };
  /** A 429's X-RateLimit-Reset was missing, unparsable or beyond twice the key's window (60 s at
   *  most): the key waited one window (usedMs) instead. value: what the header said (cut). */
  'rate-limit:reset-invalid': { key: string; value: string; usedMs: number };
  /** A scaling answer was applied although its envelope did not fit (a requestId not a uuid). */
  'api:envelope-issue': { pipe: string; key: string; issue: string };
  /** A change made by hand; onDrift: what the policy's `behavior.onDrift` made of it (drift.ts). */
  drift: { pipe: string; expected: ScalingValues; actual: ScalingValues; onDrift?: 'revert' | 'hold' | 'adoptAsFloor' };
  /** An override came into force (set, or superseded an older one) or went out of it (expired,
   *  cancelled), as the evaluations see it; `source` manual: onDrift's. One per change, fleet-wide. */
  override: {
    pipe: string;
    action: 'set' | 'superseded' | 'expired' | 'cancelled';
    id: string;
    source: 'operator' | 'manual';
    values: ScalingValues;
    until: number;
    reason: string;
  };
  /** A freeze began holding a pipe's change back (held: the freezes, what they hold, until when)
   *  or stopped (released: the freeze ended or the change is no longer wanted). Once per change. */
  freeze:
    | { pipe: string; action: 'held'; freezes: readonly string[]; held: ScalingValues; until: number }
    | { pipe: string; action: 'released'; freezes: readonly string[] };
  /** What a key's request budget affords under the config in force (at start and each reload). */
  'budget:plan': {
    key: string;
    pipes: number;
    reconcileMs: number;
    stretched: boolean;
    scaleDownBoundMs: number;
    text: string;
  };
  /** Fields of a pipe's record in Redis that did not parse: dropped, and the pipe is read again. */
  'state:invalid': { pipe: string; fields: readonly string[] };
  /** A pipe whose reads failed (the code) was read again successfully. */
  'read:recovered': { pipe: string; code: string };
  /** A pipe parked because its key keeps failing auth. */
  parked: { pipe: string; code: ApiErrorCode; message: string };
  /** A reload: on success what it changed (names only), on failure why it was refused. */
  'config:reload': { result: 'success' | 'failure'; errors?: readonly string[]; changes?: ConfigChanges };
  /** cause: why the connection failed, when it says more than an outage (a TLS mismatch); where:
   *  the daemon's Redis (address and db, never a password). */
  'redis:status': { ready: boolean; cause?: string; where?: string };
  /** Redis still cannot be reached, downForMs after it went (redis-outage.ts: said with back-off). */
  'redis:waiting': { where: string; downForMs: number };
  /** Redis lost the daemon's state, or may (an eviction policy): scaling is held while lost. */
  'redis:state': { lost: boolean; cause?: StateLossCause };
  /** This replica queried Prometheus for a metric policy's tick (one per policy per tick, fleet-wide). */
  'metric:query': { policy: string; durationMs: number; samples?: number; error?: string };
  /** This replica made a forecast policy's forecast for a refresh period (one per policy and period, fleet-wide). */
  'forecast:made': { policy: string; durationMs: number; series?: number; error?: string };
  /** A forecast policy's forecast for a refresh period, as this replica read it: its series and score, or why there is none. */
  'forecast:status': { policy: string; at: number; series?: number; peakError?: number | null; error?: string };
  /** A metric policy's last good result is this old (null: never), read once per policy and tick. */
  'metric:age': { policy: string; lastGoodAgeMs: number | null };
  /** The API answered (any status). */
  'api:contact': { at: number };
  /** A key checked in with the platform (key-checks.ts), or skipped it for want of budget. */
  'api:check': { key: string; result: 'ok' | 'failed' | 'no_budget' };
  /** How many API keys key-checks.ts checks in for (keys with pipes, less those refused the list):
   *  /readyz wants an answer within two check intervals only while one does. */
  'api:checking': { keys: number };
  /** A key's check was refused (401: the key; 403: the services list), or the key was answered a
   *  2xx again (refused: false). Said on each change only (key-auth.ts). */
  'api:key': { key: string; refused: boolean; status?: number; code?: string };
}

/**
 * Listeners one event of the daemon's emitter may have before Node warns of a leak
 * (MaxListenersExceededWarning; EventEmitter's default is 10). `config:reload` has one per
 * telemetry module (six metric bindings, the audit log, readiness), the outcome bridge and the
 * CLI's own: 10 in a daemon as `pipescaler run` starts it, by design, so the default warned at the
 * next one (a test's or an embedding program's observer, a new metric module), which is no leak.
 * Listeners are subscribed once per daemon, never per pipe, key or reload: a limit a few times
 * today's count still catches a listener added per reload or per pipe.
 */
export const DAEMON_MAX_LISTENERS = 40;

/** A typed EventEmitter over DaemonEvents. */
export class DaemonEmitter extends EventEmitter {
  constructor() {
    super();
    this.setMaxListeners(DAEMON_MAX_LISTENERS);
  }

  override emit<K extends keyof DaemonEvents>(event: K, payload: DaemonEvents[K]): boolean {
    return super.emit(event, payload);
  }
  override on<K extends keyof DaemonEvents>(event: K, listener: (payload: DaemonEvents[K]) => void): this {
    return super.on(event, listener);
  }
  override off<K extends keyof DaemonEvents>(event: K, listener: (payload: DaemonEvents[K]) => void): this {
    return super.off(event, listener);
  }
}
