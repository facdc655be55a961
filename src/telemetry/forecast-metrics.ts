// The metrics and log lines of metric forecasts (metric.forecast): per policy whether a forecast is
// in force and how good it has been; under telemetry.perPipeDetail, per pipe the forecast's peak
// and the value it would set (in forecastOnly mode the only effect a forecast has; `plan` shows it
// too). A policy's forecast going missing, or coming
// back, is logged once per change, not once per evaluation.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DaemonEmitter } from '../daemon/index.js';
import { configName } from './labels.js';
import { DETAILED, type PipeLabels } from './pipe-labels.js';
import type { TelemetryLogger } from './logger.js';
import { subscribe } from './subscribe.js';

export function createForecastMetrics(registry: Registry) {
  const registers = [registry];
  return {
    made: new Counter({
      name: 'pipescaler_forecast_range_queries_total',
      help: "Range queries this replica made for a forecast policy's history (one per policy per refresh across the fleet)",
      labelNames: ['policy'] as const,
      registers,
    }),
    available: new Gauge({
      name: 'pipescaler_forecast_available',
      help: 'Whether a forecast policy has a forecast for the current refresh (0: under 24 h of history or a failed query; it reacts without one)',
      labelNames: ['policy'] as const,
      registers,
    }),
    peakError: new Gauge({
      name: 'pipescaler_forecast_peak_error_ratio',
      help: "Error of the forecast's hourly peak over the last week: sum |predicted - actual| / sum actual (0.1 = 10 %)",
      labelNames: ['policy'] as const,
      registers,
    }),
    value: new Gauge({
      name: 'pipescaler_forecast_value',
      help: "The forecast's peak over the actuation time and lead, at the pipe's last evaluation; under telemetry.perPipeDetail only",
      labelNames: ['pipe'] as const,
      registers,
    }),
    recommended: new Gauge({
      name: 'pipescaler_forecast_recommended',
      help: 'The value of its field (replicas or concurrency) the forecast would set, within the bounds; in scale mode the pipe gets the higher of it and the reactive one; under telemetry.perPipeDetail only',
      labelNames: ['pipe', 'field'] as const,
      registers,
    }),
  };
}

export type ForecastMetrics = ReturnType<typeof createForecastMetrics>;

export function bindForecastEvents(
  emitter: DaemonEmitter,
  m: ForecastMetrics,
  logger: TelemetryLogger,
  labels: PipeLabels = DETAILED,
): () => void {
  /** Per policy: what was last said (the error, or '' for a forecast in force). */
  const said = new Map<string, string>();
  return subscribe(emitter, {
    'config:reload': ({ result }) => {
      // per-pipe detail turned off: its series go (turned on: they come at the next evaluations)
      if (result === 'success' && !labels.detail()) for (const family of [m.value, m.recommended]) family.reset();
    },
    'forecast:made': ({ policy }) => m.made.inc({ policy: configName(policy) }),
    'forecast:status': ({ policy, error, series, peakError }) => {
      const p = configName(policy);
      m.available.set({ policy: p }, error === undefined ? 1 : 0);
      if (peakError !== undefined && peakError !== null) m.peakError.set({ policy: p }, peakError);
      else m.peakError.remove({ policy: p });
      const now = error ?? '';
      if (said.get(policy) === now) return;
      said.set(policy, now);
      if (error !== undefined) logger.warn({ policy, error }, 'no forecast: the policy reacts without one');
      else
        logger.info(
          { policy, series, ...(peakError != null ? { peakError: Math.round(peakError * 1000) / 1000 } : {}) },
          'forecast in force',
        );
    },
    evaluation: ({ pipe, decision }) => {
      const o = decision.metric;
      const p = configName(pipe);
      const f = o?.forecast;
      if (!labels.detail()) return;
      if (o === undefined || f === undefined || 'error' in f) {
        m.value.remove({ pipe: p });
        if (o !== undefined) m.recommended.remove({ pipe: p, field: o.field });
        return;
      }
      m.value.set({ pipe: p }, f.value);
      m.recommended.set({ pipe: p, field: o.field }, f.recommended);
    },
  });
}
