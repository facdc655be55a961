// The keys' lead plans over a simulated period, as the daemon follows them: at each instant the
// plan in force is leadPlanAt() of that instant (lead-plan.ts), made again each hour as its span
// moves, so a slot can move when a boundary comes into the span or leaves it. simulate() steps
// through them: each pipe's lead horizon (PipeView.leadUntil) as a step function of time, and the
// slot in force when a change goes. A key's slots are scheduled again only in the hours its jobs
// change (a rising boundary enters or leaves the span): the plan of an hour is a function of its
// jobs, so the other hours keep the one before. Pure.
import { leadJobs, leadPlanSpan, scheduleJobs, type LeadPlanOptions, type LeadSlot } from './lead-plan.js';
import type { ScalingConfig } from './types.js';

const HOUR_MS = 3_600_000;

/** A slot in the plans in force from `from` to `to`. */
interface SlotInForce {
  readonly slot: LeadSlot;
  readonly from: number;
  to: number;
}

/** leadUntil from `at` on (undefined: no slot has started), up to the next step. */
export interface LeadStep {
  readonly at: number;
  readonly until: number | undefined;
}

export interface LeadPeriod {
  /** The pipe's lead horizon as steps, the first at the period's start (none: never a slot). */
  steps(pipe: string): readonly LeadStep[];
  /** The pipe's slot for `boundary` in the plan in force at `at`, or undefined. */
  slotAt(pipe: string, at: number, boundary: number): LeadSlot | undefined;
}

const same = (a: LeadSlot, b: LeadSlot): boolean =>
  a.boundary === b.boundary &&
  a.start === b.start &&
  a.expectedAt === b.expectedAt &&
  a.atTargetAt === b.atTargetAt &&
  a.actuationMs === b.actuationMs;

/** The lead plans in force over [from, to), hour by hour, as leadPlanAt() makes each. */
export function leadPeriod(config: ScalingConfig, from: number, to: number, opts: LeadPlanOptions = {}): LeadPeriod {
  const first = leadPlanSpan(from).from;
  const last = leadPlanSpan(Math.max(from, to - 1));
  // every job any hour's plan holds: those of the hours' spans, (first, last.to]
  const all = leadJobs(config, first, last.to, opts);
  const inForce = new Map<string, SlotInForce[]>();
  /** Per pipe, its latest entry per boundary: the same slot in the hour before is one entry. */
  const latest = new Map<string, Map<number, SlotInForce>>();
  const add = (pipe: string, slot: LeadSlot, since: number, until: number): void => {
    if (slot.boundary <= since) return; // passed before the hour: never in force
    let byBoundary = latest.get(pipe);
    if (!byBoundary) latest.set(pipe, (byBoundary = new Map<number, SlotInForce>()));
    const e = byBoundary.get(slot.boundary);
    if (e?.to === since && same(e.slot, slot)) {
      e.to = until;
      return;
    }
    let own = inForce.get(pipe);
    if (!own) inForce.set(pipe, (own = []));
    const entry = { slot, from: since, to: until };
    own.push(entry);
    byBoundary.set(slot.boundary, entry);
  };
  for (const [key, jobs] of all) {
    jobs.sort((a, b) => a.boundary - b.boundary); // stable: config order within a boundary
    let lo = 0;
    let hi = 0;
    let held: { since: number; slots: { pipe: string; slot: LeadSlot }[] } | null = null;
    for (let h = first; h < to; h += HOUR_MS) {
      // the hour's jobs: boundaries in (h, h + span]
      const span = leadPlanSpan(h);
      let nlo = lo;
      while ((jobs[nlo]?.boundary ?? Infinity) <= span.from) nlo++;
      let nhi = Math.max(hi, nlo);
      while ((jobs[nhi]?.boundary ?? Infinity) <= span.to) nhi++;
      if (held && nlo === lo && nhi === hi) continue;
      if (held) for (const { pipe, slot } of held.slots) add(pipe, slot, held.since, h);
      lo = nlo;
      hi = nhi;
      held = { since: h, slots: scheduleJobs(config, key, jobs.slice(lo, hi))?.slots ?? [] };
    }
    if (held) for (const { pipe, slot } of held.slots) add(pipe, slot, held.since, Math.max(to, held.since + 1));
  }
  for (const own of inForce.values()) own.sort((a, b) => a.from - b.from || a.slot.boundary - b.slot.boundary);

  const steps = new Map<string, LeadStep[]>();
  const stepsOf = (pipe: string): LeadStep[] => {
    let out = steps.get(pipe);
    if (out) return out;
    out = [];
    const own = inForce.get(pipe) ?? [];
    // leadUntil can change only where an entry comes into force, its slot starts, its boundary
    // passes or it leaves force
    const instants = new Set<number>([from]);
    for (const e of own)
      for (const t of [e.from, e.slot.start, e.slot.boundary, e.to]) if (t > from && t < to) instants.add(t);
    const sorted = [...instants].sort((a, b) => a - b);
    let next = 0;
    let active: SlotInForce[] = [];
    for (const t of sorted) {
      for (let e = own[next]; e !== undefined && e.from <= t; e = own[++next]) active.push(e);
      active = active.filter((e) => e.to > t);
      let until: number | undefined;
      for (const { slot } of active) {
        if (slot.start <= t && t < slot.boundary && (until === undefined || slot.boundary > until))
          until = slot.boundary;
      }
      const prev = out.at(-1);
      if (!prev || prev.until !== until) out.push({ at: t, until });
    }
    steps.set(pipe, out);
    return out;
  };

  return {
    steps: stepsOf,
    slotAt(pipe, at, boundary) {
      return inForce.get(pipe)?.find((e) => e.from <= at && at < e.to && e.slot.boundary === boundary)?.slot;
    },
  };
}
