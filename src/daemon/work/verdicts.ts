// The daemon's side of window verdicts (policy/verdict.ts): each evaluation looks for window starts
// since the pipe's previous decision, stores the verdict due for the newest (the one before it is
// given then, as superseded when nothing confirmed it), and gives the due verdict once the record's
// confirmation (or the deadline) settles it. Each step is one script on the pipe's record
// (state-store.ts verdict), so three replicas and restarts give one verdict per pipe and start.
// A start that Redis lost the daemon's state around (redis-guard.ts) is met when a read showed its
// target by the boundary (a read that rebuilt the state counts), else no verdict (excluded,
// state_lost): never missed or late on evidence that is gone. A start the record had not read the
// pipe by (seenAt) is no verdict either (excluded, unseen) unless a read in its window showed the
// pipe short of it. Nor is a start whose change's answer was lost (its sender killed or stalled)
// and that only the read settling it showed at target after the boundary, or not yet (excluded,
// outcome_unknown); past its deadline such a start waits for that read. A verdict given carries
// the capacity its start spent early and short (policy/early-capacity.ts), from the confirmation's
// instant.
import {
  exclusionOf,
  fieldsOfPipe,
  judgeVerdict,
  stateLostAround,
  tickIntervalMs,
  verdictCapacity,
  verdictDue,
  windowStartsIn,
  VERDICT_LIMIT_DEFAULT_MS,
  type Decision,
  type Judged,
  type PipeConfig,
  type Policy,
  type VerdictDue,
} from '../../policy/index.js';
import type { DaemonContext } from './context.js';
import { unsettled } from '../lifecycle/unsettled.js';
import type { PipeRecord, StoredVerdict } from '../model/record.js';

/** How long after a window start a pipe not confirmed at target has missed it: the actuation cap. */
export function verdictLimitMs(ctx: DaemonContext): number {
  return ctx.config().evaluate.actuation?.maxMs ?? VERDICT_LIMIT_DEFAULT_MS;
}

/**
 * After the evaluation of the tick at `tickAt` (its decision stored; `paused`: a pause in force):
 * open the verdicts of window starts in (the previous decision, tickAt], and give the due one
 * when it is settled.
 */
export async function noteVerdicts(
  ctx: DaemonContext,
  pipe: PipeConfig,
  policy: Policy,
  rec: PipeRecord,
  decision: Decision,
  tickAt: number,
  paused = false,
  /** The state the evaluation's snapshot read (redis-guard.ts stateOfMarker): no verdict goes in
   *  once Redis lost it. */
  state = '',
): Promise<void> {
  const config = ctx.config();
  const limitMs = verdictLimitMs(ctx);
  // A new record looks back one tick; a replica down for a while looks back at most the limit.
  const from = Math.max(rec.decidedAt ?? tickAt - tickIntervalMs(config.evaluate.cron), tickAt - limitMs);
  // A start given a verdict already, as this replica knows (it gave it, or a record showed it given),
  // gets no other: a record Redis brought back from an older snapshot holds it due again.
  const givenUpTo = Math.max(ctx.verdictsGiven.get(pipe.name) ?? -1, rec.lastVerdict?.boundary ?? -1);
  if (givenUpTo >= 0) ctx.verdictsGiven.set(pipe.name, givenUpTo);
  let due = rec.verdictDue !== null && rec.verdictDue.boundary <= givenUpTo ? null : rec.verdictDue;
  // what the platform last reported, until the first read: nothing to contradict a confirmation
  const reported = rec.lastReadAt === null ? undefined : rec.applied;
  const loss = ctx.stateLoss();
  const lost = (d: VerdictDue): boolean => stateLostAround(d, loss, limitMs);
  // the record's first read: a start before it was judged on nothing read by its boundary
  const seen = rec.seenAt !== null ? { seenAt: rec.seenAt } : {};
  // a change of ours no answer or read has settled yet (its sender died, stalled, or still waits
  // for its answer): what it would set, and its send
  const u = unsettled(rec) ? rec.unsettled : null;
  const unknown = u !== null ? { outcomeUnknown: { values: { ...rec.applied, ...u.sent }, sentAt: u.at } } : {};
  for (const start of windowStartsIn(policy, pipe.bounds, fieldsOfPipe(pipe, policy, rec.kind), from, tickAt)) {
    if (start.boundary <= givenUpTo) continue;
    if (due !== null && due.boundary >= start.boundary) continue;
    if (due !== null)
      await give(
        ctx,
        pipe.name,
        due,
        judgeVerdict(due, rec.confirmed, start.boundary, { final: true, stateLost: lost(due), ...seen, ...unknown }),
        Math.min(due.deadline, start.boundary),
        state,
      );
    due = null;
    const next = verdictDue(start, limitMs);
    const excluded = exclusionOf(decision, config.dryRun, paused);
    if (excluded !== null) {
      const verdict: StoredVerdict = { ...next, verdict: 'excluded', at: ctx.now(), reason: excluded };
      if (await ctx.store.verdict(pipe.name, 'exclude', verdict, state)) gave(ctx, pipe.name, verdict);
      continue;
    }
    // Refused: another replica opened it; it is due all the same (giving it is once, by script).
    await ctx.store.verdict(pipe.name, 'open', next, state);
    due = next;
  }
  if (due !== null)
    await give(
      ctx,
      pipe.name,
      due,
      judgeVerdict(due, rec.confirmed, tickAt, { reported, stateLost: lost(due), ...seen, ...unknown }),
      due.deadline,
      state,
    );
}

/** Give a settled verdict with the capacity the start spent early and short (`until`: when a
 *  missed start stopped counting short, its deadline or the start that superseded it). */
async function give(
  ctx: DaemonContext,
  pipe: string,
  due: VerdictDue,
  judged: Judged | null,
  until = due.deadline,
  state = '',
): Promise<void> {
  if (judged === null) return;
  const capacity = verdictCapacity(due, judged, until);
  const verdict: StoredVerdict = { ...due, ...judged, ...(capacity ?? {}), at: ctx.now() };
  if (await ctx.store.verdict(pipe, 'close', verdict, state)) gave(ctx, pipe, verdict);
}

/** A verdict written: emitted, and remembered as given (noteVerdicts). */
function gave(ctx: DaemonContext, pipe: string, verdict: StoredVerdict): void {
  ctx.verdictsGiven.set(pipe, Math.max(ctx.verdictsGiven.get(pipe) ?? -1, verdict.boundary));
  ctx.emitter.emit('verdict', { pipe, ...verdict });
}
