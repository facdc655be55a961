import { describe, expect, it } from 'vitest';
import { DAY_MS, fitForecast, peakBetween, predictAt, predictSpan, type Point } from '../../src/policy/forecast.js';
import { seasonalTrace, seasonalValue } from './seasonal-trace.js';

const STEP = 300_000;
const FROM = Date.parse('2026-11-02T00:00:00Z'); // a Monday
const model = (points: Point[], at: number) => {
  const fit = fitForecast(points, at, STEP);
  if (!('model' in fit)) throw new Error(fit.error);
  return fit.model;
};

describe('fitForecast', () => {
  it('gives no forecast under 24 h of history, and says how much there was', () => {
    const points = seasonalTrace({ from: FROM, to: FROM + 20 * 3_600_000, stepMs: STEP });
    expect(fitForecast(points, FROM + 20 * 3_600_000, STEP)).toEqual({
      error: '19 h of history, a forecast needs 24 h',
    });
    expect(fitForecast([], FROM, STEP)).toEqual({ error: '0 h of history, a forecast needs 24 h' });
  });

  it('predicts the next day of a 14-day trace within 10 % of its noise-free value, weekday and weekend', () => {
    const at = FROM + 14 * DAY_MS;
    const m = model(seasonalTrace({ from: FROM, to: at + 1, stepMs: STEP }), at);
    expect(m.season).toBe('week');
    for (const day of [0, 5]) {
      for (let t = at + day * DAY_MS; t < at + (day + 1) * DAY_MS; t += 3_600_000) {
        const truth = seasonalValue(t, { from: FROM });
        expect(Math.abs(predictAt(m, t) - truth) / truth, new Date(t).toISOString()).toBeLessThan(0.1);
      }
    }
  });

  it('learns a daily profile from 3 days, and the morning ramp before it comes', () => {
    const from = Date.parse('2026-11-03T00:00:00Z');
    const at = from + 3 * DAY_MS + 7 * 3_600_000; // Friday 07:00
    const m = model(seasonalTrace({ from, to: at + 1, stepMs: STEP, burstsPerDay: 0 }), at);
    expect(m.season).toBe('day');
    const peak = peakBetween(predictSpan(m, at, at + 2 * 3_600_000, STEP), at, at + 2 * 3_600_000) ?? 0;
    expect(peak).toBeGreaterThan(900);
  });

  it('is not moved by bursts: 30 min at 3x in one week moves those slots little', () => {
    const at = FROM + 14 * DAY_MS;
    const points = seasonalTrace({ from: FROM, to: at + 1, stepMs: STEP, burstsPerDay: 0, noise: 0 });
    const burst = points.map(([t, v]): Point => [
      t,
      t >= FROM + 2 * DAY_MS && t < FROM + 2 * DAY_MS + 1_800_000 ? v * 3 : v,
    ]);
    const t = at + 2 * DAY_MS + 900_000;
    expect(predictAt(model(burst, at), t) / predictAt(model(points, at), t)).toBeLessThan(1.1);
  });

  it('catches a shift of the whole load through its level', () => {
    const at = FROM + 14 * DAY_MS;
    const points = seasonalTrace({ from: FROM, to: at + 1, stepMs: STEP, burstsPerDay: 0, noise: 0 });
    const shifted = points.map(([t, v]): Point => [t, t > at - 8 * 3_600_000 ? v + 300 : v]);
    const t = at + 3_600_000;
    expect(predictAt(model(shifted, at), t) - predictAt(model(points, at), t)).toBeCloseTo(300, -1);
  });

  it('leaves out negative and non-finite values, and never predicts below 0', () => {
    const at = FROM + 2 * DAY_MS;
    const points: Point[] = [];
    for (let t = FROM; t <= at; t += STEP) points.push([t, t % (2 * STEP) === 0 ? NaN : 0]);
    points.push([at - STEP / 2, -5]);
    expect(predictAt(model(points, at), at + STEP)).toBe(0);
  });
});

describe('peakBetween', () => {
  const points: Point[] = [
    [10, 1],
    [20, 5],
    [30, 2],
    [40, 9],
  ];
  it('takes the points in the span and the first one at or after its end', () => {
    expect(peakBetween(points, 10, 25)).toBe(5);
    expect(peakBetween(points, 21, 30)).toBe(2);
    expect(peakBetween(points, 21, 31)).toBe(9);
    expect(peakBetween(points, 41, 50)).toBeNull();
  });
});
