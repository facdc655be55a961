// `simulate`: the daemon's loop on a fake clock. The timeline is the one stepping every `stepMs`
// from `from` would give, through the daemon's own evaluation step (step.ts): decide(), the
// recommendations kept by the daemon's rule, and a change applied at once to the simulated pipe
// with lastChange stamped for each direction it moves in.
//
// It runs at the speed of its changes: between two ticks where something can change (a window
// boundary, a cooldown or stabilization running out, the tick after a change) every tick decides
// the same, so those ticks are skipped; the one thing they would leave behind, their
// recommendation, is added at the last skipped tick. Pipes with the same policy, bounds and
// starting view share one timeline. Pure, so the daemon's tests can hold their timeline against it.
import type { ScalingValues } from '../api/index.js';
import { policyOf } from './config-lookup.js';
import { expectedActuationMs, type LeadPlanOptions } from './lead-plan.js';
import { leadPeriod, type LeadPeriod, type LeadStep } from './lead-period.js';
import { metricSignature } from './metric.js';
import { recommendationsAfter } from './recommendations.js';
import { afterChange, evaluateStep } from './step.js';
import {
  type ScalingConfig,
  type Direction,
  type LeadOutcome,
  type MetricReading,
  type PipeConfig,
  type PipeView,
  type Policy,
  type Reason,
} from './types.js';
import { nextFreezeBoundary } from './freeze.js';
import { nextBoundary } from './windows.js';

export interface SimulatedChange {
  readonly pipe: string;
  /** Epoch ms of the tick that made the change. */
  readonly at: number;
  readonly direction: Direction;
  /** Winning windows at that tick (empty: baseline). */
  readonly windows: readonly string[];
  /** The PATCH body: only the fields that change, with their new values. */
  readonly scaling: ScalingValues;
  /** The values those fields had before. */
  readonly previous: ScalingValues;
  readonly reasons: readonly Reason[];
  /** A scale-up sent ahead of its boundary (lead time): the boundary and the windows that win there. */
  readonly lead?: LeadOutcome;
  /** A scale-up: when it is expected at target (`at` plus the expected actuation); only when an
   *  actuation is expected (evaluate.actuation, or SimulateOptions.actuationMs). */
  readonly expectedAt?: number;
  /** A scale-up sent ahead of its boundary whose lead slot plans its confirmation reads: the
   *  slot's start (when it may go) and when its confirming read is expected to show it at target. */
  readonly slot?: { readonly start: number; readonly confirmedBy: number };
  /** A change a freeze held back: since when, and which freezes (it goes out when they end). */
  readonly held?: { readonly since: number; readonly freezes: readonly string[] };
  /** A change an override made: its reason, and until when it holds. */
  readonly override?: { readonly reason: string; readonly until: number };
}

/** The metric reading of a pipe at a simulated instant (recorded series), for metric policies. */
export type MetricAt = (pipe: PipeConfig, policy: Policy, now: number) => MetricReading | undefined;

export interface SimulateOptions {
  /** Readings for metric policies; without it their pipes are decided without a value. */
  readonly metricAt?: MetricAt;
  /** Called after each distinct timeline with the pipes done so far and in all. */
  readonly onProgress?: (done: number, total: number) => void;
  /** The whole config the keys' lead plans are made of, when `config` holds only some of its pipes. */
  readonly fleet?: ScalingConfig;
  /** A pipe's measured actuation (lead-plan.ts LeadPlanOptions.actuationMs); default: the config's expectation. */
  readonly actuationMs?: LeadPlanOptions['actuationMs'];
}

/**
 * Every scaling change in [from, to), ticking every `stepMs` from `from`. Pipes without a view
 * (not read) are left out: the daemon would skip them too. Sorted by time, then config order.
 */
export function simulate(
  config: ScalingConfig,
  views: Readonly<Record<string, PipeView | undefined>>,
  from: number,
  to: number,
  stepMs: number,
  opts: SimulateOptions = {},
): SimulatedChange[] {
  if (!(stepMs > 0)) throw new RangeError('stepMs must be above 0');
  // leadTime auto: the keys' lead plans in force through the period, as the daemon makes them
  // (leadPlanAt() of each hour).
  const fleet = opts.fleet ?? config;
  const lead = leadPeriod(fleet, from, to, opts.actuationMs ? { actuationMs: opts.actuationMs } : {});
  const actuationOf = (pipe: PipeConfig) => expectedActuationMs(fleet, opts.actuationMs?.(pipe));
  const groups = new Map<string, { policy: Policy; view: PipeView; pipes: PipeConfig[]; steps: readonly LeadStep[] }>();
  let total = 0;
  for (const pipe of config.pipes) {
    const view = views[pipe.name];
    if (view === undefined) continue;
    const start: PipeView = { ...view, bounds: pipe.bounds };
    const policy = policyOf(config, pipe);
    // a metric's readings are the pipe's own: such a pipe shares its timeline with no other
    const own = policy.metric !== undefined && opts.metricAt !== undefined ? pipe.name : '';
    // Pipes whose lead horizon is the same at every tick share a timeline.
    const steps = lead.steps(pipe.name);
    let ticks = '';
    let last: string | null = null;
    for (const [i, s] of steps.entries()) {
      const tick = s.at <= from ? from : nextTick(from, stepMs, s.at - 1, s.at);
      const after = steps[i + 1];
      // a step that no tick sees (the next one starts before its first tick) says nothing
      if (tick >= to || (after !== undefined && after.at <= tick)) continue;
      const value = `${s.until ?? '-'}`;
      if (value === last) continue;
      ticks += `${tick}:${value},`;
      last = value;
    }
    const key = `${pipe.policy}\u0000${own}\u0000${ticks}\u0000${JSON.stringify(start)}`;
    const group = groups.get(key);
    if (group) group.pipes.push(pipe);
    else groups.set(key, { policy, view: start, pipes: [pipe], steps });
    total++;
  }
  const order = new Map(config.pipes.map((p, i) => [p.name, i]));
  const changes: SimulatedChange[] = [];
  let done = 0;
  for (const { policy, view, pipes, steps } of groups.values()) {
    const { metricAt } = opts;
    const [first] = pipes; // a group is made with its first pipe
    const metric = policy.metric && metricAt && first ? (now: number) => metricAt(first, policy, now) : undefined;
    const timeline = pipeTimeline(policy, view, from, to, stepMs, metric, steps);
    for (const pipe of pipes) {
      const actuationMs = actuationOf(pipe);
      for (const c of timeline) {
        const expected = c.direction === 'up' && actuationMs > 0 ? { expectedAt: c.at + actuationMs } : {};
        const change = { ...c, ...expected };
        changes.push({ ...change, ...plannedSlot(change, lead, pipe.name), pipe: pipe.name });
      }
    }
    done += pipes.length;
    opts.onProgress?.(done, total);
  }
  const rank = (pipe: string): number => order.get(pipe) ?? 0; // every change is of a config pipe
  return changes.sort((a, b) => a.at - b.at || rank(a.pipe) - rank(b.pipe));
}

/** A lead scale-up's slot (in the plan in force when it went) when it plans confirmation reads:
 *  its start, and its confirming read's end (or later, when the change went after its slot: a
 *  read slot after it is at target). */
function plannedSlot(c: Omit<SimulatedChange, 'pipe'>, lead: LeadPeriod, pipe: string): Pick<SimulatedChange, 'slot'> {
  if (!c.lead || c.expectedAt === undefined) return {};
  const s = lead.slotAt(pipe, c.at, c.lead.boundary);
  if (s?.atTargetAt === undefined) return {};
  return {
    slot: { start: s.start, confirmedBy: Math.max(s.expectedAt, c.expectedAt + (s.expectedAt - s.atTargetAt)) },
  };
}

/** The changes of one pipe, as stepping every `stepMs` would make them. */
export function pipeTimeline(
  policy: Policy,
  start: PipeView,
  from: number,
  to: number,
  stepMs: number,
  metric?: (now: number) => MetricReading | undefined,
  steps: readonly LeadStep[] = [],
): Omit<SimulatedChange, 'pipe'>[] {
  const lead = new StepCursor(steps);
  const until = (now: number): Partial<Pick<PipeView, 'leadUntil'>> => {
    const u = lead.until(now);
    return u === undefined ? {} : { leadUntil: u };
  };
  const out: Omit<SimulatedChange, 'pipe'>[] = [];
  // A recorded metric is read at every tick: nothing can be skipped. Without readings a metric
  // policy holds (its onError choice) and changes only where a schedule would.
  const everyTick = policy.metric !== undefined && metric !== undefined;
  let view = start;
  /** Since when a freeze holds a change back (null: nothing held). */
  let held: SimulatedChange['held'] | null = null;
  /** The recommendation of the last tick decided, when the ticks skipped after it repeat it. */
  let repeated: { at: number; values: ScalingValues } | null = null;
  for (let now = from; now < to;) {
    if (repeated && now - stepMs > repeated.at) {
      view = {
        ...view,
        recommendations: recommendationsAfter(policy, now - stepMs, view.recommendations, {
          action: 'none',
          recommendation: repeated.values,
        }),
      };
    }
    repeated = null;
    const reading = metric?.(now);
    const { decision, recommendations } = evaluateStep(policy, now, {
      ...view,
      ...(reading ? { metric: reading } : {}),
      ...until(now),
    });
    if (decision.action === 'skip') {
      now = everyTick
        ? now + stepMs
        : nextTick(from, stepMs, now, nextEvent(policy, view, now, to, {}, lead.nextStart(now)));
      continue;
    }
    view = { ...view, recommendations };
    const freeze = decision.freeze;
    if (freeze && !held) held = { since: now, freezes: freeze.freezes };
    else if (!freeze && decision.action !== 'change') held = null;
    if (decision.action === 'change') {
      const previous: ScalingValues = {};
      for (const f of Object.keys(decision.changes) as (keyof ScalingValues)[]) {
        if (view.applied[f] !== undefined) previous[f] = view.applied[f];
      }
      const { applied, lastChange } = afterChange(view.applied, view.lastChange, decision.changes, now);
      view = { ...view, applied, lastChange };
      out.push({
        at: now,
        direction: decision.direction,
        windows: decision.windows,
        scaling: decision.changes,
        previous,
        reasons: decision.reasons,
        ...(decision.lead && decision.direction === 'up' ? { lead: decision.lead } : {}),
        ...(held && !freeze ? { held } : {}),
        ...(decision.override && view.override
          ? { override: { reason: view.override.reason, until: decision.override.until } }
          : {}),
      });
      if (!freeze) held = null;
      now += stepMs;
      continue;
    }
    if (everyTick) {
      // The ticks after this one whose readings give the same signature, up to the next event,
      // decide as this one did: only the last of them leaves its recommendation (as below).
      const sig = metricSignature(policy, reading, view.applied, now);
      const until = nextEvent(policy, view, now, to, decision.recommendation, lead.nextStart(now));
      let next = now + stepMs;
      while (sig !== null && next < until && metricSignature(policy, metric(next), view.applied, next) === sig)
        next += stepMs;
      if (next > now + stepMs && Object.keys(decision.recommendation).length > 0)
        repeated = { at: now, values: decision.recommendation };
      now = next;
      continue;
    }
    if (Object.keys(decision.recommendation).length > 0) repeated = { at: now, values: decision.recommendation };
    now = nextTick(from, stepMs, now, nextEvent(policy, view, now, to, decision.recommendation, lead.nextStart(now)));
  }
  return out;
}

/**
 * The first instant after `now` at which a decision can differ from the one made at `now`: a
 * window starts or ends, a cooldown runs out, a pause ends, or a recommendation above the current
 * one (`current`, repeated by every tick until then) comes into or leaves the stabilization window.
 */
export function nextEvent(
  policy: Policy,
  view: PipeView,
  now: number,
  to: number,
  current: ScalingValues,
  leadStart?: number,
): number {
  let next = nextBoundary(policy.windows, now, to) ?? to;
  const consider = (t: number): void => {
    if (t > now && t < next) next = t;
  };
  // A freeze starting or ending (what it held goes out), an override starting, stepping or ending.
  const freeze = nextFreezeBoundary(policy.freezes ?? [], now, to);
  if (freeze !== null) consider(freeze);
  const o = view.override;
  if (o !== undefined) {
    consider(o.setAt);
    consider(o.until);
    if (o.ramp !== undefined && now >= o.setAt) {
      consider(o.setAt + (Math.floor((now - o.setAt) / o.ramp.everyMs) + 1) * o.ramp.everyMs);
    }
  }
  // Lead time: a fixed lead sees a boundary that long before it; auto, from each slot's start.
  const lead = policy.behavior.scaleUp.leadTime ?? 'auto';
  if (lead !== 'auto' && lead > 0) {
    const ahead = nextBoundary(policy.windows, now + lead, to + lead);
    if (ahead !== null) consider(ahead - lead);
  }
  if (leadStart !== undefined) consider(leadStart);
  const { scaleUp, scaleDown } = policy.behavior;
  if (view.lastChange.up !== undefined) consider(view.lastChange.up + scaleUp.cooldownMs);
  if (view.lastChange.down !== undefined) consider(view.lastChange.down + scaleDown.cooldownMs);
  // An entry counts from its instant while at >= now - stabilization: it is gone 1 ms after at +
  // stabilization. Only one above the current recommendation holds a floor whose start or end can
  // change anything. The kept list (recommendations.ts) drops no entry before its end that a
  // floor still needs, so these are every instant the floor moves.
  for (const r of view.recommendations) {
    const above = (Object.keys(r.values) as (keyof ScalingValues)[]).some((f) => {
      const v = r.values[f];
      return current[f] === undefined || (v !== undefined && v > current[f]);
    });
    if (!above) continue;
    consider(r.at);
    consider(r.at + scaleDown.stabilizationMs + 1);
  }
  // A pause that ends: the pipe is decided again.
  if (view.paused?.until !== undefined) consider(view.paused.until);
  return next;
}

/** A pipe's lead horizon (lead-period.ts steps) as simulated time moves forward. */
class StepCursor {
  #i = 0;

  constructor(private readonly steps: readonly LeadStep[]) {}

  #seek(now: number): void {
    while ((this.steps[this.#i + 1]?.at ?? Infinity) <= now) this.#i++;
  }

  /** PipeView.leadUntil at `now`. */
  until(now: number): number | undefined {
    this.#seek(now);
    const s = this.steps[this.#i];
    return s !== undefined && s.at <= now ? s.until : undefined;
  }

  /** The next instant after `now` at which the horizon changes. */
  nextStart(now: number): number | undefined {
    this.#seek(now);
    for (let i = this.#i, s = this.steps[i]; s !== undefined; s = this.steps[++i]) if (s.at > now) return s.at;
    return undefined;
  }
}

/** The first tick of the grid (from + k * step) at or after `at`, and after `now`. */
function nextTick(from: number, stepMs: number, now: number, at: number): number {
  const tick = from + Math.ceil((at - from) / stepMs) * stepMs;
  return tick > now ? tick : now + stepMs;
}
