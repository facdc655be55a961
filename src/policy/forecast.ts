// A metric's forecast from its own history: a seasonal profile with a robust trend and level.
// Pure: points and instants in, a model and its predictions out; the daemon fetches the history.
//
// The model, fitted on points (epoch ms, value) evenly spaced by `stepMs`:
// - trend: the median over matching days a week apart of (day's median - same weekday's median a
//   week before) / 7 days (Theil-Sen on weekly pairs: weekday and weekend levels do not bias it);
//   none under 8 days of history;
// - profile: per slot of the week (UTC), the median of the detrended values of that slot and its
//   neighbours (+-15 min) in every week, leaving out the last LEVEL_MS: a burst in one week
//   moves a median of 14 little.
//   Under 7 days of history the profile is per slot of the day instead;
// - level: the median of what the profile misses the last LEVEL_MS by, added to every prediction
//   (a shift of the whole load is caught within hours, a burst is not taken for one).
// Seasonality is in UTC: after a DST change a local-time workload's profile is an hour off until
// the history holds a week of the new offset (the level absorbs part of it meanwhile).
// Why not a library: docs/decisions.md#forecast (the maintained one, augurs, is WASM-only).

export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;
/** Under this much history there is no forecast. */
export const MIN_HISTORY_MS = DAY_MS;
/** Values this close to a slot (each side) count towards its median: a burst of up to 30 min in
 *  one of two weeks is then less than half of them. */
const SMOOTH_MS = 15 * 60_000;
/** The recent span whose misses set the level. */
const LEVEL_MS = 6 * 3_600_000;

export type Point = readonly [number, number];

export interface ForecastModel {
  /** The last instant of the history (predictions count their trend from here). */
  readonly at: number;
  readonly stepMs: number;
  /** 'week': a profile per slot of the week; 'day': per slot of the day (under 7 days of history). */
  readonly season: 'week' | 'day';
  readonly profile: readonly number[];
  /** Change of the level per ms. */
  readonly slope: number;
  readonly level: number;
}

export type FitResult = { readonly model: ForecastModel } | { readonly error: string };

/** The median of `values` (sorted in place); NaN for none. */
export function median(values: number[]): number {
  const s = values.sort((a, b) => a - b);
  const mid = s.length >> 1;
  const upper = s[mid] ?? NaN;
  return s.length % 2 === 1 ? upper : ((s[mid - 1] ?? NaN) + upper) / 2;
}

const mod = (a: number, n: number): number => ((a % n) + n) % n;

function slotOf(t: number, stepMs: number, periodMs: number): number {
  return Math.floor(mod(t, periodMs) / stepMs);
}

/** The robust trend per ms: Theil-Sen over the daily medians of days a week apart. */
function weeklySlope(points: readonly Point[], at: number): number {
  const days = new Map<number, number[]>();
  for (const [t, v] of points) {
    const d = Math.floor((at - t) / DAY_MS);
    let list = days.get(d);
    if (!list) days.set(d, (list = []));
    list.push(v);
  }
  const slopes: number[] = [];
  for (const [d, values] of days) {
    const before = days.get(d + 7);
    if (before && values.length > 0 && before.length > 0) slopes.push((median(values) - median(before)) / WEEK_MS);
  }
  return slopes.length === 0 ? 0 : median(slopes);
}

/**
 * Fits the model on `points` (sorted by time, non-finite and negative values are left out), the
 * history up to `at`. Under MIN_HISTORY_MS of history: an error that says so.
 */
export function fitForecast(points: readonly Point[], at: number, stepMs: number): FitResult {
  const good = points.filter(([t, v]) => t <= at && Number.isFinite(v) && v >= 0);
  const first = good[0];
  const last = good.at(-1);
  if (first === undefined || last === undefined || last[0] - first[0] < MIN_HISTORY_MS - stepMs) {
    const span = first && last ? last[0] - first[0] : 0;
    return { error: `${Math.floor(span / 3_600_000)} h of history, a forecast needs 24 h` };
  }
  const spanMs = last[0] - first[0];
  const season = spanMs >= WEEK_MS - stepMs ? 'week' : 'day';
  const periodMs = season === 'week' ? WEEK_MS : DAY_MS;
  const slope = weeklySlope(good, at);
  const slots = Math.round(periodMs / stepMs);
  const buckets: number[][] = Array.from({ length: slots }, () => []);
  for (const [t, v] of good) if (t <= at - LEVEL_MS) buckets[slotOf(t, stepMs, periodMs)]?.push(v - slope * (t - at));
  const smooth = Math.max(1, Math.round(SMOOTH_MS / stepMs));
  const profile: number[] = [];
  for (let s = 0; s < slots; s++) {
    const around: number[] = [];
    for (let k = -smooth; k <= smooth; k++) around.push(...(buckets[mod(s + k, slots)] ?? []));
    profile.push(median(around));
  }
  // A slot no point fell near (a gap in the history) takes the nearest known slot before it.
  const known = profile.findIndex((v) => !Number.isNaN(v));
  for (let i = 0; i < slots; i++) {
    const s = mod(known + i, slots);
    if (Number.isNaN(profile[s])) profile[s] = profile[mod(s - 1, slots)] ?? 0;
  }
  const base: ForecastModel = { at, stepMs, season, profile, slope, level: 0 };
  const misses = good.filter(([t]) => t > at - LEVEL_MS).map(([t, v]) => v - predictAt(base, t));
  return { model: { ...base, level: misses.length > 0 ? median(misses) : 0 } };
}

/** The model's value at `t` (never negative). */
export function predictAt(model: ForecastModel, t: number): number {
  const periodMs = model.season === 'week' ? WEEK_MS : DAY_MS;
  const seasonal = model.profile[slotOf(t, model.stepMs, periodMs)] ?? 0;
  return Math.max(0, seasonal + model.slope * (t - model.at) + model.level);
}

/** Predictions every `stepMs` over (from, to]: the values a forecast stores. */
export function predictSpan(model: ForecastModel, from: number, to: number, stepMs: number): Point[] {
  const out: Point[] = [];
  for (let t = from + stepMs; t <= to; t += stepMs) out.push([t, predictAt(model, t)]);
  return out;
}

/** The highest predicted value over [from, to], or null when no point covers it. A point stands
 *  for the step up to it, so the first one at or after `to` counts too. Points sorted by time. */
export function peakBetween(points: readonly Point[], from: number, to: number): number | null {
  let peak: number | null = null;
  for (const [t, v] of points) {
    if (t < from) continue;
    peak = peak === null ? v : Math.max(peak, v);
    if (t >= to) break;
  }
  return peak;
}
