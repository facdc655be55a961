import { describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/policy/forecast.js';
import { candidateGrid, recommend, settingsDiff, type RecordedPipe } from '../../src/policy/recommend.js';
import type { Policy } from '../../src/policy/types.js';
import { policy as build, recurring, view } from './build.js';
import { seasonalTrace } from './seasonal-trace.js';

const FROM = Date.parse('2026-11-02T00:00:00Z'); // a Monday
const TO = FROM + 3 * DAY_MS;
const lag = (per: number, o: Partial<Policy> = {}): Policy =>
  build({
    name: 'lag',
    baseline: { replicas: { min: 2, max: 30 } },
    windows: [
      recurring({
        name: 'business-hours',
        days: ['mon', 'tue', 'wed', 'thu', 'fri'],
        start: '08:00',
        end: '19:00',
        timezone: 'UTC',
        target: { replicas: { min: 6, max: 30 } },
      }),
    ],
    behavior: {
      scaleUp: { maxStep: {}, cooldownMs: 0, leadTime: 0 },
      scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 600_000 },
    },
    metric: {
      query: 'q',
      match: {},
      targetPer: { replicas: per },
      onError: { kind: 'hold' },
      staleAfterMs: 120_000,
      tolerance: 0.1,
    },
    ...o,
  });
const pipes: RecordedPipe[] = [
  {
    name: 'p',
    series: { labels: {}, points: seasonalTrace({ from: FROM, to: TO, stepMs: 60_000 }) },
    view: view({ applied: { replicas: 2 } }),
  },
];

describe('candidateGrid', () => {
  it('spans targetPerReplica, the baseline min, stabilization and the window minimums: 210 with the current', () => {
    const grid = candidateGrid(lag(100));
    expect(grid).toHaveLength(210);
    expect(grid).toContainEqual({ targetPerReplica: 100, baselineMin: 2, stabilizationMs: 600_000, windowMinScale: 1 });
    expect(new Set(grid.map((s) => s.targetPerReplica))).toEqual(new Set([75, 85, 100, 110, 120, 135, 150]));
  });
});

describe('recommend', () => {
  it('finds a cheaper setting for an over-provisioned policy that keeps its own SLO, with the config diff', () => {
    const p = lag(70);
    const r = recommend(p, pipes, { from: FROM, to: TO, stepMs: 60_000 });
    expect(r.best).not.toBeNull();
    expect(r.best!.current).toBe(false);
    expect(r.best!.capacityHours).toBeLessThan(r.current.capacityHours);
    expect(r.best!.overMinutes).toBeLessThanOrEqual(r.sloMinutes);
    expect(r.sloMinutes).toBe(r.current.overMinutes);
    // every candidate cheaper than the winner lost on the SLO, and says by how much
    for (const c of r.candidates) {
      if (c.capacityHours < r.best!.capacityHours)
        expect(c.lost).toMatch(/^[\d.]+ min over target, more than the SLO's [\d.]+$/);
    }
    expect(settingsDiff(p, r.best!.settings).every((l) => l.startsWith('policies.lag.'))).toBe(true);
  });

  it('never recommends a config that costs more than the current one', () => {
    // a lean current config: nothing cheaper keeps its SLO, the dearer ones lose on cost
    const p = lag(150, { baseline: { replicas: { min: 1, max: 30 } } });
    const r = recommend(p, pipes, { from: FROM, to: TO, stepMs: 60_000, sloMinutes: 0 });
    expect(r.best === null || r.best.capacityHours <= r.current.capacityHours).toBe(true);
    for (const c of r.candidates)
      if (c.capacityHours > r.current.capacityHours && c.overMinutes <= 0)
        expect(c.lost).toContain('costs more than the current config');
  });
});

describe('settingsDiff', () => {
  it('says each changed line as path: old -> new, nothing for the current settings', () => {
    const p = lag(100);
    expect(
      settingsDiff(p, { targetPerReplica: 100, baselineMin: 2, stabilizationMs: 600_000, windowMinScale: 1 }),
    ).toEqual([]);
    expect(
      settingsDiff(p, { targetPerReplica: 120, baselineMin: 1, stabilizationMs: 120_000, windowMinScale: 0.5 }),
    ).toEqual([
      'policies.lag.metric.targetPerReplica: 100 -> 120',
      'policies.lag.baseline.replicas.min: 2 -> 1',
      'policies.lag.behavior.scaleDown.stabilization: 10m -> 2m',
      'policies.lag.windows[business-hours].bounds.replicas.min: 6 -> 3',
    ]);
  });
});
