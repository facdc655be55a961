// Capacity spent early, and capacity short: what a window start costs in capacity on either side
// of its boundary. Early: what the scale-up added was in force before the window needed it (from
// the instant it was in force to the boundary). Short: the window wanted it and it was not there
// yet (from the boundary to the instant it was in force, or to the verdict's deadline when it never
// was). The step is from what the schedule needed just before the boundary to the window's target;
// its rate is counted per minute of real time (epoch ms: a day that changes its clocks has 23 or 25
// hours, and a minute is a minute). Units need no price list: replica-minutes, core-minutes
// (replicas x replicaCpuMillicores / 1000 x minutes), GB-minutes (replicas x replicaMemoryGb x
// minutes) for stream pipes; concurrency-slot-minutes for object storage pipes; none for a kind
// that takes no scaling. Pure: the daemon passes its confirmation instant (record.confirmed),
// `plan` and `diff` the lead plan's send slot plus its expected actuation.
import { KIND_FIELDS, SCALING_FIELDS, type PipeKind, type ScalingField, type ScalingValues } from '../api/index.js';
import { assumedKind } from './kind.js';
import { leadJobs, leadPlanAt, needAround, type LeadPlan, type LeadPlanOptions, type LeadSlot } from './lead-plan.js';
import { MAX_LEAD_MS, type PipeConfig, type Policy, type ScalingConfig } from './types.js';
import type { Judged, VerdictDue } from './verdict.js';

/** Capacity held over time, in minutes of each unit. */
export interface CapacityMinutes {
  /** replicas x minutes */
  readonly replicaMinutes: number;
  /** replicas x replicaCpuMillicores / 1000 x minutes */
  readonly coreMinutes: number;
  /** replicas x replicaMemoryGb x minutes */
  readonly gbMinutes: number;
  /** concurrency x minutes (object storage pipes) */
  readonly slotMinutes: number;
}

export const CAPACITY_UNITS = ['replicaMinutes', 'coreMinutes', 'gbMinutes', 'slotMinutes'] as const;
export type CapacityUnit = (typeof CAPACITY_UNITS)[number];

export const NO_MINUTES: CapacityMinutes = { replicaMinutes: 0, coreMinutes: 0, gbMinutes: 0, slotMinutes: 0 };

/** A window start's capacity on either side of its boundary. */
export interface BoundaryCapacity {
  readonly early: CapacityMinutes;
  readonly short: CapacityMinutes;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * What the step from `before` to `after` adds per minute, each unit's rise (never below 0: a
 * scale-down spends nothing early). A field one side does not set is taken from the other (the
 * size of a replica the window does not change stays what it was).
 */
export function stepPerMinute(before: ScalingValues, after: ScalingValues): CapacityMinutes {
  const pick = (f: ScalingField): [number, number] => {
    const b = before[f] ?? after[f] ?? 0;
    const a = after[f] ?? before[f] ?? 0;
    return [b, a];
  };
  const [r0, r1] = pick('replicas');
  const [c0, c1] = pick('replicaCpuMillicores');
  const [m0, m1] = pick('replicaMemoryGb');
  const [s0, s1] = pick('concurrency');
  const rise = (x: number): number => Math.max(0, x);
  return {
    replicaMinutes: rise(r1 - r0),
    coreMinutes: rise((r1 * c1 - r0 * c0) / 1000),
    gbMinutes: rise(r1 * m1 - r0 * m0),
    slotMinutes: rise(s1 - s0),
  };
}

export function scaleMinutes(rate: CapacityMinutes, ms: number): CapacityMinutes {
  const k = Math.max(0, ms) / MINUTE_MS;
  return {
    replicaMinutes: rate.replicaMinutes * k,
    coreMinutes: rate.coreMinutes * k,
    gbMinutes: rate.gbMinutes * k,
    slotMinutes: rate.slotMinutes * k,
  };
}

export function addMinutes(a: CapacityMinutes, b: CapacityMinutes): CapacityMinutes {
  return {
    replicaMinutes: a.replicaMinutes + b.replicaMinutes,
    coreMinutes: a.coreMinutes + b.coreMinutes,
    gbMinutes: a.gbMinutes + b.gbMinutes,
    slotMinutes: a.slotMinutes + b.slotMinutes,
  };
}

export function isNoMinutes(c: CapacityMinutes): boolean {
  return CAPACITY_UNITS.every((u) => c[u] === 0);
}

/**
 * A window start's capacity on either side of its boundary. `inForceAt`: when the target was in
 * force (the daemon: the read that confirmed it; a plan: its send slot plus the expected
 * actuation), null when it never was by `until` (the verdict's deadline). Early time is counted
 * back at most MAX_LEAD_MS (the longest lead a pipe may have): a pipe at target since before then
 * was not scaled up for this window. Short time ends at `until`.
 */
export function capacityAround(o: {
  readonly boundary: number;
  readonly before: ScalingValues;
  readonly target: ScalingValues;
  readonly inForceAt: number | null;
  readonly until: number;
}): BoundaryCapacity {
  const rate = stepPerMinute(o.before, o.target);
  const inForce = o.inForceAt ?? Infinity;
  return {
    early: scaleMinutes(rate, Math.min(MAX_LEAD_MS, o.boundary - inForce)),
    short: scaleMinutes(rate, Math.min(o.until, inForce) - o.boundary),
  };
}

/** A pipe's scaling fields: its kind as read, else declared or implied by its policy, else all. */
export function fieldsOfPipe(pipe: PipeConfig, policy: Policy, kind?: PipeKind | null): readonly ScalingField[] {
  const k = kind ?? assumedKind(pipe, policy)?.kind;
  return k ? KIND_FIELDS[k] : SCALING_FIELDS;
}

/** What a lead plan's slot is expected to spend: in force at its send slot plus the actuation
 *  it counts on; short by as much when that is after the boundary. */
export function plannedCapacity(slot: LeadSlot, before: ScalingValues, target: ScalingValues): BoundaryCapacity {
  const inForceAt = slot.start + slot.actuationMs;
  return capacityAround({
    boundary: slot.boundary,
    before,
    target,
    inForceAt,
    until: Math.max(inForceAt, slot.boundary),
  });
}

/** A pipe's lead slot and the capacity it is expected to spend early and short (slotCapacity). */
export interface PlannedSlot {
  readonly slot: LeadSlot;
  readonly capacity: BoundaryCapacity;
}

/**
 * What one pipe's lead slot is expected to spend: the step its boundary makes for the pipe's
 * fields (needAround; `kind` as read, else declared or implied by its policy), in force at the
 * slot's send plus the actuation it counts on (plannedCapacity). The one computation behind
 * `plan` (text, JSON and HTML) and `diff`; a window start's verdict counts the same step from the
 * read that confirmed it (verdictCapacity).
 */
export function slotCapacity(
  pipe: PipeConfig,
  policy: Policy,
  slot: LeadSlot,
  kind?: PipeKind | null,
): BoundaryCapacity {
  const { before, after } = needAround(policy, pipe.bounds, fieldsOfPipe(pipe, policy, kind), slot.boundary);
  return plannedCapacity(slot, before, after);
}

/**
 * Per pipe, the capacity its lead plan's slots for the boundaries in (from, to] are expected to
 * spend early and short, summed: each boundary's slot in the plan in force just before it (the
 * last one the daemon follows, leadPlanAt), as slotCapacity counts it. `kindOf` gives a pipe's
 * kind as read (default: its declared or implied one); pipes with a fixed lead time (no slots)
 * are left out.
 */
export function plannedCapacityOver(
  config: ScalingConfig,
  from: number,
  to: number,
  opts: LeadPlanOptions & { kindOf?: (pipe: PipeConfig) => PipeKind | null | undefined } = {},
): Map<string, BoundaryCapacity> {
  const out = new Map<string, BoundaryCapacity>();
  const plans = new Map<number, LeadPlan>();
  const planBefore = (boundary: number): LeadPlan => {
    const hour = Math.floor((boundary - 1) / HOUR_MS);
    let p = plans.get(hour);
    if (!p) plans.set(hour, (p = leadPlanAt(config, boundary - 1, opts)));
    return p;
  };
  const byName = new Map(config.pipes.map((p) => [p.name, p]));
  for (const jobs of leadJobs(config, from, to, opts).values()) {
    for (const { pipe, boundary } of jobs) {
      const p = byName.get(pipe);
      const policy = p ? config.policies[p.policy] : undefined;
      const slot = planBefore(boundary)
        .slots.get(pipe)
        ?.find((s) => s.boundary === boundary);
      if (!p || !policy || !slot) continue;
      const c = slotCapacity(p, policy, slot, opts.kindOf?.(p));
      const was = out.get(pipe);
      out.set(pipe, was ? { early: addMinutes(was.early, c.early), short: addMinutes(was.short, c.short) } : c);
    }
  }
  return out;
}

/**
 * The capacity a window start's verdict reports (verdict.ts): met or late, the target in force from
 * the read that confirmed it; missed, short until `until` (the deadline, or the next window start
 * that superseded it); excluded, or a verdict an older version opened (no `before`), none.
 */
export function verdictCapacity(
  due: VerdictDue,
  judged: Judged,
  until: number = due.deadline,
): BoundaryCapacity | null {
  if (due.before === undefined || judged.verdict === 'excluded') return null;
  const inForceAt = judged.verdict === 'missed' ? null : judged.confirmedAt;
  return capacityAround({ boundary: due.boundary, before: due.before, target: due.target, inForceAt, until });
}

/** Of a key's rate, what its lead plans may use (the rest is the margin kept for the unforeseen). */
const USABLE = 0.9;

/**
 * The lead of `n` scale-ups due at one boundary on one key, at its budget's physical limit: one
 * change and one confirming read each at the key's usable rate, plus the actuation:
 * 2N / (0.9 r) + A.
 */
export function limitLeadMs(n: number, rate: { requests: number; perMs: number }, actuationMs: number): number {
  return (2 * n * rate.perMs) / (USABLE * rate.requests) + actuationMs;
}

/**
 * The time in force before the boundary that `n` scale-ups spend at the limit, summed over them:
 * one goes every 2 / (0.9 r), each in force an actuation after it goes, so the i-th of n is early
 * by (n - i) x 2 / (0.9 r), and the sum is n (n + 1) / 2 x 2 / (0.9 r). Times a scale-up's step
 * per minute (stepPerMinute), it is the capacity the limit spends early: the yardstick of the
 * actuation bench.
 */
export function limitEarlyMs(n: number, rate: { requests: number; perMs: number }): number {
  return ((n * (n + 1)) / 2) * ((2 * rate.perMs) / (USABLE * rate.requests));
}

/** Each unit as the CLI names it: "replica-min", "core-min", "GB-min", "slot-min". */
export const UNIT_WORDS: Readonly<Record<CapacityUnit, string>> = {
  replicaMinutes: 'replica-min',
  coreMinutes: 'core-min',
  gbMinutes: 'GB-min',
  slotMinutes: 'slot-min',
};

/** An amount of minutes as `plan` prints it: whole from 10 up, else to a tenth ("23", "4.5"). */
export const formatMinutes = (x: number): string => (x >= 10 ? String(Math.round(x)) : String(Math.round(x * 10) / 10));

/** "60 replica-min, 30 core-min, 120 GB-min": the units that are not 0; "none" when all are. */
export function describeMinutes(c: CapacityMinutes): string {
  const parts = CAPACITY_UNITS.filter((u) => c[u] > 0).map((u) => `${formatMinutes(c[u])} ${UNIT_WORDS[u]}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}
