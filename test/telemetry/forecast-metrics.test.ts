// The forecast metrics and log from the daemon's events: per policy whether a forecast is in force
// and its score, per pipe the forecast's peak and the value it would set; a forecast going missing
// or coming back is logged once per change, not once per refresh.
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/index.js';
import type { Decision, MetricOutcome } from '../../src/policy/index.js';
import { bindForecastEvents, createForecastMetrics } from '../../src/telemetry/forecast-metrics.js';
import { createLogger } from '../../src/telemetry/logger.js';

function evaluation(pipe: string, metric: MetricOutcome) {
  const decision = { action: 'none', direction: 'none', windows: [], desired: {}, changes: {}, reasons: [], metric };
  return { pipe, policy: 'load', tickAt: 0, durationMs: 1, lagMs: 0, decision: decision as unknown as Decision };
}

describe('forecast metrics', () => {
  it('exports availability, score, peak and the value it would set; logs each change once', async () => {
    const lines: { msg: string; policy: string; error?: string; peakError?: number }[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(l) as (typeof lines)[number]);
        done();
      },
    });
    const registry = new Registry();
    const emitter = new DaemonEmitter();
    bindForecastEvents(emitter, createForecastMetrics(registry), createLogger({ pretty: false, destination }));
    const error = '9 h of history, a forecast needs 24 h';
    emitter.emit('forecast:made', { policy: 'load', durationMs: 3, error });
    emitter.emit('forecast:status', { policy: 'load', at: 0, error });
    emitter.emit('forecast:status', { policy: 'load', at: 1, error });
    emitter.emit('forecast:status', { policy: 'load', at: 2, series: 4, peakError: 0.0834 });
    emitter.emit('forecast:status', { policy: 'load', at: 3, series: 4, peakError: 0.09 });
    const bounds = { min: 1, max: 20 };
    emitter.emit(
      'evaluation',
      evaluation('p0', {
        field: 'replicas',
        value: 300,
        bounds,
        recommended: 3,
        forecast: { mode: 'forecastOnly', value: 950, recommended: 10, raised: false },
      }),
    );
    const text = await registry.metrics();
    expect(text).toContain('pipescaler_forecast_range_queries_total{policy="load"} 1');
    expect(text).toContain('pipescaler_forecast_available{policy="load"} 1');
    expect(text).toContain('pipescaler_forecast_peak_error_ratio{policy="load"} 0.09');
    expect(text).toContain('pipescaler_forecast_value{pipe="p0"} 950');
    expect(text).toContain('pipescaler_forecast_recommended{pipe="p0",field="replicas"} 10');
    expect(lines.map((l) => [l.msg, l.error ?? l.peakError])).toEqual([
      ['no forecast: the policy reacts without one', error],
      ['forecast in force', 0.083],
    ]);
    // a pipe whose forecast is gone loses its series
    emitter.emit('evaluation', evaluation('p0', { field: 'replicas', value: 300, bounds, recommended: 3 }));
    expect(await registry.metrics()).not.toContain('pipescaler_forecast_value{pipe="p0"}');
  });
});
