// The metric side of `validate`, `plan` and `simulate`: live readings from the configured
// Prometheus (one query per metric policy), the query check, recorded series, and their output.
import { readFileSync } from 'node:fs';
import { safeUrl } from '../api/internal.js';
import {
  FORECAST_STEP_MS,
  forecastLookup,
  makeForecasts,
  type ForecastOutcome,
  type ForecastSet,
  type MetricPolicy,
  hasMetric,
  indexSamples,
  matchKey,
  resolveMatch,
  selectSample,
  metricBands,
  parseRangeQuery,
  recordedReading,
  withReplayedForecast,
  type Sample,
  type BandSegment,
  type RecordedSeries,
  type PlanEntry,
  type MetricAt,
  type MetricReading,
  type PipeView,
} from '../policy/index.js';
import type { Config } from '../config/index.js';
import { PrometheusClient } from '../prometheus/index.js';
import { UserError } from './run-cli.js';
import { formatInstant } from './policy-output.js';

const metricPolicies = (config: Config) => Object.values(config.policies).filter(hasMetric);

/** Each metric pipe's live reading, taken as the value at `at`; one query per metric policy. */
export async function liveReadings(config: Config, at: number): Promise<Record<string, MetricReading>> {
  const policies = metricPolicies(config);
  const cfg = config.metrics?.prometheus;
  if (policies.length === 0 || !cfg) return {};
  const client = new PrometheusClient(cfg);
  const out: Record<string, MetricReading> = {};
  try {
    for (const policy of policies) {
      const spec = policy.metric;
      let samples: Sample[] | null = null;
      let error = '';
      try {
        // each sample dated by its own time where the query keeps it, as the daemon does (staleAfter)
        samples = (await client.queryWithAges(spec.query, spec.staleAfterMs)).map(({ ageMs, ...s }) =>
          ageMs === undefined ? s : { ...s, at: at - ageMs },
        );
        if (samples.length === 0) error = 'the query returned no samples';
      } catch (err) {
        error = (err as Error).message;
      }
      const names = Object.keys(spec.match).sort();
      const index = samples ? indexSamples(samples, names) : new Map<string, Sample[]>();
      const forecast = spec.forecast ? forecastLookup(await liveForecast(client, policy, at), spec.match) : null;
      for (const pipe of config.pipes.filter((p) => p.policy === policy.name)) {
        if (!samples || samples.length === 0) {
          out[pipe.name] = { error };
          continue;
        }
        const wanted = resolveMatch(spec.match, pipe);
        const reading = selectSample(
          names.length === 0 ? samples : (index.get(matchKey(names, wanted)) ?? []),
          wanted,
          at,
        );
        out[pipe.name] = forecast && 'value' in reading ? { ...reading, forecast: forecast(wanted) } : reading;
      }
    }
  } finally {
    await client.close();
  }
  return out;
}

/** A forecast policy's forecast at `at`, as the daemon makes it: one range query over its history. */
async function liveForecast(client: PrometheusClient, policy: MetricPolicy, at: number): Promise<ForecastSet> {
  const spec = policy.metric.forecast;
  if (!spec) return { at, error: 'the policy has no forecast' };
  try {
    const history = await client.queryRange(policy.metric.query, at - spec.historyMs, at, FORECAST_STEP_MS);
    return makeForecasts(history, at, spec);
  } catch (err) {
    return { at, error: `range query failed: ${(err as Error).message}` };
  }
}

/** How a decision's forecast reads in `plan`: its peak, what it would set, its score. */
export function forecastText(o: ForecastOutcome): string {
  if ('error' in o) return `forecast (${o.mode}): none (${o.error})`;
  const score =
    o.peakError === undefined ? '' : `, hourly-peak error ${(o.peakError * 100).toFixed(1)} % over the last week`;
  const effect =
    o.mode === 'scale' ? (o.raised ? ': raised the target' : ': the reactive value is as high') : ': not applied';
  return `forecast (${o.mode}): peak ${Math.round(o.value * 100) / 100} -> ${o.recommended}${effect}${score}`;
}

export function withReadings(
  views: Record<string, PipeView>,
  readings: Record<string, MetricReading>,
): Record<string, PipeView> {
  const out: Record<string, PipeView> = {};
  for (const [name, view] of Object.entries(views))
    out[name] = readings[name] ? { ...view, metric: readings[name] } : view;
  return out;
}

/** Per metric pipe: the query, the live value, the recommendation and the bounds. */
export function formatMetricPlan(config: Config, entries: readonly PlanEntry[]): string {
  const lines: string[] = [];
  for (const { pipe, decision } of entries) {
    const spec = config.policies[pipe.policy]?.metric;
    if (!spec) continue;
    const m = decision.metric;
    const value =
      m === undefined
        ? 'not evaluated (pipe not read or skipped)'
        : m.value !== undefined
          ? `value ${m.value} -> ${m.field} ${m.recommended}`
          : `unavailable (${m.error}) -> ${m.field} ${m.recommended}`;
    const bounds = m ? `, bounds ${m.bounds.min}..${m.bounds.max}` : '';
    const forecast = m?.forecast ? `\n    ${forecastText(m.forecast)}` : '';
    lines.push(`  ${pipe.name}: ${spec.query}\n    ${value}${bounds}${forecast}`);
  }
  return lines.length === 0 ? '' : `\nmetrics:\n${lines.join('\n')}`;
}

export function metricJson(config: Config, entry: PlanEntry): Record<string, unknown> {
  const spec = config.policies[entry.pipe.policy]?.metric;
  return spec ? { metric: { query: spec.query, ...(entry.decision.metric ?? {}) } } : {};
}

/** `validate`: each metric query through Prometheus' parser, when a server answers. */
export async function validateQueries(config: Config): Promise<{ text: string; failed: boolean }> {
  const policies = metricPolicies(config);
  const cfg = config.metrics?.prometheus;
  if (policies.length === 0 || !cfg) return { text: '', failed: false };
  const client = new PrometheusClient(cfg);
  const lines: string[] = [];
  let failed = false;
  try {
    for (const policy of policies) {
      try {
        const problem = await client.parseQuery(policy.metric.query);
        if (problem !== null) failed = true;
        lines.push(`  policy ${policy.name}: query ${problem === null ? 'parses' : `does not parse: ${problem}`}`);
      } catch (err) {
        lines.push(
          `  Prometheus at ${safeUrl(cfg.url)} did not answer (${(err as Error).message}): queries not checked`,
        );
        break;
      }
    }
  } finally {
    await client.close();
  }
  return { text: `metric queries:\n${lines.join('\n')}`, failed };
}

/** `--metrics [policy=]FILE ...`: recorded series per metric policy (a bare FILE serves every one). */
export function recordedMetrics(config: Config, specs: readonly string[]): MetricAt {
  const names = metricPolicies(config).map((p) => p.name);
  const byPolicy = new Map<string, RecordedSeries[]>();
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    const named = eq > 0 && names.includes(spec.slice(0, eq));
    const file = named ? spec.slice(eq + 1) : spec;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new UserError(`--metrics: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
    let series: RecordedSeries[];
    try {
      series = parseRangeQuery(text);
    } catch (err) {
      throw new UserError(`--metrics: ${file} ${(err as Error).message}`);
    }
    for (const n of named ? [spec.slice(0, eq)] : names) byPolicy.set(n, series);
  }
  return (pipe, policy, now) => {
    const series = byPolicy.get(policy.name);
    // a forecast policy gets the forecast the daemon would have had, replayed from the same series
    return series
      ? withReplayedForecast(series, policy, pipe, now, recordedReading(series, policy, pipe, now))
      : undefined;
  };
}

/** Without recorded series: the bounds each metric pipe would move within, over the period. */
export function formatBands(
  config: Config,
  views: Record<string, PipeView>,
  from: number,
  to: number,
  stepMs: number,
): string {
  const kinds = Object.fromEntries(Object.entries(views).map(([n, v]) => [n, v.kind]));
  const bands: BandSegment[] = metricBands(config, kinds, from, to, stepMs);
  if (bands.length === 0) return '';
  const lines = bands.map(
    (b) =>
      `  ${b.pipe}  from ${formatInstant(b.from)}  ${b.field} ${b.min}..${b.max}  (${b.windows.length > 0 ? b.windows.join(', ') : 'baseline'})`,
  );
  return `\n\nmetric bounds (no --metrics given: the metric moves each pipe within this band; without a value it holds):\n${lines.join('\n')}`;
}
