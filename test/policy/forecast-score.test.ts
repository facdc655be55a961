import { describe, expect, it } from 'vitest';
import { DAY_MS, type Point } from '../../src/policy/forecast.js';
import { hourlyPeaks, peakError, scoreForecast } from '../../src/policy/forecast-score.js';
import { seasonalTrace } from './seasonal-trace.js';

const H = 3_600_000;

describe('peakError', () => {
  it('weighs each hour by its actual peak: sum |predicted - actual| / sum actual', () => {
    const actual: Point[] = [
      [0, 10],
      [H / 2, 100],
      [H, 50],
    ];
    const predicted: Point[] = [
      [0, 90],
      [H, 60],
      [2 * H, 70],
    ];
    expect(hourlyPeaks(actual)).toEqual(
      new Map([
        [0, 100],
        [H, 50],
      ]),
    );
    expect(peakError(actual, predicted)).toEqual({ peakError: 20 / 150, hours: 2 });
    expect(peakError(actual, [[5 * H, 1]])).toBeNull();
  });
});

describe('scoreForecast', () => {
  const from = Date.parse('2026-11-02T00:00:00Z');
  it('scores the last week of a 14-day trace with noise and bursts at most 15 %', () => {
    const at = from + 14 * DAY_MS;
    const score = scoreForecast(seasonalTrace({ from, to: at + 1, stepMs: 300_000 }), at, 300_000, 2 * H, 14 * DAY_MS);
    expect(score?.hours).toBe(168);
    expect(score?.peakError).toBeLessThanOrEqual(0.15);
  });

  it('scores only what has 24 h of history before it, and nothing with less', () => {
    const at = from + 3 * DAY_MS;
    const points = seasonalTrace({ from, to: at + 1, stepMs: 300_000 });
    expect(scoreForecast(points, at, 300_000, 2 * H, 14 * DAY_MS)?.hours).toBe(48);
    expect(scoreForecast(points.slice(-200), at, 300_000, 2 * H, 14 * DAY_MS)).toBeNull();
  });
});
