// The daemon's typed event map: the seam between the work and its telemetry (STYLE.md,
// graphile/worker). The daemon emits these; metrics and logs subscribe. Nothing in the daemon
// calls a metric or writes an audit line directly.
import { EventEmitter } from 'node:events';
import type { ApiErrorCode, ScalingValues } from '../api/index.js';
import type { Decision, Direction, Reason } from '../policy/types.js';

export type DecisionResult = 'applied' | 'skipped' | 'failed' | 'dry_run' | 'none';

export interface DaemonEvents {
  /** A cron tick fired and enqueued one evaluation per pipe. */
  tick: { at: number; pipes: number };
  /** One pipe evaluated. lagMs: from the tick instant to the evaluation. */
  evaluation: { pipe: string; policy: string; tickAt: number; durationMs: number; lagMs: number; decision: Decision };
  /** The outcome of a decision: one per evaluation that led somewhere, and one per apply. */
  decision: {
    pipe: string;
    direction: Direction;
    result: DecisionResult;
    /** Short machine reason for the metric label: window, baseline, cooldown, pipe_state, API_BAD_REQUEST... */
    reason: string;
    windows: readonly string[];
    before: ScalingValues;
    after: ScalingValues;
    reasons: readonly Reason[];
    requestId?: string;
  };
  /** Gauges: what the pipe should have and what the platform reports. */
  desired: { pipe: string; values: ScalingValues };
  applied: { pipe: string; values: ScalingValues };
  window: { pipe: string; windows: readonly string[] };
  paused: { pipe: string; paused: boolean; reason?: string; until?: number };
  /** An apply job started after waiting this long in its queue. */
  'apply:start': { pipe: string; key: string; queueWaitMs: number };
  /** BullMQ will retry the job: the daemon's clients do not retry themselves (retry: false), so
   *  this is the daemon's API retry; operation is the API operation that failed. */
  'apply:retry': { pipe: string; code: ApiErrorCode; attempt: number; delayMs: number; operation?: string };
  /** The key's queue was paused for a 429 until the platform's window resets. */
  'rate-limited': { key: string; resetMs: number };
  drift: { pipe: string; expected: ScalingValues; actual: ScalingValues };
  /** A pipe parked because its key keeps failing auth. */
  parked: { pipe: string; code: ApiErrorCode; message: string };
  'config:reload': { result: 'success' | 'failure'; errors?: readonly string[] };
  'redis:status': { ready: boolean };
  /** The API answered (any status) within the last reconcile interval. */
  'api:contact': { at: number };
}

/** A typed EventEmitter over DaemonEvents. */
export class DaemonEmitter extends EventEmitter {
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
