// How good a forecast is: the error of the hourly peak over the last week, by replaying the model
// on the history it was fitted from. Every SCORE_EVERY_MS of the scored week the model is fitted on
// what was known then and predicts the horizon after; each hour's predicted peak is held against
// the hour's actual peak. The error is the weighted absolute percentage error of those peaks,
// sum |predicted - actual| / sum actual: quiet hours (a peak near 0) do not blow it up, and a
// missed ramp weighs by its size. Pure.
import { fitForecast, predictSpan, WEEK_MS, type Point } from './forecast.js';

const HOUR_MS = 3_600_000;
/** Forecasts replayed at most this often: 28 fits over a week, whatever the horizon. */
export const SCORE_EVERY_MS = 6 * HOUR_MS;

export interface ForecastScore {
  /** sum |predicted peak - actual peak| / sum actual peak over the scored hours (0.1 = 10 %). */
  readonly peakError: number;
  readonly hours: number;
}

/** The highest value of each hour (epoch ms of its start -> peak). */
export function hourlyPeaks(points: readonly Point[]): Map<number, number> {
  const peaks = new Map<number, number>();
  for (const [t, v] of points) {
    const hour = Math.floor(t / HOUR_MS) * HOUR_MS;
    const was = peaks.get(hour);
    if (was === undefined || v > was) peaks.set(hour, v);
  }
  return peaks;
}

/** The peak error of the hours both series cover, or null when they share none. */
export function peakError(actual: readonly Point[], predicted: readonly Point[]): ForecastScore | null {
  const a = hourlyPeaks(actual);
  const p = hourlyPeaks(predicted);
  let missed = 0;
  let total = 0;
  let hours = 0;
  for (const [hour, peak] of a) {
    const guess = p.get(hour);
    if (guess === undefined) continue;
    missed += Math.abs(guess - peak);
    total += peak;
    hours++;
  }
  if (hours === 0) return null;
  return { peakError: total > 0 ? missed / total : missed > 0 ? 1 : 0, hours };
}

/**
 * The peak error over the last week before `at` (the part of it with 24 h of history before), of
 * forecasts made every max(horizon, SCORE_EVERY_MS) from up to `historyMs` of what came before
 * each. null when no forecast could be made.
 */
export function scoreForecast(
  points: readonly Point[],
  at: number,
  stepMs: number,
  horizonMs: number,
  historyMs: number,
): ForecastScore | null {
  // Each forecast predicts up to the next one (beyond the horizon when that is shorter), so every
  // hour of the week is scored, some further ahead than the daemon looks: an upper bound.
  const every = Math.max(horizonMs, SCORE_EVERY_MS);
  const predicted: Point[] = [];
  let lo = 0;
  let hi = 0;
  for (let origin = at - Math.floor(WEEK_MS / every) * every; origin < at; origin += every) {
    // the points in (origin - history, origin], found by moving two cursors forwards
    while ((points[lo]?.[0] ?? Infinity) <= origin - historyMs) lo++;
    while ((points[hi]?.[0] ?? Infinity) <= origin) hi++;
    const fit = fitForecast(points.slice(lo, hi), origin, stepMs);
    if ('model' in fit) predicted.push(...predictSpan(fit.model, origin, Math.min(at - 1, origin + every), stepMs));
  }
  if (predicted.length === 0) return null;
  const from = predicted[0]?.[0] ?? at;
  return peakError(
    points.filter(([t]) => t >= from && t < at),
    predicted,
  );
}
