// The forecasts of one metric policy at one refresh: every series its range query returned, fitted
// and predicted over the horizon, and the policy's score. The daemon makes one per policy per
// refresh (and shares it through Redis), `plan` one from a live range query, the bench one per
// replayed refresh: the same code for all three. Pure.
import { fitForecast, median, predictSpan, type Point } from './forecast.js';
import { scoreForecast } from './forecast-score.js';
import { indexSamples, matchKey } from './metric-match.js';
import type { ForecastReading, ForecastSpec } from './types.js';

/** The history is read, and the forecast predicted, at this step. */
export const FORECAST_STEP_MS = 300_000;
/** A policy's score is the median of its first series' scores (sorted by labels): the replay costs
 *  28 fits per series, so a fleet of a thousand series is scored on a sample. */
export const MAX_SCORED_SERIES = 10;

export interface SeriesForecast {
  readonly labels: Readonly<Record<string, string>>;
  readonly points: readonly Point[];
}

export type ForecastSet =
  | {
      readonly at: number;
      readonly series: readonly SeriesForecast[];
      /** The median peak error of the scored series (forecast-score.ts), null when none could be scored. */
      readonly peakError: number | null;
    }
  | { readonly at: number; readonly error: string };

/** The forecast of each series of a range query's answer, made at `at`. */
export function makeForecasts(
  history: readonly { readonly labels: Readonly<Record<string, string>>; readonly points: readonly Point[] }[],
  at: number,
  spec: Pick<ForecastSpec, 'historyMs' | 'horizonMs'>,
): ForecastSet {
  if (history.length === 0) return { at, error: 'the range query returned no series' };
  const series: SeriesForecast[] = [];
  let firstError: string | null = null;
  for (const s of history) {
    const fit = fitForecast(s.points, at, FORECAST_STEP_MS);
    if ('error' in fit) firstError ??= fit.error;
    else series.push({ labels: s.labels, points: predictSpan(fit.model, at, at + spec.horizonMs, FORECAST_STEP_MS) });
  }
  if (series.length === 0) return { at, error: firstError ?? 'no forecast' };
  const scores: number[] = [];
  const byLabels = [...history].sort((a, b) => (JSON.stringify(a.labels) < JSON.stringify(b.labels) ? -1 : 1));
  for (const s of byLabels.slice(0, MAX_SCORED_SERIES)) {
    const score = scoreForecast(s.points, at, FORECAST_STEP_MS, spec.horizonMs, spec.historyMs);
    if (score !== null) scores.push(score.peakError);
  }
  const peakError = scores.length === 0 ? null : median(scores);
  return { at, series, peakError };
}

/** Finds a pipe's forecast in a set (the one series whose labels its match picks, or why there is
 *  none), indexing the set once for all the policy's pipes. */
export function forecastLookup(
  set: ForecastSet,
  match: Readonly<Record<string, string>>,
): (wanted: Readonly<Record<string, string>>) => ForecastReading {
  if ('error' in set) return () => ({ error: set.error });
  const names = Object.keys(match).sort();
  const index = names.length === 0 ? null : indexSamples(set.series, names);
  const score = set.peakError !== null ? { peakError: set.peakError } : {};
  return (wanted) => {
    const picked = index === null ? set.series : (index.get(matchKey(names, wanted)) ?? []);
    const [one] = picked;
    if (picked.length === 1 && one !== undefined) return { points: one.points, ...score };
    return {
      error:
        picked.length === 0
          ? 'no forecast for this series (under 24 h of history)'
          : `${picked.length} forecast series match the pipe`,
    };
  };
}
