// Forecasts replayed from a recorded series, for `simulate --metrics`, `recommend` and the bench:
// at each refresh period the model is fitted on what the series held before it (as the daemon's
// range query would return it: the newest value at or before each 5-minute step, over the
// history), and predicts the horizon. One fit per series and period, cached. Pure.
import { fitForecast, predictSpan, type Point } from './forecast.js';
import { FORECAST_STEP_MS } from './forecast-set.js';
import { pickSeries, pointBefore, type RecordedSeries } from './metric-series.js';
import type { ForecastReading, ForecastSpec, MetricReading, PipeConfig, Policy } from './types.js';

/** The series as a range query over [from, to] every step returns it (no value older than 5 min). */
export function sampled(points: readonly Point[], from: number, to: number, stepMs: number): Point[] {
  const out: Point[] = [];
  const first = Math.ceil(from / stepMs) * stepMs;
  let i = pointBefore(points, first);
  for (let t = first; t <= to; t += stepMs) {
    while ((points[i + 1]?.[0] ?? Infinity) <= t) i++;
    const p = points[i];
    if (p !== undefined && t - p[0] <= 300_000) out.push([t, p[1]]);
  }
  return out;
}

const cache = new WeakMap<readonly Point[], Map<string, ForecastReading>>();

/** The forecast the daemon would have had at `now` from a recorded series (its refresh period's). */
export function replayedForecast(points: readonly Point[], spec: ForecastSpec, now: number): ForecastReading {
  const slot = Math.floor(now / spec.refreshMs) * spec.refreshMs;
  const key = `${slot}:${spec.historyMs}:${spec.horizonMs}`;
  let byPeriod = cache.get(points);
  if (!byPeriod) cache.set(points, (byPeriod = new Map<string, ForecastReading>()));
  const found = byPeriod.get(key);
  if (found) return found;
  const fit = fitForecast(sampled(points, slot - spec.historyMs, slot, FORECAST_STEP_MS), slot, FORECAST_STEP_MS);
  const reading: ForecastReading =
    'error' in fit ? fit : { points: predictSpan(fit.model, slot, slot + spec.horizonMs, FORECAST_STEP_MS) };
  byPeriod.set(key, reading);
  return reading;
}

/** A recorded reading with the forecast replayed from the same series, for a forecast policy. */
export function withReplayedForecast(
  series: readonly RecordedSeries[],
  policy: Policy,
  pipe: PipeConfig,
  now: number,
  reading: MetricReading,
): MetricReading {
  const spec = policy.metric?.forecast;
  if (!spec || 'error' in reading) return reading;
  const one = pickSeries(series, policy, pipe);
  return { ...reading, forecast: 'error' in one ? one : replayedForecast(one.points, spec, now) };
}
