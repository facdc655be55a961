import { describe, expect, it } from 'vitest';
import { DAY_MS, type Point } from '../../src/policy/forecast.js';
import { replayedForecast, sampled, withReplayedForecast } from '../../src/policy/forecast-replay.js';
import type { ForecastSpec, PipeConfig, Policy } from '../../src/policy/types.js';
import { policy } from './build.js';
import { seasonalTrace } from './seasonal-trace.js';

const MIN = 60_000;
const FROM = Date.parse('2026-11-02T00:00:00Z');
const SPEC: ForecastSpec = {
  historyMs: 14 * DAY_MS,
  horizonMs: 7_200_000,
  mode: 'scale',
  refreshMs: 900_000,
  actuationMs: 300_000,
};

describe('sampled', () => {
  it('gives the newest value at or before each step, none older than 5 min', () => {
    const points: Point[] = [
      [0, 1],
      [70_000, 2],
      [130_000, 3],
      [900_000, 4],
    ];
    expect(sampled(points, 0, 900_000, 300_000)).toEqual([
      [0, 1],
      [300_000, 3],
      [900_000, 4],
    ]);
  });
});

describe('replayedForecast', () => {
  const trace = seasonalTrace({ from: FROM, to: FROM + 15 * DAY_MS, stepMs: MIN });

  it('forecasts from the history before its refresh period, the same for every tick of it', () => {
    const at = FROM + 14 * DAY_MS + 7 * 3_600_000 + 3 * MIN;
    const f = replayedForecast(trace, SPEC, at);
    if ('error' in f) throw new Error(f.error);
    const slot = FROM + 14 * DAY_MS + 7 * 3_600_000;
    expect(f.points[0]?.[0]).toBe(slot + 300_000);
    expect(f.points).toHaveLength(24);
    expect(replayedForecast(trace, SPEC, at + 10 * MIN)).toBe(f);
    // the morning ramp of a Monday is in it before it comes
    expect(Math.max(...f.points.map(([, v]) => v))).toBeGreaterThan(900);
  });

  it('has none under 24 h of history', () => {
    expect(replayedForecast(trace, SPEC, FROM + 20 * 3_600_000)).toEqual({
      error: '20 h of history, a forecast needs 24 h',
    });
  });

  it('rides on a recorded reading of a forecast policy only', () => {
    const pipe = { name: 'p', labels: {} } as unknown as PipeConfig;
    const series = [{ labels: {}, points: trace }];
    const base: Policy = policy({});
    const withSpec = (forecast?: ForecastSpec): Policy => ({
      ...base,
      metric: {
        query: 'q',
        match: {},
        targetPer: { replicas: 100 },
        onError: { kind: 'hold' },
        staleAfterMs: MIN,
        tolerance: 0,
        ...(forecast ? { forecast } : {}),
      },
    });
    const at = FROM + 14 * DAY_MS;
    const reading = { value: 5, at };
    expect(withReplayedForecast(series, withSpec(), pipe, at, reading)).toBe(reading);
    expect(withReplayedForecast(series, withSpec(SPEC), pipe, at, { error: 'x' })).toEqual({ error: 'x' });
    expect(withReplayedForecast(series, withSpec(SPEC), pipe, at, reading)).toMatchObject({
      value: 5,
      forecast: { points: expect.any(Array) },
    });
  });
});
