// How the processors enqueue work (through DaemonContext): an evaluation on the evaluate queue, a
// turn on the pipe's key lane. A turn deduplicated onto one already waiting raises that one to its
// priority, so a change never waits behind a read; a change queued for a lead slot's start that
// finds the place taken says when to ask for it again (lead-wakes.ts).
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Direction, PipeConfig } from '../../policy/index.js';
import type { KeyLane } from './lane.js';
import { applyJobOptions, evaluateJobId, evaluateJobOptions, turnOf, type TurnName } from './queues.js';
import type { DaemonLogger } from '../model/logger.js';

export async function enqueueEvaluation(queue: Queue | null, pipe: string, tickAt: number, suffix = ''): Promise<void> {
  await queue?.add('evaluate', { pipe, tickAt }, evaluateJobOptions(evaluateJobId(pipe, tickAt, suffix)));
}

/**
 * Queues the pipe's turn. The instant its change must be asked for again (lead-wakes.ts) when the
 * turn queued for a lead slot's start did not keep that place: the pipe's pending turn was another
 * (this change queued for later joined it), or this turn, which cannot wait, promoted it.
 */
export async function enqueueTurn(
  lane: KeyLane | undefined,
  logger: DaemonLogger,
  pipe: PipeConfig,
  direction: Direction,
  tickAt: number,
  name: TurnName,
  sentAt?: number,
  /** A read queued for an instant: `delayMs` from now (a delayed job), kept in the job as `at`. */
  queuedFor?: { readonly at: number; readonly delayMs: number },
): Promise<number | undefined> {
  if (!lane) {
    logger.error({ pipe: pipe.name, key: pipe.key }, 'pipe names an API key that is not configured');
    return undefined;
  }
  const data = {
    pipe: pipe.name,
    tickAt,
    idempotencyKey: randomUUID(),
    direction,
    ...(queuedFor ? { at: queuedFor.at } : {}),
  };
  const opts = {
    ...applyJobOptions(name, pipe.name, direction, Date.now(), sentAt),
    ...(queuedFor && queuedFor.delayMs > 0 ? { delay: queuedFor.delayMs } : {}),
  };
  const job = await lane.queue.add(name, data, opts);
  if (job.id === undefined || job.id === opts.jobId) return undefined;
  // Deduplicated onto the pipe's pending turn: a change must not wait at a read's (or a
  // scale-down's) priority, nor a confirmation read behind a reconcile read's. The turn does the
  // newest desire anyway. A change queued for later (a lead slot's start) raises nothing now.
  if (name === 'change' && queuedFor && queuedFor.delayMs > 0)
    return joinedLater(lane.queue, job.id, data.idempotencyKey, queuedFor.at);
  if (name !== 'reconcile') return upgradePending(lane.queue, job.id, data.idempotencyKey, opts.priority ?? 0);
  return undefined;
}

/** A change turn queued for an instant (a lead slot's start) that has not run yet. */
function queuedChange(job: { readonly name: string; readonly data: unknown; readonly attemptsMade: number }): boolean {
  return turnOf(job.name) === 'change' && job.attemptsMade === 0 && (job.data as { at?: number }).at !== undefined;
}

/**
 * A change queued for a lead slot's start `at` that joined the pipe's pending turn: `at` unless
 * that turn is the pipe's change queued for that start or earlier, which keeps its place.
 */
async function joinedLater(queue: Queue, id: string, ours: string, at: number): Promise<number | undefined> {
  try {
    const pending = await queue.getJob(id);
    if (!pending || (pending.data as { idempotencyKey?: string }).idempotencyKey === ours) return undefined;
    const queuedAt = (pending.data as { at?: number }).at;
    if (queuedChange(pending) && queuedAt !== undefined && queuedAt <= at && (await pending.getState()) === 'delayed')
      return undefined;
  } catch {
    // gone meanwhile: the wake asks again at the slot's start
  }
  return at;
}

async function upgradePending(queue: Queue, id: string, ours: string, priority: number): Promise<number | undefined> {
  try {
    const pending = await queue.getJob(id);
    if (!pending || (pending.data as { idempotencyKey?: string }).idempotencyKey === ours) return undefined;
    // A change waiting for its lead slot's start (not a retry) gives way at once, at our priority:
    // the turn decides again when it runs, and the slot's start is asked for again (its wake).
    if (queuedChange(pending) && (await pending.getState()) === 'delayed') {
      await pending.promote();
      await pending.changePriority({ priority });
      return (pending.data as { at?: number }).at;
    }
    // Already at our priority or ahead: nothing to raise, and no need to ask its state.
    if (pending.priority <= priority) return undefined;
    // A delayed turn is the pipe's retry, waiting out its backoff (work/turn-failure.ts), and stays
    // delayed: an evaluation queues a turn only when the pipe is not backing off, but it may have
    // read the record just before the retry failed again; promoted, the retry went out at once,
    // past the backoff just renewed (a failing pipe's fourth call in its first minute).
    const state = await pending.getState();
    // A confirmation read waiting for its instant gives way at once: the turn decides again when
    // it runs (the change goes, whose answer starts a confirmation of its own).
    if (state === 'delayed' && turnOf(pending.name) === 'confirm') {
      await pending.promote();
      await pending.changePriority({ priority });
      return undefined;
    }
    if (
      (state === 'delayed' || state === 'prioritized' || state === 'waiting') &&
      (pending.opts.priority ?? 0) > priority
    ) {
      await pending.changePriority({ priority });
    }
  } catch {
    // It became active or finished meanwhile: that turn (or the next) sends the newest desire.
  }
  return undefined;
}
