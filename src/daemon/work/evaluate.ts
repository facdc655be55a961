// The evaluate job: the pipe's next step at the tick (next-step.ts nextStep), carried out without
// an API call: the decision is recorded, and a turn is queued on the key's apply queue when the
// step is a request (a read, an endpoint's read, a change).
import type { Job } from 'bullmq';
import type { ScalingValues } from '../../api/index.js';
import { outcomeReason, type Decision, type PipeConfig } from '../../policy/index.js';
import { type DaemonContext } from './context.js';
import { dropped, type JobResult } from '../model/job-results.js';
import { nextStep } from '../lifecycle/next-step.js';
import { noteFreeze, noteOverride } from './operator-events.js';
import { STALE_AFTER_MS, type EvaluateJob } from '../lanes/queues.js';
import { situationOf } from './situation.js';
import { refOf, type PipeRecord, type StoredDecision } from '../model/record.js';
import { noteVerdicts } from './verdicts.js';
import { pipeByName } from '../model/pipe-index.js';
import { type Next } from '../lifecycle/steps.js';
import { lossInMarker, stateOfMarker } from '../store/redis-guard.js';
import { writeOwedLines } from './owed-lines.js';

export function createEvaluateProcessor(ctx: DaemonContext) {
  return async function evaluate(job: Job<EvaluateJob>): Promise<JobResult> {
    return evaluatePipe(ctx, job.data.pipe, job.data.tickAt);
  };
}

/**
 * One evaluation of the pipe `name` at the tick `tickAt`: the evaluate job's, and the one a turn
 * makes at once after an answer that calls for it (a first contact, a drift: answers.ts).
 */
export async function evaluatePipe(ctx: DaemonContext, name: string, tickAt: number): Promise<JobResult> {
  const started = performance.now();
  const config = ctx.config();
  const pipe = pipeByName(config, name);
  if (!pipe) return dropped('unknown_pipe');
  if (ctx.now() - tickAt > STALE_AFTER_MS) return dropped('stale');
  const policy = config.policies[pipe.policy];
  if (!policy) return dropped('unknown_policy');
  const snap = await ctx.store.snapshot(name, pipe);
  // Of a state Redis lost: the marker gone (no tick noticed yet), or the job of a tick before the
  // one that found it (redis-guard.ts). Its view, or the guard's, is of the old state: the next
  // tick decides afresh, held until the pipes are read again.
  if (snap.marker === null || lostSince(snap.marker, tickAt)) return dropped('state_lost');
  // an audit line a change's sender died before writing, due: written by whichever evaluation or
  // turn of the pipe comes first (owed-lines.ts)
  if (snap.owed.length > 0) await writeOwedLines(ctx, name, snap.owed);
  const state = stateOfMarker(snap.marker);
  const { rec } = snap;
  const sit = await situationOf(ctx, pipe, policy, snap, tickAt, tickAt, 'tick');
  const next = nextStep(rec, sit, tickAt);
  const { step } = next;

  if (step.do === 'forget') {
    // The name now points at another pipe (a reload changed its ids): what we knew is of the old one.
    await ctx.store.reset(name);
    await ctx.enqueueRead(pipe, tickAt, 'first_contact');
    return { done: 'forgot' };
  }
  // What the evaluation saw goes in only while the marker names the state it read: written into a
  // state Redis lost since, it would start a record that lacks the rest (the pauses among it).
  if (Boolean(sit.pause) !== rec.pausedSeen) {
    if (!(await ctx.store.write(name, { pausedSeen: Boolean(sit.pause) }, state))) return dropped('state_lost');
    const p = sit.pause;
    ctx.emitter.emit('paused', {
      pipe: name,
      paused: Boolean(p),
      ...(p ? { reason: p.reason, ...(p.until !== undefined ? { until: p.until } : {}) } : {}),
    });
  }

  if (!(await noteOverride(ctx, name, rec, snap.override, tickAt, state))) return dropped('state_lost');

  const { decision } = next;
  if (decision) {
    const sends = step.do === 'change' || step.do === 'list_services';
    // written as its difference from the record it was decided from (a steady pipe: the instant);
    // whole when a field of the record did not parse, so the decision's own fields are written over
    const stored = await ctx.store.writeDecision(
      name,
      tickAt,
      {
        ...(next.recommendations ? { recommendations: next.recommendations } : {}),
        lastDecision: decisionRecord(tickAt, decision, config.dryRun),
        // A skip withdraws any pending desire: a paused or stopped pipe must not be sent one.
        desired: decision.action === 'skip' || sit.stateLost !== null ? null : decision.desired,
        desiredDirection: decision.direction,
        // The apply-wait metric counts from the first decision that wanted this change.
        wantedSince: sends ? (rec.wantedSince ?? tickAt) : null,
        ref: refOf(pipe),
        // marked for the turn (a field that did not parse reads as due, and is not marked yet)
        ...(next.readDue && (!rec.readDue || snap.invalid.length > 0) ? { readDue: true } : {}),
      },
      snap.invalid.length === 0 ? rec : undefined,
      state,
    );
    // Redis lost the state since the snapshot: what was decided from it goes nowhere.
    if (stored === 'state_lost') return dropped('state_lost');
    // A newer tick's decision is stored already: this late evaluation changes nothing.
    if (!stored) return dropped('superseded');
    report(ctx, name, pipe.policy, rec, next, decision, tickAt, started, config.dryRun);
    await noteFreeze(ctx, name, rec, decision, state);
    const paused = sit.pause !== null && (sit.pause.until === undefined || tickAt < sit.pause.until);
    await noteVerdicts(ctx, pipe, policy, rec, decision, tickAt, paused, state);
  }

  switch (step.do) {
    case 'read':
    case 'read_endpoint':
      if (step.do === 'read' && step.why === 'confirm')
        await ctx.enqueueRead(pipe, tickAt, 'confirm', rec.confirming?.sentAt, tickAt);
      else await ctx.enqueueRead(pipe, tickAt, step.do === 'read' ? step.why : 'reconcile');
      // a read due now does not put off a slot that starts before the next evaluation
      await queueLeadTurn(ctx, pipe, tickAt);
      return { done: 'queued', turn: 'read', direction: 'none' };
    case 'change':
    case 'list_services':
      await ctx.enqueueChange(pipe, step.direction, tickAt);
      return { done: 'queued', turn: 'change', direction: step.direction };
    case 'wait':
      await queueLeadTurn(ctx, pipe, tickAt);
      return { done: 'nothing', step: step.do, reason: step.reason };
    case 'skip':
      return { done: 'nothing', step: step.do, reason: step.reason };
  }
}

/**
 * leadTime auto: a pipe whose slot starts after its tick and before its next evaluation may come
 * gets its turn queued for the slot's start, where the turn decides again (the lead then in force)
 * and sends the change; after a wait, and after a read the tick asked for (whose turn then holds
 * the pipe's place: lead-wakes.ts raises it at the slot's start). Only after a wait, a pipe with a
 * reconcile read due (at 1,000 pipes a key, half the fleet bench's pipes in a lead) had its
 * change go at its first evaluation after the slot, 11-15 s of 10-s ticks late. Left to the evaluations, the change went at the pipe's first evaluation
 * after its slot's start, which waits behind every other pipe's: at 10,000 pipes 6-12 s (of the
 * fleet bench's 1-s windows) after the slot, past a key's whole margin.
 */
async function queueLeadTurn(ctx: DaemonContext, pipe: PipeConfig, tickAt: number): Promise<void> {
  const at = ctx.leadTurnAtFor(pipe, tickAt);
  if (at !== undefined) await ctx.enqueueChange(pipe, 'up', tickAt, at);
}

/** The marker the snapshot read records a loss found by a tick after the tick `tickAt`: an
 *  evaluation enqueued before the loss, run after it. */
function lostSince(marker: string, tickAt: number): boolean {
  const lostAt = lossInMarker(marker);
  return lostAt !== null && tickAt < lostAt;
}

/** The evaluation's events: every replica's gauges follow every pipe from the shared state. */
function report(
  ctx: DaemonContext,
  name: string,
  policy: string,
  rec: PipeRecord,
  next: Next,
  decision: Decision,
  tickAt: number,
  started: number,
  dryRun: boolean,
): void {
  ctx.emitter.emit('evaluation', {
    pipe: name,
    policy,
    tickAt,
    durationMs: performance.now() - started,
    lagMs: Math.max(0, ctx.now() - tickAt),
    decision,
  });
  ctx.emitter.emit('window', { pipe: name, windows: decision.windows });
  if (decision.action !== 'skip') ctx.emitter.emit('desired', { pipe: name, values: decision.desired });
  // From the shared state, so every replica's gauge follows the pipe, not only the replica
  // whose worker happened to apply or read it (the "not at desired scaling" alert compares both).
  if (Object.keys(rec.applied).length > 0) ctx.emitter.emit('applied', { pipe: name, values: rec.applied });
  ctx.emitter.emit('unconfirmed:seen', { pipe: name, unconfirmed: (rec.confirming?.unconfirmedAt ?? null) !== null });
  emitOutcome(ctx, name, rec, next, decision, dryRun);
}

function decisionRecord(tickAt: number, d: Decision, dryRun: boolean): StoredDecision {
  return {
    at: tickAt,
    action: d.action,
    direction: d.direction,
    windows: d.windows,
    desired: d.desired,
    changes: d.changes,
    reasons: d.reasons,
    ...(dryRun ? { dryRun: true } : {}),
  };
}

/** A skip or a dry run is an outcome of the evaluation (a change's is the apply turn's). */
function emitOutcome(
  ctx: DaemonContext,
  pipe: string,
  rec: PipeRecord,
  next: Next,
  d: Decision,
  dryRun: boolean,
): void {
  if (d.action === 'none') return;
  const safety = next.step.do === 'skip' && d.action === 'change' ? next.step.reason : null;
  if (d.action === 'change' && !dryRun && safety === null) return; // the apply turn reports it
  // A pipe that stays skipped for the same reason is reported once, not at every tick.
  const reason = safety ?? outcomeReason(d);
  const last = rec.lastDecision;
  if (d.action === 'skip' && last?.action === 'skip' && outcomeReason(last) === reason) return;
  const after: ScalingValues =
    d.action === 'change' && safety === null ? { ...rec.applied, ...d.changes } : rec.applied;
  ctx.emitter.emit('decision', {
    pipe,
    direction: d.direction,
    result: d.action === 'change' && safety === null ? 'dry_run' : 'skipped',
    reason,
    windows: d.windows,
    before: rec.applied,
    after,
    target: d.recommendation,
    reasons: d.reasons,
  });
}
