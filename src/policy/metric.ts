// Target tracking on a metric, inside the bounds the schedule sets. Pure: the evaluate job fetches
// the pipe's value and passes it in the view; this turns it into the recommendation of the field
// the metric drives. The window (or baseline) gives the bounds, a fixed `set` being min = max, so
// a metric never moves a fixed value. Missing data never scales down: an error, an empty or stale
// value, NaN, Inf or a negative value gives the policy's onError choice (hold by default).
// A forecast (metric.forecast) is the peak predicted over the actuation time plus the lead: in
// scale mode it may raise the recommendation, never lower it (no scale-in on a forecast); in
// forecastOnly mode it is only reported (outcome.forecast).
import { SCALING_LIMITS, type ScalingField, type ScalingValues } from '../api/index.js';
import { resolveFieldTarget } from './target.js';
import { peakBetween } from './forecast.js';
import type {
  FieldTarget,
  ForecastOutcome,
  MetricField,
  MetricOutcome,
  MetricReading,
  MetricSpec,
  Policy,
  Reason,
  Target,
} from './types.js';
import { formatDuration } from './windows.js';

export interface MetricResult {
  /** The target values with the metric's field replaced by its recommendation. */
  readonly values: ScalingValues;
  readonly reasons: Reason[];
  /** Absent when the pipe takes none of the fields the metric drives. */
  readonly outcome?: MetricOutcome;
}

/** The field the metric drives for a pipe taking `fields`: replicas first, then concurrency. */
/** A policy whose target tracks a metric. */
export type MetricPolicy = Policy & { readonly metric: MetricSpec };

export function hasMetric(policy: Policy): policy is MetricPolicy {
  return policy.metric !== undefined;
}

export function metricField(spec: MetricSpec, fields: readonly ScalingField[]): MetricField | null {
  for (const f of ['replicas', 'concurrency'] as const)
    if (spec.targetPer[f] !== undefined && fields.includes(f)) return f;
  return null;
}

/** The bounds a target gives a field: fixed is min = max, none is the platform's range. */
export function metricBounds(t: FieldTarget | undefined, field: ScalingField): { min: number; max: number } {
  if (t === undefined) return { min: SCALING_LIMITS[field].min, max: SCALING_LIMITS[field].max };
  return 'value' in t ? { min: t.value, max: t.value } : { min: t.min, max: t.max };
}

const round = (v: number): number => Math.round(v * 100) / 100;

const clamp = (v: number, b: { min: number; max: number }): number => Math.min(b.max, Math.max(b.min, v));

/** Why a reading cannot be used, or null when its value is good at `now`. */
export function readingProblem(reading: MetricReading | undefined, spec: MetricSpec, now: number): string | null {
  if (reading === undefined) return 'the metric was not read';
  if ('error' in reading) return reading.error;
  if (Number.isNaN(reading.value)) return 'the value is NaN';
  if (!Number.isFinite(reading.value)) return `the value is ${reading.value > 0 ? '+Inf' : '-Inf'}`;
  if (reading.value < 0) return `the value ${reading.value} is negative`;
  if (now - reading.at > spec.staleAfterMs) {
    return `the value is ${formatDuration(now - reading.at)} old (staleAfter ${formatDuration(spec.staleAfterMs)})`;
  }
  return null;
}

/**
 * What of a reading a decision depends on, besides the words of its reasons: ticks with the same
 * signature (and no other event between them) decide the same, so simulate() decides one of them.
 * null when that cannot be told (a forecast, whose peak moves with time).
 */
export function metricSignature(
  policy: Policy,
  reading: MetricReading | undefined,
  applied: ScalingValues,
  now: number,
): string | null {
  const spec = policy.metric;
  if (!spec || spec.forecast) return null;
  const problem = readingProblem(reading, spec, now);
  if (problem !== null || reading === undefined || 'error' in reading) return `unavailable:${problem}`;
  const parts: string[] = [];
  for (const f of ['replicas', 'concurrency'] as const) {
    const per = spec.targetPer[f];
    if (per === undefined) continue;
    const now_ = applied[f];
    const within = now_ !== undefined && now_ > 0 && Math.abs(reading.value / (now_ * per) - 1) <= spec.tolerance;
    parts.push(`${rawRecommendation(reading.value, per)}${within ? 't' : ''}`);
  }
  return parts.join(':');
}

/** ceil(value / target); 0 and tiny values give 0 (the lower bound then applies). */
export function rawRecommendation(value: number, target: number): number {
  const ratio = value / target;
  // 100000 / 50000 is exactly 2; guard against a ratio like 2.0000000000000004 from float noise
  const rounded = Math.round(ratio);
  return Math.abs(ratio - rounded) < 1e-9 ? rounded : Math.ceil(ratio);
}

export function applyMetric(
  policy: Policy,
  now: number,
  reading: MetricReading | undefined,
  target: Target,
  values: ScalingValues,
  applied: ScalingValues,
  fields: readonly ScalingField[],
  leadUntil: number = now,
): MetricResult {
  const spec = policy.metric;
  const field = spec ? metricField(spec, fields) : null;
  const per = field === null ? undefined : spec?.targetPer[field]; // metricField picks a field with a targetPer
  if (!spec || field === null || per === undefined) return { values, reasons: [] };
  const bounds = metricBounds(target[field], field);
  const range = `${bounds.min}..${bounds.max}`;
  const now_ = applied[field];
  const reasons: Reason[] = [];
  const problem = readingProblem(reading, spec, now);

  let recommended: number;
  let value: number | undefined;
  if (problem !== null) {
    const held = target[field] !== undefined ? resolveFieldTarget(target[field], now_) : (now_ ?? bounds.min);
    const fallback = spec.onError;
    let why: string;
    if (fallback.kind === 'fixed' && fallback.values[field] !== undefined) {
      recommended = clamp(fallback.values[field], bounds);
      why = `onError sets ${field} ${fallback.values[field]}`;
    } else if (fallback.kind === 'baseline' && policy.baseline[field] !== undefined) {
      recommended = clamp(resolveFieldTarget(policy.baseline[field], now_), bounds);
      why = `onError baseline: ${field} ${recommended}`;
    } else {
      recommended = clamp(held, bounds);
      why =
        now_ === undefined
          ? `holding: nothing applied is known, ${field} ${recommended}`
          : `holding ${field} at ${recommended}`;
    }
    reasons.push({
      code: 'metric_unavailable',
      field,
      message: `metric unavailable (${problem}): ${why} within ${range}`,
    });
  } else {
    value = (reading as { value: number }).value;
    const raw = rawRecommendation(value, per);
    const ratio = now_ !== undefined && now_ > 0 ? value / (now_ * per) : null;
    if (ratio !== null && now_ !== undefined && Math.abs(ratio - 1) <= spec.tolerance && now_ === clamp(now_, bounds)) {
      recommended = now_;
      reasons.push({
        code: 'tolerance',
        field,
        message: `metric ${value} is ${Math.round(ratio * 100)}% of ${now_} x ${per}: within the ${Math.round(spec.tolerance * 100)}% tolerance, ${field} stays ${now_}`,
      });
    } else {
      recommended = clamp(raw, bounds);
      const clamped = recommended !== raw ? ` -> ${recommended} within ${range}` : ` (within ${range})`;
      reasons.push({ code: 'metric', field, message: `metric ${value} / ${per} per unit: ${field} ${raw}${clamped}` });
    }
  }
  let forecast: ForecastOutcome | undefined;
  if (spec.forecast && problem === null && reading !== undefined && 'value' in reading) {
    const { mode, actuationMs } = spec.forecast;
    const f = reading.forecast;
    const until = Math.max(now, leadUntil) + actuationMs;
    const peak = f === undefined || 'error' in f ? null : peakBetween(f.points, now, until);
    if (f === undefined || 'error' in f || peak === null) {
      forecast = {
        mode,
        error: f === undefined ? 'no forecast yet' : 'error' in f ? f.error : 'the forecast has expired',
      };
    } else {
      const wanted = clamp(rawRecommendation(peak, per), bounds);
      const raised = mode === 'scale' && wanted > recommended;
      forecast = {
        mode,
        value: peak,
        recommended: wanted,
        raised,
        ...(f.peakError !== undefined ? { peakError: f.peakError } : {}),
      };
      if (raised) {
        reasons.push({
          code: 'forecast',
          field,
          message: `forecast peak ${round(peak)} over the next ${formatDuration(until - now)} (actuation ${formatDuration(actuationMs)}${until - actuationMs > now ? ` + lead ${formatDuration(until - actuationMs - now)}` : ''}) / ${per} per unit: ${field} ${recommended} -> ${wanted}`,
        });
        recommended = wanted;
      }
    }
  }
  const outcome: MetricOutcome = {
    field,
    bounds,
    recommended,
    ...(forecast ? { forecast } : {}),
    ...(value !== undefined ? { value } : {}),
    ...(problem !== null ? { error: problem } : {}),
  };
  return { values: { ...values, [field]: recommended }, reasons, outcome };
}
