// The timeline of one pipe over a period, for pictures of a simulation: each scaling field as a
// step series (a value holds until the next change), the spans in which its policy's windows
// are active, and for a metric policy the band of bounds its metric moves within. Pure.
import { KIND_FIELDS, SCALING_FIELDS, type ScalingField } from '../api/index.js';
import { policyOf } from './config-lookup.js';
import { metricField } from './metric.js';
import { metricBandSpans, type BandSpan } from './metric-series.js';
import type { SimulatedChange } from './simulate.js';
import type { ScalingConfig, MetricField, PipeConfig, PipeView, Window } from './types.js';
import { activeWindows, nextBoundary } from './windows.js';

export interface StepPoint {
  readonly at: number;
  readonly value: number;
  /** The change that set this value (absent for the starting value). */
  readonly change?: SimulatedChange;
}

export interface WindowSpan {
  readonly from: number;
  readonly to: number;
  /** Active windows in policy order, the winners first. */
  readonly names: readonly string[];
}

export interface PipeTimeline {
  readonly pipe: PipeConfig;
  /** The fields the pipe's kind takes, each from the starting value through every change. */
  readonly series: Readonly<Partial<Record<ScalingField, readonly StepPoint[]>>>;
  readonly windows: readonly WindowSpan[];
  /** The spans in which the policy's freezes hold (names: the freezes in force). */
  readonly freezes: readonly WindowSpan[];
  /** The time zone the policy's windows are written in (the first window's), or UTC. */
  readonly zone: string;
  /** A metric policy's field and the bounds (window's or baseline's) its metric moves it within. */
  readonly metricBand?: { readonly field: MetricField; readonly spans: readonly BandSpan[] };
}

/** The spans of [from, to) in which at least one window is active, split where the set changes. */
export function windowSpans(windows: readonly Window[], from: number, to: number): WindowSpan[] {
  const spans: WindowSpan[] = [];
  for (let t = from; t < to;) {
    const next = Math.min(nextBoundary(windows, t, to) ?? to, to);
    const { active, winners } = activeWindows(windows, t);
    if (active.length > 0) {
      const names = [...winners, ...active.filter((w) => !winners.includes(w))].map((w) => w.name);
      const last = spans.at(-1);
      if (last?.to === t && last.names.join() === names.join()) spans[spans.length - 1] = { ...last, to: next };
      else spans.push({ from: t, to: next, names });
    }
    t = next > t ? next : t + 60_000;
  }
  return spans;
}

export function pipeTimeline(
  config: ScalingConfig,
  pipe: PipeConfig,
  view: PipeView,
  changes: readonly SimulatedChange[],
  from: number,
  to: number,
): PipeTimeline {
  const policy = policyOf(config, pipe);
  const fields = view.kind ? KIND_FIELDS[view.kind] : SCALING_FIELDS.filter((f) => view.applied[f] !== undefined);
  const series: Partial<Record<ScalingField, StepPoint[]>> = {};
  for (const field of fields) {
    const start = view.applied[field];
    const points: StepPoint[] = start === undefined ? [] : [{ at: from, value: start }];
    for (const change of changes) {
      const value = change.scaling[field];
      if (change.pipe === pipe.name && value !== undefined && change.at >= from && change.at < to)
        points.push({ at: change.at, value, change });
    }
    if (points.length > 0) series[field] = points;
  }
  const first = policy.windows.find((w) => w.kind === 'recurring');
  const field = policy.metric && view.kind ? metricField(policy.metric, KIND_FIELDS[view.kind]) : null;
  return {
    pipe,
    series,
    windows: windowSpans(policy.windows, from, to),
    freezes: windowSpans(
      (policy.freezes ?? []).map((f) => f.window),
      from,
      to,
    ).filter((s) => s.names.length > 0),
    zone: first?.kind === 'recurring' ? first.timezone : 'UTC',
    ...(field !== null ? { metricBand: { field, spans: metricBandSpans(policy, field, from, to) } } : {}),
  };
}
