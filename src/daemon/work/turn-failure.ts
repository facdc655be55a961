// How an API failure of an apply or read job turns into BullMQ's retry semantics:
// 429 -> pause the key's queue until the platform's window resets, no attempt spent;
// 5xx, timeout, network, a read's answer that does not parse -> throw, BullMQ retries after the pipe's
//   backoff (backoff.ts: from its key's window, doubling, up to its reconcile period), chosen (and logged)
//   here; no new turn is queued before it; reported failed once per run of failures (REPORT_AT);
// 400/401/403/404/424 -> UnrecoverableError at once, reason recorded; 400/404/424 wait for the next reconcile read (evaluate.ts), 401/403 come back next tick;
// 424 -> the service's state is recorded, so every pipe of it waits (turn.ts reads it again later);
// 401/403 N times in a row -> the pipe is parked until a reload.
// What it records goes in only while Redis' marker names the state the turn's snapshot read (one
// script a write, state-scripts.ts): a failure answered after Redis lost that state records nothing,
// and the job ends (the tick that notices the loss has the pipe read again).
import { RateLimitError, UnrecoverableError, type Job } from 'bullmq';
import { isApiError, ServiceState, type ApiError, type ScalingValues } from '../../api/index.js';
import type { PipeConfig, Reason } from '../../policy/index.js';
import { boundedResetMs } from '../lanes/budget.js';
import type { DaemonContext } from './context.js';
import type { AuditDirection } from '../model/events.js';
import { afterFailure } from '../lifecycle/answers.js';
import { afterCallFailure } from '../lifecycle/backoff.js';
import type { ReadWhy } from '../model/job-results.js';
import type { ApplyJob } from '../lanes/queues.js';
import type { PipeRecord } from '../model/record.js';
import type { KeyLane } from '../lanes/lane.js';
import { holdQueue, UnitExpired } from '../lanes/spend.js';

export interface ApplyOutcome {
  readonly pipe: string;
  readonly direction: AuditDirection;
  readonly windows: readonly string[];
  readonly before: ScalingValues;
  readonly after: ScalingValues;
  readonly reasons: readonly Reason[];
  /** A change: the Idempotency-Key it was sent with (its audit lines name it). */
  readonly idempotencyKey?: string;
  /** A read failed, not a change: why it was made (the audit line says "pipe read failed"). */
  readonly read?: ReadWhy | 'endpoint';
  readonly message?: string;
}

/** A pipe's calls failing in a row are reported failed (an audit line, pipescaler_pipe_failing,
 *  PipescalerApplyFailing) at the third: once per run of failures, whatever job or kind of call
 *  (change or read) it is, and after two retries (a key's window and twice that) that did not cure
 *  it. A call that answers ends the run (read:recovered, or the change applied, clears the metric). */
export const REPORT_AT = 3;

export async function handleApiFailure(
  ctx: DaemonContext,
  job: Job<ApplyJob>,
  pipe: PipeConfig,
  lane: KeyLane,
  /** The state the turn's snapshot read (redis-guard.ts stateOfMarker): its writes need it still. */
  state: string,
  err: unknown,
  outcome: ApplyOutcome | null,
  /** For reads: the code the pipe already failed with; the same refusal again is not reported again. */
  previousCode?: string | null,
): Promise<never> {
  const report = (o: ApplyOutcome | null, code: string, requestId: string | undefined) =>
    reportFailed(ctx, o, code, requestId, pipe);
  const at = ctx.now();
  // No unit of the key's budget (spend.ts): the job waits for the key's next window, nothing failed.
  // A unit that expired before the write (UnitExpired) is counted: the process was too busy to send.
  if (err instanceof RateLimitError) {
    if (err instanceof UnitExpired) ctx.emitter.emit('budget:unit-expired', { key: lane.keyName });
    throw err;
  }
  if (!isApiError(err)) {
    await ctx.store.write(pipe.name, { lastError: { at, code: 'INTERNAL', message: String(err) } }, state);
    throw err;
  }
  if (err.status !== undefined) ctx.emitter.emit('api:contact', { at });

  if (err.code === 'API_RATE_LIMITED') return pauseLane(ctx, lane, err);

  const lastError = {
    at,
    code: err.code,
    message: err.platformError ?? err.message,
    ...(err.requestId ? { requestId: err.requestId } : {}),
  };
  if (!(await ctx.store.write(pipe.name, { lastError }, state))) throw new StateLost();
  // "Service is not running. Current state: idle": every pipe of that service waits now, until a
  // services list read a reconcile period later finds it running (turn.ts).
  const serviceState =
    err.code === 'API_FAILED_DEPENDENCY'
      ? ServiceState.safeParse(/Current state: (\w+)/.exec(lastError.message)?.[1])
      : null;
  if (serviceState?.success) {
    const services = [{ id: pipe.serviceId, state: serviceState.data }];
    if (!(await ctx.store.writeServices(pipe.organizationId, services, at, state))) throw new StateLost();
  }

  // A read whose 200 does not parse (a proxy's page, a truncated answer) may read well next time:
  // it backs off like a 5xx rather than being asked again every tick. (A change's is unsettled.)
  if (err.retriable || err.code === 'API_BAD_RESPONSE') {
    // The pipe backs off: its next attempt (this job's retry, or the next turn an evaluation
    // queues) waits from its key's window, doubling, up to its reconcile period.
    const failures = await ctx.store.increment(pipe.name, 'failures', state);
    if (failures === null) throw new StateLost();
    const backoff = afterCallFailure(failures, at, ctx.reconcileMsFor(pipe), lane.budget.limit.perMs);
    if (!(await ctx.store.write(pipe.name, backoff.write, state))) throw new StateLost();
    if (failures === 1)
      ctx.emitter.emit('backoff', {
        pipe: pipe.name,
        backingOff: true,
        code: err.code,
        failures,
        delayMs: backoff.delayMs,
      });
    if (failures === REPORT_AT) report(outcome, err.code, err.requestId);
    const attempt = job.attemptsMade + 1;
    if (attempt < (job.opts.attempts ?? 1)) {
      const delayMs = backoff.delayMs;
      // The Worker's backoff strategy (chosenBackoff) waits exactly this.
      Object.assign(err, { retryDelayMs: delayMs });
      ctx.emitter.emit('apply:retry', {
        pipe: pipe.name,
        code: err.code,
        attempt,
        delayMs,
        ...(err.operation ? { operation: err.operation } : {}),
      });
    }
    throw err;
  }

  if (err.code === 'API_UNAUTHORIZED' || err.code === 'API_FORBIDDEN') {
    // the parking rule is the lifecycle's (answers.ts afterFailure); the count is Redis' (atomic)
    const authFailures = await ctx.store.increment(pipe.name, 'authFailures', state);
    if (authFailures === null) throw new StateLost();
    const after = afterFailure(lastError, authFailures, ctx.parkAfter);
    if (after.parked) {
      if (!(await ctx.store.write(pipe.name, after.write, state))) throw new StateLost();
      // The log line ("pipe parked: ... fix the key and reload") is written from this event.
      ctx.emitter.emit('parked', { pipe: pipe.name, code: err.code, message: lastError.message });
    }
  }
  if (previousCode === undefined || previousCode !== err.code) report(outcome, err.code, err.requestId);
  throw new UnrecoverableError(`${err.code}: ${lastError.message}`);
}

/** Redis lost the state the turn read since its snapshot: nothing of the failure is recorded, and
 *  the job is not retried (the tick that notices the loss has the pipe read again). */
class StateLost extends UnrecoverableError {
  constructor() {
    super('state_lost: Redis lost the state this turn read; its failure is not recorded');
  }
}

/**
 * A 429: the key's whole lane waits for the platform's window; the job keeps its attempt. The
 * wait is X-RateLimit-Reset bounded by twice the key's window and 60 s; a larger (an epoch time
 * read as seconds once froze a key for 56 years) or unparsable one is the window, and reported.
 */
export async function pauseLane(ctx: DaemonContext, lane: KeyLane, err: ApiError): Promise<never> {
  const perMs = lane.budget.limit.perMs;
  const raw = err.rateLimit ? err.rateLimit.resetSeconds : err.retryAfterSeconds;
  const bounded = boundedResetMs(raw, perMs);
  await holdQueue(lane, bounded.ms);
  if (!bounded.valid) {
    ctx.emitter.emit('rate-limit:reset-invalid', {
      key: lane.keyName,
      value: err.rateLimit?.resetInvalid ?? (raw === undefined ? 'missing' : String(raw)),
      usedMs: bounded.ms,
    });
  }
  ctx.emitter.emit('rate-limited', { key: lane.keyName, resetMs: bounded.ms });
  throw new RateLimitError();
}

/** A failed read (first contact, settle, confirmation, reconcile, endpoint) is a failed outcome
 *  too, so the pipe's failure shows in pipescaler_decisions_total and PipescalerApplyFailing (a
 *  404 pipe id, a platform that answers no read); its audit line says "pipe read failed". */
function reportFailed(
  ctx: DaemonContext,
  outcome: ApplyOutcome | null,
  code: string,
  requestId: string | undefined,
  pipe: PipeConfig,
): void {
  const o = outcome ?? { pipe: pipe.name, direction: 'none' as const, windows: [], before: {}, after: {}, reasons: [] };
  ctx.emitter.emit('decision', { ...o, result: 'failed', reason: code, ...(requestId ? { requestId } : {}) });
}

const READS: Record<ReadWhy, string> = {
  first_contact: 'first contact',
  settle: 'the read that settles a change of unknown outcome',
  confirm: 'the confirmation read',
  reconcile: 'the reconcile read',
};

/** What a failed read reports: nothing changed, the read's reason (decide()'s reasons are the last decision's). */
export function readOutcome(pipe: PipeConfig, rec: PipeRecord, why: ReadWhy | 'endpoint'): ApplyOutcome {
  return {
    pipe: pipe.name,
    direction: 'none',
    windows: rec.lastDecision?.windows ?? [],
    before: rec.applied,
    after: rec.applied,
    reasons: [],
    read: why,
    message: `${why === 'endpoint' ? 'the read of a reverse private endpoint' : READS[why]} failed`,
  };
}
