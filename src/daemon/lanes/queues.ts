// Queue names, job shapes and job options. One "evaluate" queue for the whole fleet; one apply
// queue per API key, so its Worker limiter is that key's platform limit and a 429 pauses only it.
import { randomBytes } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import type { Direction } from '../../policy/index.js';
import type { ReadWhy } from '../model/job-results.js';
import { safeName } from '../store/redis-keys.js';
import { backoffMs } from '../lifecycle/backoff.js';

export const EVALUATE_QUEUE = 'evaluate';

export function applyQueueName(keyId: string): string {
  return `apply-${safeName(keyId)}`;
}

export interface EvaluateJob {
  readonly pipe: string;
  /** The tick instant (epoch ms): decide() reads this clock, not the wall clock. */
  readonly tickAt: number;
}

/** A turn on the key's queue for one pipe, named for what it is queued to do: `change` sends the
 *  pipe's newest stored desire; a read is named for why it is made (ReadWhy: `first_contact` and
 *  `settle`, reads a change waits for; `confirm`, a change's confirmation read, ahead of
 *  `reconcile` reads). The name is for queue listings, the priority and a turn moved to another
 *  key's queue; the turn decides again when it runs. */
export type TurnName = 'change' | ReadWhy;

/** A turn's name as an older version queued it (a rolling upgrade finds them in the queue). */
const LEGACY_TURN_NAMES: Readonly<Record<string, TurnName>> = {
  apply: 'change',
  contact: 'first_contact',
  read: 'reconcile',
};

/** The turn a job's name stands for: its own, or an older version's. */
export function turnOf(name: string): TurnName {
  return LEGACY_TURN_NAMES[name] ?? (name as TurnName);
}

export interface ApplyJob {
  readonly pipe: string;
  readonly tickAt: number;
  /** Made once per job, so every retry of the same change carries the same key. */
  readonly idempotencyKey: string;
  readonly direction: Direction;
  /** The instant a read was queued for (a confirmation read's due instant, the tick that found it
   *  due): what it waited in the queue after it is not the platform's time (an actuation sample). */
  readonly at?: number;
}

/** Deterministic per pipe and tick: every replica enqueues the same id and BullMQ keeps one. */
export function evaluateJobId(pipe: string, tickAt: number, suffix = ''): string {
  return `${safeName(pipe)}-${Math.floor(tickAt / 1000)}${suffix}`;
}

/**
 * Work older than this is dropped rather than done: an evaluation left in Redis by a daemon that
 * was down, or a desire nobody has re-decided since. The next tick decides afresh (level-triggered),
 * so dropping loses nothing and avoids a flap to an old window's values.
 */
export const STALE_AFTER_MS = 5 * 60_000;

/**
 * Finished evaluations are kept only briefly and only so many: one replica enqueues each tick (the
 * tick's `SET NX` in Redis, daemon.ts), so the jobs no longer have to outlive a slower replica's
 * duplicate. Kept an hour by age, 2,000 pipes at a 10 s cron held 368,000 jobs (487 MB) after
 * 30 minutes; now Redis holds at most EVALUATE_KEEP_COUNT of them whatever the fleet and the cron.
 */
export const EVALUATE_KEEP_S = 60;
export const EVALUATE_KEEP_COUNT = 1_000;

/** How long the tick's marker (`<prefix>:ps:tick:<epoch s>`) lives: longer than any replica's
 *  clock skew or late cron callback, and past STALE_AFTER_MS, after which a tick's work is dropped. */
export const TICK_MARK_MS = STALE_AFTER_MS + 60_000;

export const evaluateJobOptions = (jobId: string): JobsOptions => ({
  jobId,
  removeOnComplete: { age: EVALUATE_KEEP_S, count: EVALUATE_KEEP_COUNT },
  removeOnFail: { age: EVALUATE_KEEP_S, count: EVALUATE_KEEP_COUNT },
  attempts: 3,
  backoff: { type: 'exponential', delay: 500 },
});

/**
 * A tick's evaluation of a pipe: at most one waits per pipe. While an older tick's evaluation of
 * the pipe still waits (the evaluations fell behind the cron), the newer one is not added: the
 * waiting one decides afresh from the shared state when it runs, and the next tick adds again. A
 * backlog of ticks was evaluated tick after tick, each older one only to be superseded (1,200
 * pipes every 3 s under load: 13,000 evaluations waiting, 35 s behind, the apply lane's timers
 * late in the same process). One tick's evaluation that comes while the last one runs is kept.
 */
export function tickEvaluationOptions(pipe: string, tickAt: number): JobsOptions {
  return {
    ...evaluateJobOptions(evaluateJobId(pipe, tickAt)),
    deduplication: { id: `tick-${safeName(pipe)}`, keepLastIfActive: true },
  };
}

/**
 * Confirmation reads go oldest change first: their priorities are `confirm` plus the second their
 * change was sent, modulo this span (12 days; at the wrap, for as long as reads wait, the newest
 * changes' reads go first). By the instant each read fell due instead, a boundary's changes took
 * turns read by read, so under a full read share every change's back-off reads came late, none
 * measured the platform (a late read is no actuation sample), and the estimate never rose to
 * the propagation: the first changes are read on time now, and measure it.
 */
export const CONFIRM_ORDER_SPAN = 2 ** 20;

// Lower number = earlier. Changes before reads (a change's answer is a read too); scale-ups first:
// under a tight limit, capacity matters more than savings. A pipe has one pending turn, so the
// scale-downs behind the scale-ups wait at most one change per pipe of the key. A read that a
// change waits for (a first contact, a settle: the full budget) goes before the other reads: at a
// cold start, reads of pipes already changed came between the first contacts. A change's
// confirmation read goes before reconcile reads (CONFIRM_ORDER_SPAN of them, by their change's
// send): a reconcile read draws on the read share, a confirmation read on the key's whole budget
// (the slots the changes leave free, as the lead plan counts it), never before a change. BullMQ takes priorities below 2^21.
const PRIORITY: Record<Direction | ReadWhy, number> = {
  up: 1,
  none: 2,
  down: 3,
  first_contact: 4,
  settle: 4,
  confirm: 5,
  reconcile: 5 + CONFIRM_ORDER_SPAN,
};

/** A turn's priority; a confirmation read's follows `sentAt`, its change's first send (epoch ms). */
export function applyPriority(name: TurnName, direction: Direction, sentAt?: number): number {
  if (name === 'confirm' && sentAt !== undefined && Number.isFinite(sentAt))
    return PRIORITY.confirm + (Math.floor(Math.max(0, sentAt) / 1_000) % CONFIRM_ORDER_SPAN);
  return PRIORITY[name === 'change' ? direction : name];
}

/** The send instant a confirmation turn's priority stands for (a second of the same order), so a
 *  turn moved to another key's queue keeps its place; undefined for any other turn. */
export function confirmOrderOf(job: {
  readonly name: string;
  readonly opts: { readonly priority?: number };
}): number | undefined {
  const p = job.opts.priority;
  if (job.name !== 'confirm' || p === undefined || p < PRIORITY.confirm || p >= PRIORITY.reconcile) return undefined;
  return (p - PRIORITY.confirm) * 1_000;
}

export const APPLY_ATTEMPTS = 6;

/** The backoff type of apply jobs: the delay is the one the processor chose and logged. */
export const APPLY_BACKOFF = 'chosen';
/** An error without a chosen delay (not an API failure: a bug, a Redis error) waits from 1 s,
 *  doubling, at most a minute: the pipes' backoff formula (backoff.ts) on a base of its own. */
const UNCHOSEN_BASE_MS = 1_000;
const UNCHOSEN_CAP_MS = 60_000;

/** An error that carries the delay its processor chose (and reported) for the job's next attempt. */
export interface ChosenDelay {
  readonly retryDelayMs?: number;
}

/**
 * The apply Workers' backoff strategy: the delay the processor chose, so the delay in the
 * `apply:retry` event and log is the one BullMQ waits (computing it twice, once with jitter, made
 * the logged value up to 2x wrong). An error without one backs off as a pipe's calls do.
 */
export function chosenBackoff(attemptsMade: number, _type?: string, err?: Error): number {
  return (err as ChosenDelay | undefined)?.retryDelayMs ?? backoffMs(attemptsMade, UNCHOSEN_BASE_MS, UNCHOSEN_CAP_MS);
}

let jobSeq = 0;

/**
 * An apply job's id, made so that ids sort (as text) in the order the jobs were made. A job that a
 * rate limit sends back (the key's budget has no unit, or no read credit) goes to the front of its
 * priority, and BullMQ orders those by id: with its counter's ids "1000" went before "970", so a
 * newer read kept winning the next credit and older ones were never read (a fleet's reconcile
 * reads starved). Zero-padded time, a per-process sequence, a random tail for replicas.
 */
export function applyJobId(now: number): string {
  jobSeq = (jobSeq + 1) % 1_000_000;
  return `t${String(Math.max(0, Math.floor(now))).padStart(15, '0')}-${String(jobSeq).padStart(6, '0')}-${randomBytes(3).toString('hex')}`;
}

export function applyJobOptions(
  name: TurnName,
  pipe: string,
  direction: Direction,
  now = Date.now(),
  sentAt?: number,
): JobsOptions {
  return {
    jobId: applyJobId(now),
    priority: applyPriority(name, direction, sentAt ?? now),
    // One pending turn per pipe: at most one active and one waiting, and the waiting job reads
    // the newest stored desire when it runs, so a newer decision always wins and a pipe's
    // requests never overlap.
    deduplication: { id: safeName(pipe), keepLastIfActive: true },
    attempts: APPLY_ATTEMPTS,
    backoff: { type: APPLY_BACKOFF, delay: UNCHOSEN_BASE_MS },
    removeOnComplete: { age: 3_600, count: 1_000 },
    removeOnFail: { age: 24 * 3_600, count: 1_000 },
  };
}
