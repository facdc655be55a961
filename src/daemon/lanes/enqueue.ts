// How the processors enqueue work (through DaemonContext): an evaluation on the evaluate queue, a
// turn on the pipe's key lane. A turn deduplicated onto one already waiting raises that one to its
// priority, so a change never waits behind a read.
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Direction, PipeConfig } from '../../policy/index.js';
import type { KeyLane } from './lane.js';
import { applyJobOptions, evaluateJobId, evaluateJobOptions, turnOf, type TurnName } from './queues.js';
import type { DaemonLogger } from '../model/logger.js';

export async function enqueueEvaluation(queue: Queue | null, pipe: string, tickAt: number, suffix = ''): Promise<void> {
  await queue?.add('evaluate', { pipe, tickAt }, evaluateJobOptions(evaluateJobId(pipe, tickAt, suffix)));
}

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
): Promise<void> {
  if (!lane) {
    logger.error({ pipe: pipe.name, key: pipe.key }, 'pipe names an API key that is not configured');
    return;
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
  // Deduplicated onto the pipe's pending turn: a change must not wait at a read's (or a
  // scale-down's) priority, nor a confirmation read behind a reconcile read's. The turn does the
  // newest desire anyway. A change queued for later (a lead slot's start) raises nothing now.
  const later = name === 'change' && (queuedFor?.delayMs ?? 0) > 0;
  if (name !== 'reconcile' && !later && job.id !== undefined)
    await upgradePending(lane.queue, job.id, opts.jobId, data.idempotencyKey, opts.priority ?? 0);
}

/** A change turn queued for an instant (a lead slot's start) that has not run yet. */
function queuedChange(job: { readonly name: string; readonly data: unknown; readonly attemptsMade: number }): boolean {
  return turnOf(job.name) === 'change' && job.attemptsMade === 0 && (job.data as { at?: number }).at !== undefined;
}

async function upgradePending(
  queue: Queue,
  id: string,
  ourId: string | undefined,
  ours: string,
  priority: number,
): Promise<void> {
  // Our job was added (no turn was pending): nothing to upgrade. Every evaluation that still
  // wants a waiting change lands here, once per tick per pipe (1,200 a tick at a cold start).
  if (id === ourId) return;
  try {
    const pending = await queue.getJob(id);
    if (!pending || (pending.data as { idempotencyKey?: string }).idempotencyKey === ours) return;
    // A change waiting for its lead slot's start (not a retry) gives way at once, at our priority:
    // the turn decides again when it runs; a slot not started yet is queued for again by the
    // pipe's next evaluation.
    if (queuedChange(pending) && (await pending.getState()) === 'delayed') {
      await pending.promote();
      await pending.changePriority({ priority });
      return;
    }
    // Already at our priority or ahead: nothing to raise, and no need to ask its state.
    if (pending.priority <= priority) return;
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
      return;
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
}
