// How one API key's lead plan (lead-plan.ts) lays out the scale-ups due at its boundaries on one
// lane of the key's rate (LEAD_RATE_SHARE of it), in slots of one request each: a scale-up takes a
// slot for its change and, when its actuation is counted (> 0), one for its confirming read, at or
// after its change's slot end plus its actuation and ending by its boundary less the margin. The
// confirming read takes a slot the changes leave free (the daemon queues a confirmation read
// behind every change waiting, on the key's whole budget), so a boundary of N scale-ups needs
// about 2N slots plus the actuation: (2N / (0.9 r)) + A, not the read share's pace. Backwards from
// the latest deadline (earliest deadline first, latest possible start): each request takes the
// latest free slot that meets its deadline, found through a union-find of taken slots, O(n α(n))
// after the sort. A scale-up with no actuation counted takes a change slot alone. Pure.
import { MAX_LEAD_MS } from './types.js';

/** The plan counts on this share of the key's rate: the budget's pacing margins and the answers'
 *  latency leave about 95 % of it usable (bench/budget.ts). */
export const LEAD_RATE_SHARE = 0.9;

/** The last change of a boundary is planned this many ticks before it: a tick for the evaluation
 *  that finds it due, a tick for its turn on the key's queue. */
export const LEAD_MARGIN_TICKS = 2;

/**
 * Confirmation reads the plan counts for each scale-up whose actuation it counts: the daemon's
 * schedule (src/daemon/lifecycle/confirmation.ts) reads a scale-up once at its expected actuation
 * (no probe before it), and a second time only when that read came before its target was in force,
 * which the actuation counted (a p95) makes rare. A schedule that reads a scale-up more often must
 * raise this.
 */
export const CONFIRM_READS_PLANNED = 1;

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
   *  plus the actuation); its confirming read takes the slot ending at `expectedAt`. */
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

/** A key's lane: the time one request (a change or its confirming read) takes, and the margin
 *  before a boundary. */
export interface KeyLanes {
  readonly changeMs: number;
  readonly marginMs: number;
}

export function keyLanes(rate: { readonly requests: number; readonly perMs: number }, marginMs: number): KeyLanes {
  return { changeMs: rate.perMs / (rate.requests * LEAD_RATE_SHARE), marginMs };
}

/** Time the lane gives `changes` scale-ups due at one boundary, each counting on `actuationMs`:
 *  the first one's start to the boundary (the schedule's own, about 2N slots plus the actuation). */
export function boundaryLeadMs(changes: number, lanes: KeyLanes, actuationMs: number): number {
  if (changes <= 0) return 0;
  const boundary = MAX_LEAD_MS;
  const jobs = Array.from({ length: changes }, (_, index) => ({ pipe: '', index, boundary, actuationMs }));
  return scheduleKey('', jobs, lanes).lead?.leadMs ?? 0;
}

/**
 * The lane's slots, counted back from `top` (slot k ends at top - k x changeMs): each request
 * takes the latest free slot ending by its deadline. `next` maps a taken slot to one at or after
 * the next free one (union-find with path halving), so a slot is found in near-constant time.
 */
class Slots {
  private readonly next = new Map<number, number>();
  constructor(
    private readonly top: number,
    private readonly ms: number,
  ) {}

  /** The first slot ending by `deadline` (a hair of rounding allowed). */
  private indexBy(deadline: number): number {
    return Math.max(0, Math.ceil((this.top - deadline) / this.ms - 1e-6));
  }

  /** Takes the latest free slot ending by `deadline`: its index. */
  take(deadline: number): number {
    let k = this.indexBy(deadline);
    for (let n = this.next.get(k); n !== undefined; n = this.next.get(k)) {
      const nn = this.next.get(n);
      if (nn !== undefined) this.next.set(k, nn);
      k = n;
    }
    this.next.set(k, k + 1);
    return k;
  }

  end(k: number): number {
    return this.top - k * this.ms;
  }
}

/** The latest instant a job's confirming read (or, with no actuation counted, its change) may end. */
const deadline = (j: LeadJob, lanes: KeyLanes): number => j.boundary - lanes.marginMs;

/** One key's slots (each with its pipe, latest first) and its longest lead. */
export function scheduleKey(
  key: string,
  jobs: LeadJob[],
  lanes: KeyLanes,
): { slots: { pipe: string; slot: LeadSlot }[]; lead: KeyLead | null } {
  const { changeMs } = lanes;
  jobs.sort((a, b) => b.boundary - a.boundary || b.index - a.index);
  const slots: { pipe: string; slot: LeadSlot }[] = [];
  const first = new Map<number, { start: number; changes: number }>();
  const top = jobs.length > 0 ? Math.max(...jobs.map((j) => deadline(j, lanes))) : 0;
  const lane = new Slots(top, changeMs);
  for (const job of jobs) {
    let changeBy = deadline(job, lanes);
    let readEnd = 0;
    if (job.actuationMs > 0) {
      const r = lane.take(changeBy);
      readEnd = lane.end(r);
      changeBy = readEnd - changeMs - job.actuationMs;
    }
    const changeEnd = lane.end(lane.take(changeBy));
    const start = Math.max(changeEnd - changeMs, job.boundary - MAX_LEAD_MS);
    const from = Math.floor(start);
    const atTarget = Math.ceil(from + changeMs) + job.actuationMs;
    const slot: LeadSlot =
      job.actuationMs > 0
        ? {
            boundary: job.boundary,
            start: from,
            actuationMs: job.actuationMs,
            expectedAt: Math.ceil(readEnd),
            atTargetAt: atTarget,
          }
        : { boundary: job.boundary, start: from, actuationMs: 0, expectedAt: Math.ceil(changeEnd) };
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
