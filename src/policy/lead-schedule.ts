// How one API key's lead plan (lead-plan.ts) lays out the scale-ups due at its boundaries, on two
// lanes of the key's rate: the change lane (its PATCHes, at LEAD_RATE_SHARE of the rate) and the
// read lane (the confirmation reads, at `readShare` of that). A scale-up whose actuation is
// counted (> 0) is done when a read shows it at target, so its CONFIRM_READS_PLANNED reads take
// read slots ending by its boundary less the margin, the last one at or after its change's slot
// end plus its actuation. Backwards from the latest deadline (earliest deadline first, latest
// possible start), each lane a cursor that only moves back: O(n) after the sort. A scale-up with
// no actuation counted takes the change lane alone, as before actuation was measured. Pure.
import { MAX_LEAD_MS } from './types.js';

/** The plan counts on this share of the key's rate: the budget's pacing margins and the answers'
 *  latency leave about 95 % of it usable (bench/budget.ts). */
export const LEAD_RATE_SHARE = 0.9;

/** The last change of a boundary is planned this many ticks before it: a tick for the evaluation
 *  that finds it due, a tick for its turn on the key's queue. */
export const LEAD_MARGIN_TICKS = 2;

/**
 * Confirmation reads the plan reserves for each scale-up whose actuation it counts: the daemon's
 * schedule (src/daemon/lifecycle/confirmation.ts) reads a change at most this many times before the read
 * that confirms it (a probe before the expected actuation, the confirming read at it). A schedule
 * that reads more often must raise this, or the plan's reads no longer fit the read share.
 */
export const CONFIRM_READS_PLANNED = 2;

/** One change of a pipe at one boundary: it may go from `start` on. */
export interface LeadSlot {
  readonly boundary: number;
  /** When the change may be sent. */
  readonly start: number;
  /** The actuation the plan counted on for it. */
  readonly actuationMs: number;
  /** When it is expected confirmed at target: the end of its confirming read, by the boundary less
   *  the margin (with no actuation counted, no read is planned: its slot's end). */
  readonly expectedAt: number;
  /** With an actuation counted: when the platform is expected to hold the target (its slot's end
   *  plus the actuation); its confirmation reads take the read slots ending at `expectedAt`. */
  readonly atTargetAt?: number;
}

/** The boundary of a key that needs the longest lead in the plan. */
export interface KeyLead {
  readonly key: string;
  readonly boundary: number;
  /** Changes due at that boundary. */
  readonly changes: number;
  /** From the first change's start to the boundary. */
  readonly leadMs: number;
}

/** A scale-up due: `index` is the pipe's place in the config (the first pipes start first). */
export interface LeadJob {
  readonly pipe: string;
  readonly index: number;
  readonly boundary: number;
  readonly actuationMs: number;
}

/** A key's lanes: the time one change and one read take, and the margin before a boundary. */
export interface KeyLanes {
  readonly changeMs: number;
  readonly readMs: number;
  readonly marginMs: number;
}

export function keyLanes(
  rate: { readonly requests: number; readonly perMs: number },
  readShare: number,
  marginMs: number,
): KeyLanes {
  const changeMs = rate.perMs / (rate.requests * LEAD_RATE_SHARE);
  return { changeMs, readMs: changeMs / readShare, marginMs };
}

/** Time the lanes give `changes` scale-ups due at one boundary, each counting on `actuationMs`:
 *  the first one's start to the boundary. */
export function boundaryLeadMs(changes: number, lanes: KeyLanes, actuationMs: number): number {
  if (changes <= 0) return 0;
  if (actuationMs <= 0) return Math.ceil(changes * lanes.changeMs) + lanes.marginMs;
  // the reads bind (a scale-up's reads take longer than its change): the first change ends where
  // its confirming read begins less the actuation
  const reads = (changes * CONFIRM_READS_PLANNED - (CONFIRM_READS_PLANNED - 1)) * lanes.readMs;
  return Math.ceil(reads + lanes.changeMs) + lanes.marginMs + actuationMs;
}

/** The last instant a job's change may end: its boundary less the margin, its actuation and its
 *  confirming read (the latest first when scheduling backwards). */
function changeDeadline(j: LeadJob, lanes: KeyLanes): number {
  return j.boundary - lanes.marginMs - (j.actuationMs > 0 ? j.actuationMs + lanes.readMs : 0);
}

/** One key's slots (each with its pipe, latest first) and its longest lead. */
export function scheduleKey(
  key: string,
  jobs: LeadJob[],
  lanes: KeyLanes,
): { slots: { pipe: string; slot: LeadSlot }[]; lead: KeyLead | null } {
  const { changeMs, readMs, marginMs } = lanes;
  jobs.sort(
    (a, b) => changeDeadline(b, lanes) - changeDeadline(a, lanes) || b.boundary - a.boundary || b.index - a.index,
  );
  let changes = Infinity;
  let reads = Infinity;
  const slots: { pipe: string; slot: LeadSlot }[] = [];
  const first = new Map<number, { start: number; changes: number }>();
  for (const job of jobs) {
    let changeEnd = Math.min(changeDeadline(job, lanes), changes);
    let readEnd = 0;
    if (job.actuationMs > 0) {
      readEnd = Math.min(job.boundary - marginMs, reads);
      reads = readEnd - CONFIRM_READS_PLANNED * readMs;
      changeEnd = Math.min(changeEnd, readEnd - readMs - job.actuationMs);
    }
    const start = Math.max(changeEnd - changeMs, job.boundary - MAX_LEAD_MS);
    changes = start;
    const from = Math.floor(start);
    const atTarget = Math.ceil(from + changeMs) + job.actuationMs;
    const slot: LeadSlot =
      job.actuationMs > 0
        ? {
            boundary: job.boundary,
            start: from,
            actuationMs: job.actuationMs,
            expectedAt: Math.ceil(Math.max(readEnd, from + changeMs + job.actuationMs + readMs)),
            atTargetAt: atTarget,
          }
        : { boundary: job.boundary, start: from, actuationMs: 0, expectedAt: atTarget };
    slots.push({ pipe: job.pipe, slot });
    const f = first.get(job.boundary);
    first.set(job.boundary, { start: Math.min(f?.start ?? Infinity, start), changes: (f?.changes ?? 0) + 1 });
  }
  let lead: KeyLead | null = null;
  for (const [boundary, f] of first) {
    const leadMs = Math.ceil(boundary - f.start);
    if (!lead || leadMs > lead.leadMs) lead = { key, boundary, changes: f.changes, leadMs };
  }
  return { slots, lead };
}
