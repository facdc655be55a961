// `leadTime: auto`: each API key's lead plan. The scale-ups its pipes have due at the boundaries
// ahead (a window starts, or ends into a higher target) are scheduled so that, at the key's rate,
// each is confirmed at target by its boundary (lead-schedule.ts): backwards from the latest
// boundary, each change takes the latest slot that still meets its boundary and leaves room for
// the ones after it (earliest deadline first across windows, latest possible start). A change
// counts as done when a read shows the pipe at target, not when the PATCH is answered: its
// confirming read comes after its expected actuation (the daemon's measured p95 for the pipe or
// its kind, else `evaluate.actuation.expected`, at most `max`), and the plan reserves that one read
// on the same lane as the changes, in a slot they leave free. Reconcile reads are not counted:
// confirmation reads and changes go before them. A pipe's change may go from its slot's start (leadUntil());
// decide() then raises its target to what the schedule sets up to that boundary (lead.ts). Pure:
// config and instants in.
import { parse } from 'node-cron';
import { clampToLimit, KIND_FIELDS, SCALING_FIELDS, type ScalingField, type ScalingValues } from '../api/index.js';
import { assumedKind } from './kind.js';
import { targetOf } from './target.js';
import {
  boundaryLeadMs,
  keyLanes,
  LEAD_MARGIN_TICKS,
  scheduleKey,
  type KeyLead,
  type LeadJob,
  type LeadSlot,
} from './lead-schedule.js';
import {
  MAX_LEAD_MS,
  type ActuationSettings,
  type Bounds,
  type ScalingConfig,
  type PipeConfig,
  type Policy,
  type Window,
} from './types.js';
import { activeWindows, nextBoundary } from './windows.js';

export {
  CONFIRM_READS_PLANNED,
  LEAD_MARGIN_TICKS,
  LEAD_RATE_SHARE,
  type KeyLead,
  type LeadSlot,
} from './lead-schedule.js';

/** No actuation expected until configured or measured (today's plan); a cap of 10 minutes. */
export const ACTUATION_DEFAULTS: ActuationSettings = { expectedMs: 0, maxMs: 600_000, minSamples: 20 };

/** evaluate.actuation.firstRead's default: the soonest a confirmation read follows a change (the
 *  answer itself was a read of the pipe, and the live platform's transient 0/null values last a
 *  few seconds after a change). */
export const FIRST_READ_MS = 15_000;

/**
 * What the plan counts on for one pipe between sending a scale-up and seeing it at target:
 * `measured` (the caller's p95 for the pipe, or its kind's, once it has enough samples) when
 * given, else the configured expectation; never more than the configured cap. Any actuation
 * counted is firstRead at least: the daemon's confirming read never goes sooner after the send
 * (an expectation of 4 s with the default firstRead is confirmed 15 s after the send).
 */
export function expectedActuationMs(config: ScalingConfig, measured?: number): number {
  const a = config.evaluate.actuation ?? ACTUATION_DEFAULTS;
  const ms = measured !== undefined && Number.isFinite(measured) ? measured : a.expectedMs;
  if (ms <= 0) return 0;
  return Math.min(Math.max(ms, Math.max(1, a.firstReadMs ?? FIRST_READ_MS)), a.maxMs);
}

export interface LeadPlan {
  /** The boundaries planned are those in (from, to]. */
  readonly from: number;
  readonly to: number;
  /** Per pipe (name), its slots by boundary. Pipes with a fixed leadTime have none. */
  readonly slots: ReadonlyMap<string, readonly LeadSlot[]>;
  readonly keys: ReadonlyMap<string, KeyLead>;
}

const intervals = new Map<string, number>();

/** The longest gap between two ticks of a cron expression (within a day; at most an hour). */
export function tickIntervalMs(cron: string): number {
  let ms = intervals.get(cron);
  if (ms === undefined) {
    const f = parse(cron);
    const at: number[] = [];
    for (const h of f.hour) for (const m of f.minute) for (const s of f.second) at.push(h * 3_600 + m * 60 + s);
    at.sort((a, b) => a - b);
    // each tick's gap to the one before it, the first's to the last of the day before
    let gap = at.length > 0 ? 0 : 86_400;
    let prev = (at.at(-1) ?? 0) - 86_400;
    for (const t of at) {
      gap = Math.max(gap, t - prev);
      prev = t;
    }
    ms = Math.min(gap, 3_600) * 1_000;
    intervals.set(cron, ms);
  }
  return ms;
}

/** Time one key's lead plan gives `changes` changes due at one boundary: at LEAD_RATE_SHARE of
 *  its rate, the last LEAD_MARGIN_TICKS ticks before the boundary; with an actuation counted, each
 *  with its confirming read on the same lane (about 2N slots plus the actuation). */
export function autoLeadMs(
  changes: number,
  rate: { requests: number; perMs: number },
  tickMs: number,
  actuationMs = 0,
): number {
  return boundaryLeadMs(changes, keyLanes(rate, LEAD_MARGIN_TICKS * tickMs), actuationMs);
}

/** The lowest value of each field the schedule sets in a state, within the pipe's bounds and the
 *  platform's ranges (also the target a window start's verdict checks, verdict.ts). */
export function floors(
  policy: Policy,
  winners: readonly Window[],
  bounds: Bounds,
  fields: readonly ScalingField[],
): ScalingValues {
  const t = targetOf(policy, winners);
  const out: ScalingValues = {};
  for (const f of fields) {
    const ft = t[f];
    if (ft === undefined) continue;
    let v = 'value' in ft ? ft.value : ft.min;
    const b = bounds[f];
    if (b?.max !== undefined) v = Math.min(v, b.max);
    if (b?.min !== undefined) v = Math.max(v, b.min);
    out[f] = clampToLimit(f, v);
  }
  return out;
}

/** What the schedule needs on either side of a boundary: the lowest value of each of the pipe's
 *  fields the winners accept just before it and from it on. The one definition of the step a
 *  boundary makes: whether a scale-up is due for it (leadJobs), a window start's target and what
 *  came before it (verdict.ts), and the capacity that step spends early or short (early-capacity.ts). */
export function needAround(
  policy: Policy,
  bounds: Bounds,
  fields: readonly ScalingField[],
  boundary: number,
): { before: ScalingValues; after: ScalingValues } {
  return {
    before: floors(policy, activeWindows(policy.windows, boundary - 1).winners, bounds, fields),
    after: floors(policy, activeWindows(policy.windows, boundary).winners, bounds, fields),
  };
}

/** Whether some field's lowest value rises at the boundary: a scale-up is due then. */
function rises(before: ScalingValues, after: ScalingValues): boolean {
  return (Object.keys(after) as ScalingField[]).some((f) => {
    const v = after[f];
    return before[f] === undefined || (v !== undefined && v > before[f]);
  });
}

export interface LeadPlanOptions {
  /** The key a pipe's requests go to (after pool assignment); default `pipe.key`. */
  readonly keyOf?: (pipe: PipeConfig) => string;
  /** The pipe's measured actuation (p95 of its own, or its kind's, once it has
   *  `evaluate.actuation.minSamples`); undefined: the configured expectation. Capped either way. */
  readonly actuationMs?: (pipe: PipeConfig) => number | undefined;
}

/** The scale-ups due in (from, to], by key, each key's in config order and by boundary. */
export function leadJobs(
  config: ScalingConfig,
  from: number,
  to: number,
  opts: LeadPlanOptions = {},
): Map<string, LeadJob[]> {
  const keyOf = opts.keyOf ?? ((p: PipeConfig) => p.key);
  const boundaries = new Map<string, number[]>();
  const rising = new Map<string, boolean[]>();
  const jobs = new Map<string, LeadJob[]>();
  config.pipes.forEach((pipe, index) => {
    const policy = config.policies[pipe.policy];
    if (!policy || pipe.paused !== undefined || (policy.behavior.scaleUp.leadTime ?? 'auto') !== 'auto') return;
    let bs = boundaries.get(pipe.policy);
    if (!bs) {
      bs = [];
      for (let t = nextBoundary(policy.windows, from, to); t !== null; t = nextBoundary(policy.windows, t, to))
        bs.push(t);
      boundaries.set(pipe.policy, bs);
    }
    if (bs.length === 0) return;
    const kind = assumedKind(pipe, policy)?.kind;
    const fields = kind ? KIND_FIELDS[kind] : SCALING_FIELDS;
    const group = `${pipe.policy}\u0000${JSON.stringify(pipe.bounds)}\u0000${fields.join()}`;
    let up = rising.get(group);
    if (!up) {
      up = bs.map((b) => {
        const { before, after } = needAround(policy, pipe.bounds, fields, b);
        return rises(before, after);
      });
      rising.set(group, up);
    }
    const key = keyOf(pipe);
    let list = jobs.get(key);
    if (!list) jobs.set(key, (list = []));
    const actuationMs = expectedActuationMs(config, opts.actuationMs?.(pipe));
    for (const [i, boundary] of bs.entries()) if (up[i]) list.push({ pipe: pipe.name, index, boundary, actuationMs });
  });
  return jobs;
}

/** One key's slots (latest first) for its jobs (scheduleKey), or null when the key has no rate. */
export function scheduleJobs(
  config: ScalingConfig,
  key: string,
  jobs: readonly LeadJob[],
): ReturnType<typeof scheduleKey> | null {
  const rate = config.api.keys[key]?.rateLimit;
  if (!rate || jobs.length === 0) return null;
  const marginMs = LEAD_MARGIN_TICKS * tickIntervalMs(config.evaluate.cron);
  return scheduleKey(key, [...jobs], keyLanes(rate, marginMs));
}

/** The lead plan of every key for the boundaries in (from, to]. The daemon, `status`, `plan` and
 *  `simulate` take the plan in force at an instant from leadPlanAt(), never from a span of their own. */
export function leadPlan(config: ScalingConfig, from: number, to: number, opts: LeadPlanOptions = {}): LeadPlan {
  const slots = new Map<string, LeadSlot[]>();
  const keys = new Map<string, KeyLead>();
  for (const [key, list] of leadJobs(config, from, to, opts)) {
    const planned = scheduleJobs(config, key, list);
    if (!planned) continue;
    for (const { pipe, slot } of planned.slots) {
      let own = slots.get(pipe);
      if (!own) slots.set(pipe, (own = []));
      own.push(slot);
    }
    if (planned.lead) keys.set(key, planned.lead);
  }
  for (const own of slots.values()) own.reverse();
  return { from, to, slots, keys };
}

const HOUR_MS = 3_600_000;

/**
 * The boundaries the daemon and `plan` plan at `now`: from the start of its hour to 48 h later, so
 * every replica computes the same plan within an hour and any boundary a change may lead (at most
 * 24 h) is in it.
 */
export function leadPlanSpan(now: number): { from: number; to: number } {
  const from = Math.floor(now / HOUR_MS) * HOUR_MS;
  return { from, to: from + 2 * MAX_LEAD_MS };
}

/**
 * The keys' lead plan in force at `at`: the one the daemon follows (src/daemon/lanes/lead-plans.ts),
 * whose next slots `status` shows, that `plan` decides with, and that `simulate` steps through
 * hour by hour (lead-period.ts). The one entry point: made from the same inputs, all four tell
 * the same slots.
 */
export function leadPlanAt(config: ScalingConfig, at: number, opts: LeadPlanOptions = {}): LeadPlan {
  const span = leadPlanSpan(at);
  return leadPlan(config, span.from, span.to, opts);
}

/** The pipe's first slot whose boundary is after `now` (for plan and status), or null. */
export function nextSlot(plan: LeadPlan, pipe: string, now: number): LeadSlot | null {
  return (plan.slots.get(pipe) ?? []).find((s) => s.boundary > now) ?? null;
}

/**
 * The first instant in (after, by] at which one of the pipe's slots starts (its boundary after
 * it), or undefined. An evaluation at a tick before a slot's start queues the pipe's turn for it
 * (src/daemon/work/evaluate.ts), so the change goes at its slot's start rather than at the pipe's
 * first evaluation after it, which waits behind every other pipe's.
 */
export function slotStartIn(plan: LeadPlan, pipe: string, after: number, by: number): number | undefined {
  let first: number | undefined;
  for (const s of plan.slots.get(pipe) ?? []) {
    if (s.start > after && s.start <= by && s.start < s.boundary && (first === undefined || s.start < first))
      first = s.start;
  }
  return first;
}

/**
 * The instant up to which the schedule may raise this pipe's target at `now` (PipeView.leadUntil):
 * the latest boundary ahead whose slot has started; undefined when none has.
 */
export function leadUntil(plan: LeadPlan, pipe: string, now: number): number | undefined {
  let until: number | undefined;
  for (const s of plan.slots.get(pipe) ?? []) {
    if (s.start <= now && now < s.boundary && (until === undefined || s.boundary > until)) until = s.boundary;
  }
  return until;
}
