// How an API failure of an apply or read job turns into BullMQ's retry semantics:
// 429 -> pause the key's queue until the platform's window resets, no attempt spent;
// 5xx, timeout, network -> throw, BullMQ retries with exponential backoff and jitter;
// 400/401/403/404/424 -> UnrecoverableError at once, reason recorded; 400/404/424 wait for the next reconcile read (evaluate.ts), 401/403 come back next tick;
// 424 -> the service's state is recorded, so every pipe of it waits (apply.ts reads it again later);
// 401/403 N times in a row -> the pipe is parked until a reload.
import { RateLimitError, UnrecoverableError, type Job } from 'bullmq';
import { isApiError, ServiceState, type ApiError, type ScalingValues } from '../api/index.js';
import type { Direction, PipeConfig, Reason } from '../policy/types.js';
import type { DaemonContext, KeyLane } from './context.js';
import type { ApplyJob } from './queues.js';

export interface ApplyOutcome {
  readonly pipe: string;
  readonly direction: Direction;
  readonly windows: readonly string[];
  readonly before: ScalingValues;
  readonly after: ScalingValues;
  readonly reasons: readonly Reason[];
}

/** Without X-RateLimit-Reset, wait one platform window. */
const DEFAULT_RESET_MS = 10_000;

export async function handleApiFailure(
  ctx: DaemonContext, job: Job<ApplyJob>, pipe: PipeConfig, lane: KeyLane, err: unknown, outcome: ApplyOutcome | null,
): Promise<never> {
  const at = ctx.now();
  if (!isApiError(err)) {
    await ctx.store.write(pipe.name, { lastError: { at, code: 'INTERNAL', message: String(err) } });
    throw err;
  }
  if (err.status !== undefined) ctx.emitter.emit('api:contact', { at });

  if (err.code === 'API_RATE_LIMITED') return pauseLane(ctx, lane, err);

  const lastError = {
    at, code: err.code, message: err.platformError ?? err.message, ...(err.requestId ? { requestId: err.requestId } : {}),
  };
  await ctx.store.write(pipe.name, { lastError });
  // "Service is not running. Current state: idle": every pipe of that service waits now, until a
  // services list read a reconcile period later finds it running (apply.ts).
  const serviceState = err.code === 'API_FAILED_DEPENDENCY' ? ServiceState.safeParse(/Current state: (\w+)/.exec(lastError.message)?.[1]) : null;
  if (serviceState?.success) await ctx.store.writeServices(pipe.organizationId, [{ id: pipe.serviceId, state: serviceState.data }], at);

  if (err.retriable) {
    const attempt = job.attemptsMade + 1;
    const final = attempt >= (job.opts.attempts ?? 1);
    if (!final) {
      const delayMs = 1_000 * 2 ** (attempt - 1);
      ctx.emitter.emit('apply:retry', {
        pipe: pipe.name, code: err.code, attempt, delayMs, ...(err.operation ? { operation: err.operation } : {}),
      });
    } else {
      reportFailed(ctx, outcome, err.code, err.requestId);
    }
    throw err;
  }

  if (err.code === 'API_UNAUTHORIZED' || err.code === 'API_FORBIDDEN') {
    const failures = await ctx.store.increment(pipe.name, 'authFailures');
    if (failures >= ctx.parkAfter) {
      await ctx.store.write(pipe.name, { parked: lastError });
      // The log line ("pipe parked: ... fix the key and reload") is written from this event.
      ctx.emitter.emit('parked', { pipe: pipe.name, code: err.code, message: lastError.message });
    }
  }
  reportFailed(ctx, outcome, err.code, err.requestId);
  throw new UnrecoverableError(`${err.code}: ${lastError.message}`);
}

/** A 429: the key's whole lane waits for the platform's window; the job keeps its attempt. */
export async function pauseLane(ctx: DaemonContext, lane: KeyLane, err: ApiError): Promise<never> {
  const resetMs = Math.max(1, Math.ceil((err.retryAfterSeconds ?? DEFAULT_RESET_MS / 1000) * 1000));
  await lane.queue.rateLimit(resetMs);
  ctx.emitter.emit('rate-limited', { key: lane.keyName, resetMs });
  throw new RateLimitError();
}

function reportFailed(ctx: DaemonContext, outcome: ApplyOutcome | null, code: string, requestId: string | undefined): void {
  if (!outcome) return;
  ctx.emitter.emit('decision', { ...outcome, result: 'failed', reason: code, ...(requestId ? { requestId } : {}) });
}
