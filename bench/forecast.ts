// Forecast scenario (`npm run bench -- --only forecast`). (1) The daemon's forecast of a 14-day
// trace with daily and weekly seasonality, noise and bursts, backfilled into a real Prometheus
// (Debian's, by promtool) and read over HTTP with the daemon's range query and model: the error
// of the hourly peak over the last week (forecast-score.ts). (2) A week replayed minute by minute
// through the daemon's evaluation step (forecast-replay.ts), reactive alone and with
// `forecast: scale`: ramps with capacity at target before they come, how late the others are,
// scale-ins a forecast caused, capacity-hours side by side.
import { DAY_MS } from '../src/policy/forecast.js';
import { FORECAST_STEP_MS, makeForecasts } from '../src/policy/forecast-set.js';
import { PrometheusClient } from '../src/prometheus/index.js';
import { openMetricsGauge, startPrometheus } from '../test/prometheus.js';
import { seasonalTrace } from '../test/policy/seasonal-trace.js';
import { FORECAST, replayWeek, type ReplayRun } from './forecast-replay.js';
import type { Figure } from './stats.js';

const scenario = 'forecast';
const MIN = 60_000;

async function peakErrorViaPrometheus(): Promise<{ peakError: number | null; seconds: number }> {
  const now = Math.floor(Date.now() / MIN) * MIN;
  const from = now - 14 * DAY_MS;
  const prom = await startPrometheus({
    targets: [],
    retention: '30d',
    backfill: openMetricsGauge('orders_in_per_second', [
      { labels: { group: 'orders' }, points: seasonalTrace({ from, to: now + 1, stepMs: MIN }) },
    ]),
  });
  const client = new PrometheusClient({ url: prom.url, timeoutMs: 30_000, headers: {} });
  try {
    await prom.waitFor('count(orders_in_per_second)', (r) => r[0]?.value === 1, 60_000);
    const t0 = performance.now();
    const history = await client.queryRange('orders_in_per_second', now - FORECAST.historyMs, now, FORECAST_STEP_MS);
    const set = makeForecasts(history, now, FORECAST);
    const seconds = (performance.now() - t0) / 1000;
    if ('error' in set) throw new Error(set.error);
    return { peakError: set.peakError, seconds };
  } finally {
    await client.close();
    await prom.stop();
  }
}

const share = (r: ReplayRun) => (r.ramps === 0 ? 0 : r.met / r.ramps);
const lateNote = (r: ReplayRun) =>
  r.late.length === 0
    ? 'none late'
    : `${r.late.length} late by ${(r.late.reduce((a, b) => a + b, 0) / r.late.length).toFixed(1)} min on average, ${Math.max(...r.late)} at most`;

export async function forecastBench(): Promise<Figure[]> {
  const { peakError, seconds } = await peakErrorViaPrometheus();
  const t0 = performance.now();
  const { reactive, forecast } = replayWeek(Date.parse('2026-10-26T00:00:00Z'));
  const replaySeconds = (performance.now() - t0) / 1000;
  const ratio = forecast.replicaHours / reactive.replicaHours;
  const fig = (
    metric: string,
    value: number,
    unit: string,
    goal: string | undefined,
    pass: boolean | undefined,
    note: string,
    n: number,
  ): Figure => ({
    scenario,
    metric,
    value,
    unit,
    n,
    runs: [],
    ...(goal !== undefined ? { goal } : {}),
    ...(pass !== undefined ? { pass } : {}),
    note,
  });
  return [
    fig(
      'hourly-peak error, last week of a 14-day trace in Prometheus',
      peakError ?? NaN,
      'ratio',
      '<= 0.15',
      peakError !== null && peakError <= 0.15,
      `range query over HTTP + fits + score: ${seconds.toFixed(2)} s; 1-min trace, 4 % noise, 2 bursts/day, +2 %/week`,
      168,
    ),
    fig(
      'ramps at target before they come, forecast: scale',
      share(forecast),
      'ratio',
      '>= 0.90',
      share(forecast) >= 0.9,
      `${forecast.met} of ${forecast.ramps} ramp steps over a replayed week; ${lateNote(forecast)}; replay ${replaySeconds.toFixed(1)} s`,
      forecast.ramps,
    ),
    fig(
      'ramps at target before they come, reactive alone',
      share(reactive),
      'ratio',
      undefined,
      undefined,
      `${reactive.met} of ${reactive.ramps}; ${lateNote(reactive)} (actuation 5 min, 1-min ticks)`,
      reactive.ramps,
    ),
    fig(
      'scale-ins caused by a forecast',
      forecast.forecastScaleIns,
      'count',
      '0',
      forecast.forecastScaleIns === 0,
      `${forecast.scaleIns} scale-ins with forecast, ${reactive.scaleIns} reactive; none below what the reading alone asked`,
      forecast.scaleIns,
    ),
    fig(
      'capacity-hours, forecast / reactive',
      ratio,
      'ratio',
      '<= 1.10',
      ratio <= 1.1,
      `${forecast.replicaHours.toFixed(0)} vs ${reactive.replicaHours.toFixed(0)} replica-hours over the week`,
      7,
    ),
  ];
}
