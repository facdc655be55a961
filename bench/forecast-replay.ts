// The forecast scenario's replay: a pipe on a metric policy over the last week of a 21-day trace
// (daily and weekly seasonality, noise, bursts), decided every minute by the daemon's own
// evaluation step (pipeTimeline), once reacting only and once with `forecast: scale`, the
// forecast refitted every refresh from the 14 days before it (replayedForecast, the model the
// daemon runs). A change gives capacity `actuation` after it is made (a scale-down at once).
// A ramp is a step up of what the noise-free load needs at target, within the policy's tolerance
// (ceil(load / (target x 1.1)): a policy holds its replicas within it); it is met when the capacity
// is there at the step, else late by the time until it is.
import { pipeTimeline } from '../src/policy/simulate.js';
import { replayedForecast } from '../src/policy/forecast-replay.js';
import { DAY_MS } from '../src/policy/forecast.js';
import type { ForecastSpec, MetricReading, PipeView, Policy } from '../src/policy/types.js';
import { seasonalTrace, seasonalValue } from '../test/policy/seasonal-trace.js';

const MIN = 60_000;
export const PER = 100;
const MAX = 30;

export const FORECAST: ForecastSpec = {
  historyMs: 14 * DAY_MS,
  horizonMs: 2 * 3_600_000,
  mode: 'scale',
  refreshMs: 15 * MIN,
  actuationMs: 5 * MIN,
};

export function replayPolicy(forecast?: ForecastSpec): Policy {
  return {
    name: forecast ? 'forecast' : 'reactive',
    baseline: { replicas: { min: 1, max: MAX } },
    windows: [],
    behavior: {
      scaleUp: { maxStep: {}, cooldownMs: 0, leadTime: 0 },
      scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 10 * MIN },
    },
    metric: {
      query: 'orders_in_per_second',
      match: {},
      targetPer: { replicas: PER },
      onError: { kind: 'hold' },
      staleAfterMs: 2 * MIN,
      tolerance: 0.1,
      ...(forecast ? { forecast } : {}),
    },
  };
}

export interface ReplayRun {
  readonly ramps: number;
  readonly met: number;
  /** Minutes late of each ramp not met. */
  readonly late: readonly number[];
  /** Replica-hours of capacity over the week. */
  readonly replicaHours: number;
  readonly scaleIns: number;
  /** Scale-ins below what the reading alone asked for (a forecast's doing). */
  readonly forecastScaleIns: number;
  readonly changes: number;
}

export function replayWeek(from: number, seed = 26): { reactive: ReplayRun; forecast: ReplayRun } {
  const start = from + 14 * DAY_MS;
  const end = start + 7 * DAY_MS;
  const trace = seasonalTrace({ from, to: end, stepMs: MIN, seed });
  const valueAt = (t: number): number => trace[Math.floor((t - from) / MIN)]?.[1] ?? 0;
  const view: PipeView = {
    kind: 'stream',
    state: 'Running',
    applied: { replicas: 1 },
    bounds: {},
    lastChange: {},
    recommendations: [],
    endpoints: {},
  };
  const run = (forecast?: ForecastSpec): ReplayRun => {
    const policy = replayPolicy(forecast);
    const metric = (now: number): MetricReading => {
      const reading = { value: valueAt(now), at: now };
      return forecast ? { ...reading, forecast: replayedForecast(trace, forecast, now) } : reading;
    };
    const changes = pipeTimeline(policy, view, start, end, MIN, metric);
    // applied replicas per minute, then the capacity: a rise counts `actuation` later
    const minutes = (end - start) / MIN;
    const applied = new Array<number>(minutes).fill(1);
    let c = 0;
    let now = 1;
    for (let i = 0; i < minutes; i++) {
      while (changes[c] !== undefined && (changes[c]?.at ?? Infinity) <= start + i * MIN) {
        now = changes[c]?.scaling.replicas ?? now;
        c++;
      }
      applied[i] = now;
    }
    const act = FORECAST.actuationMs / MIN;
    const capacity = applied.map((a, i) => Math.min(a, applied[Math.max(0, i - act)] ?? a));
    const atTarget = PER * (1 + policy.metric!.tolerance);
    const need = (i: number) =>
      Math.min(MAX, Math.max(1, Math.ceil(seasonalValue(start + i * MIN, { from }) / atTarget)));
    let ramps = 0;
    let met = 0;
    const late: number[] = [];
    for (let i = 1; i < minutes; i++) {
      const n = need(i);
      if (n <= need(i - 1)) continue;
      ramps++;
      if ((capacity[i] ?? 0) >= n) {
        met++;
        continue;
      }
      let j = i;
      while (j < minutes && (capacity[j] ?? 0) < n) j++;
      late.push(j - i);
    }
    let scaleIns = 0;
    let forecastScaleIns = 0;
    for (const ch of changes) {
      if (ch.direction !== 'down') continue;
      scaleIns++;
      const reactive = Math.min(MAX, Math.max(1, Math.ceil(valueAt(ch.at) / PER)));
      if ((ch.scaling.replicas ?? 0) < reactive) forecastScaleIns++;
    }
    const replicaHours = capacity.reduce((a, b) => a + b, 0) / 60;
    return { ramps, met, late, replicaHours, scaleIns, forecastScaleIns, changes: changes.length };
  };
  return { reactive: run(), forecast: run(FORECAST) };
}
