// A turn on the key's apply queue: one request for one pipe, after a unit of the key's shared
// budget (spend.ts). What the request is comes from the pipe's lifecycle (next-step.ts nextStep),
// decided again here with the current clock and config, so a change whose reason has expired
// since the evaluation (its window ended, a reload narrowed the bounds, the pipe was paused) is
// never sent; what its answer makes of the record comes from answers.ts.
import type { Job } from 'bullmq';
import { type DaemonContext } from './context.js';
import { dropped, type JobResult } from '../model/job-results.js';
import { nextStep, turnInstant } from '../lifecycle/next-step.js';
import { confirmOrderOf, turnOf } from '../lanes/queues.js';
import { ServiceLists } from './service-lists.js';
import { situationOf } from './situation.js';
import { pipeByName } from '../model/pipe-index.js';
import { timingOf } from '../lifecycle/steps.js';
import { stateOfMarker } from '../store/redis-guard.js';
import { writeOwedLines } from './owed-lines.js';
import { change } from './turn-change.js';
import { read, readEndpoint } from './turn-reads.js';
import { type ApplyJobData, type Turn } from './turn-answer.js';

export function createApplyProcessor(ctx: DaemonContext) {
  // A job is a turn to work on one pipe, not a frozen request: what it does is decided when it
  // runs, and BullMQ's deduplication keeps at most one active and one waiting job per pipe, so a
  // pipe's requests never overlap.
  const services = new ServiceLists(ctx);
  return async function work(job: Job<ApplyJobData>, token?: string): Promise<JobResult> {
    const config = ctx.config();
    const pipe = pipeByName(config, job.data.pipe);
    if (!pipe) return dropped('unknown_pipe');
    const policy = config.policies[pipe.policy];
    if (!policy) return dropped('unknown_policy');
    const lane = ctx.laneFor(pipe);
    if (!lane) return dropped('no_key');
    // A reload gave the pipe another key (its pool changed, or its key: did): the turn moves to
    // that key's queue, whose deduplication keeps the pipe's requests from overlapping there.
    if (job.queueName !== lane.queue.name) {
      const turnName = turnOf(job.name);
      if (turnName !== 'change') await ctx.enqueueRead(pipe, job.data.tickAt, turnName, confirmOrderOf(job));
      else await ctx.enqueueChange(pipe, job.data.direction, job.data.tickAt);
      return { done: 'key_moved', key: lane.keyName };
    }
    const snap = await ctx.store.snapshot(pipe.name, pipe);
    // Redis lost the state, no tick noticed yet: nothing is asked of the platform for it; the tick
    // that notices has the pipe read again. Else what the turn writes goes in only while the marker
    // names the state it read (stateOfMarker): an answer never makes a record of an emptied one.
    if (snap.marker === null) return dropped('state_lost');
    // an audit line a change's sender died before writing, due: written first (owed-lines.ts)
    if (snap.owed.length > 0) await writeOwedLines(ctx, pipe.name, snap.owed);
    const { rec } = snap;
    const at = turnInstant(rec, ctx.now());
    let sit = await situationOf(ctx, pipe, policy, snap, at, rec.decidedAt ?? job.data.tickAt, 'turn');
    // a retry of the job is the pipe's next attempt that its backoff scheduled (next-step.ts backingOff)
    if (job.attemptsMade > 0) sit = { ...sit, retry: true };
    let { step, decision } = nextStep(rec, sit, at);
    const turn: Turn = { ctx, job, token, pipe, lane, rec, state: stateOfMarker(snap.marker), timing: timingOf(sit) };
    if (step.do === 'list_services') {
      // The turn that read the list goes on to its change, with a unit of its own: without one it
      // goes back to the front of its priority (spend.ts), the state now stored. A new turn at the
      // back of the queue made that change the last of a cold start's.
      const { state } = await services.read(pipe, lane, turn.state);
      sit = { ...sit, service: { state, at: ctx.now() } };
      ({ step, decision } = nextStep(rec, sit, at));
    }
    switch (step.do) {
      case 'forget':
        // The next evaluation forgets the record.
        return dropped('pipe_changed');
      case 'read':
        return read(turn, step.why);
      case 'read_endpoint':
        return readEndpoint(turn, step.endpointId);
      case 'change':
        return change(turn, step.body, decision?.recommendation);
      case 'list_services':
        // Not after a list just stored (its state, even unknown, is fresh): nothing to send.
        return { done: 'nothing', step: 'wait', reason: 'service_unknown' };
      case 'wait':
      case 'skip':
        return { done: 'nothing', step: step.do, reason: step.reason };
    }
  };
}
