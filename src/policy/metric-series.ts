// Recorded metric series for `simulate --metrics FILE` (a Prometheus range-query answer, as
// `curl .../api/v1/query_range` returns it) and the bounds band `simulate` shows without one. Pure.
import { indexSamples, matchKey, parseSampleValue, resolveMatch } from './metric-match.js';
import { metricBounds, metricField } from './metric.js';
import { resolveTarget } from './target.js';
import type { ScalingConfig, MetricField, MetricReading, PipeConfig, Policy } from './types.js';
import { KIND_FIELDS } from '../api/index.js';
import { activeWindows, nextBoundary } from './windows.js';

/** One series of a range query: its labels and its points (epoch ms, value), sorted by time. */
export interface RecordedSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly points: readonly (readonly [number, number])[];
}

/** Reads a range-query answer; throws an Error that says what is wrong with it. */
export function parseRangeQuery(text: string): RecordedSeries[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error('is not JSON (expected the answer of /api/v1/query_range)');
  }
  const data = (body as { data?: { resultType?: string; result?: unknown } }).data;
  if (
    (body as { status?: string }).status !== 'success' ||
    data?.resultType !== 'matrix' ||
    !Array.isArray(data.result)
  ) {
    throw new Error('is not a successful range-query answer (status "success", resultType "matrix")');
  }
  return data.result.map((s: { metric?: Record<string, string>; values?: [number, string][] }, i: number) => {
    if (!Array.isArray(s.values)) throw new Error(`result[${i}] has no values`);
    const points = s.values.map(([t, v]) => [Math.round(t * 1000), parseSampleValue(v)] as const);
    return { labels: s.metric ?? {}, points: [...points].sort((a, b) => a[0] - b[0]) };
  });
}

/** The one recorded series `pipe`'s match picks, or why there is none. */
export function pickSeries(
  series: readonly RecordedSeries[],
  policy: Policy,
  pipe: PipeConfig,
): RecordedSeries | { readonly error: string } {
  const match = policy.metric?.match ?? {};
  const names = Object.keys(match).sort();
  const wanted = resolveMatch(match, pipe);
  const picked = names.length === 0 ? series : (indexSamples(series, names).get(matchKey(names, wanted)) ?? []);
  const [one] = picked;
  if (picked.length !== 1 || one === undefined) {
    return {
      error:
        picked.length === 0 ? 'no recorded series matches the pipe' : `${picked.length} recorded series match the pipe`,
    };
  }
  return one;
}

/** The index of the newest point at or before `now`, or -1. */
export function pointBefore(points: readonly (readonly [number, number])[], now: number): number {
  let lo = 0;
  let hi = points.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((points[mid]?.[0] ?? Infinity) <= now) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The reading of `pipe` at `now`: the newest point at or before it of the one series its match picks. */
export function recordedReading(
  series: readonly RecordedSeries[],
  policy: Policy,
  pipe: PipeConfig,
  now: number,
): MetricReading {
  const one = pickSeries(series, policy, pipe);
  if ('error' in one) return one;
  const found = one.points[pointBefore(one.points, now)];
  if (!found) return { error: 'no recorded value before this time' };
  return { value: found[1], at: found[0] };
}

export interface BandSegment {
  readonly pipe: string;
  readonly from: number;
  readonly field: string;
  readonly min: number;
  readonly max: number;
  readonly windows: readonly string[];
}

/** A span of [from, to) over which a metric's bounds hold. */
export interface BandSpan {
  readonly from: number;
  readonly to: number;
  readonly min: number;
  readonly max: number;
  /** The winning windows; none is the baseline. */
  readonly windows: readonly string[];
}

/**
 * The bounds a policy's metric moves `field` within over [from, to): the active window's or the
 * baseline's, as spans that change only at window boundaries. With `stepMs` a boundary takes
 * effect at the first evaluation tick (from + k x stepMs) at or after it, as simulate sees it;
 * without, at the boundary itself.
 */
export function metricBandSpans(
  policy: Policy,
  field: MetricField,
  from: number,
  to: number,
  stepMs?: number,
): BandSpan[] {
  const spans: BandSpan[] = [];
  for (let t = from; t < to;) {
    const { active, winners } = activeWindows(policy.windows, t);
    const b = metricBounds(resolveTarget(policy, active, winners, {}).target[field], field);
    const boundary = nextBoundary(policy.windows, t, to) ?? to;
    let next = stepMs ? from + Math.ceil((boundary - from) / stepMs) * stepMs : boundary;
    if (next <= t) next = t + (stepMs ?? 60_000);
    next = Math.min(next, to);
    const windows = winners.map((w) => w.name);
    const last = spans.at(-1);
    if (last?.min === b.min && last.max === b.max && last.windows.join() === windows.join())
      spans[spans.length - 1] = { ...last, to: next };
    else spans.push({ from: t, to: next, min: b.min, max: b.max, windows });
    t = next;
  }
  return spans;
}

/** For each metric pipe, the bounds the metric would move within, as segments over [from, to). */
export function metricBands(
  config: ScalingConfig,
  kinds: Readonly<Record<string, keyof typeof KIND_FIELDS | null>>,
  from: number,
  to: number,
  stepMs: number,
): BandSegment[] {
  const out: BandSegment[] = [];
  for (const pipe of config.pipes) {
    const policy = config.policies[pipe.policy];
    const kind = kinds[pipe.name];
    if (!policy?.metric || !kind) continue;
    const field = metricField(policy.metric, KIND_FIELDS[kind]);
    if (field === null) continue;
    let last = '';
    for (const s of metricBandSpans(policy, field, from, to, stepMs)) {
      const id = `${s.min}:${s.max}`;
      if (id !== last) out.push({ pipe: pipe.name, from: s.from, field, min: s.min, max: s.max, windows: s.windows });
      last = id;
    }
  }
  return out;
}
