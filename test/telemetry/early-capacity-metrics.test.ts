// Capacity spent early and short, from the verdicts the daemon gives: counted per policy and unit
// in seconds, Prometheus' base unit (no pipe label unless the grouping adds it), every policy's series from 0, and how long before
// its boundary a met start's scale-up was in force.
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import { bindEarlyCapacityEvents, createEarlyCapacityMetrics } from '../../src/telemetry/early-capacity-metrics.js';
import { Registry } from '../../src/telemetry/index.js';
import { createPipeLabels } from '../../src/telemetry/pipe-labels.js';
import { parseScrape, sampleValue } from './exposition-parse.js';

const NONE = { replicaMinutes: 0, coreMinutes: 0, gbMinutes: 0, slotMinutes: 0 };
const B = Date.parse('2026-11-23T09:00:00Z');
const due = { boundary: B, windows: ['peak'], target: { replicas: 6 }, deadline: B + 600_000, at: B };

describe('early capacity metrics', () => {
  it('counts each verdict per policy and unit, observes the early seconds of met starts, and keeps no pipe label', async () => {
    const registry = new Registry();
    const emitter = new DaemonEmitter();
    const pipes = [
      { name: 'a', policy: 'peak' },
      { name: 'b', policy: 'peak' },
      { name: 'c', policy: 'night' },
    ];
    bindEarlyCapacityEvents(
      emitter,
      createEarlyCapacityMetrics(registry),
      createPipeLabels(() => pipes),
      () => pipes.map((p) => p.name),
    );
    const early = { ...NONE, replicaMinutes: 40, coreMinutes: 20 };
    emitter.emit('verdict', {
      pipe: 'a',
      ...due,
      verdict: 'met',
      lateMs: 0,
      confirmedAt: B - 600_000,
      early,
      short: NONE,
    });
    emitter.emit('verdict', {
      pipe: 'b',
      ...due,
      verdict: 'late',
      lateMs: 120_000,
      confirmedAt: B + 120_000,
      early: NONE,
      short: { ...NONE, replicaMinutes: 8 },
    });
    // excluded: no capacity, nothing counted
    emitter.emit('verdict', { pipe: 'c', ...due, verdict: 'excluded', reason: 'paused' });
    const text = await registry.metrics();
    const s = parseScrape(text);
    expect(sampleValue(s, 'pipescaler_window_early_capacity_seconds_total', { policy: 'peak', unit: 'replica' })).toBe(
      40 * 60,
    );
    expect(sampleValue(s, 'pipescaler_window_early_capacity_seconds_total', { policy: 'peak', unit: 'core' })).toBe(
      20 * 60,
    );
    expect(sampleValue(s, 'pipescaler_window_short_capacity_seconds_total', { policy: 'peak', unit: 'replica' })).toBe(
      8 * 60,
    );
    // every policy's series from 0: two directions x four units each
    expect(sampleValue(s, 'pipescaler_window_short_capacity_seconds_total', { policy: 'night', unit: 'slot' })).toBe(0);
    expect(text.match(/^pipescaler_window_(early|short)_capacity_seconds_total\{/gm)).toHaveLength(2 * 2 * 4);
    expect(text).not.toMatch(/pipe="/);
    expect(sampleValue(s, 'pipescaler_window_early_seconds_count', {})).toBe(1);
    expect(sampleValue(s, 'pipescaler_window_early_seconds_sum', {})).toBe(600);
  });

  it('under per-pipe detail, each pipe has its own series beside its policy', async () => {
    const registry = new Registry();
    const emitter = new DaemonEmitter();
    const pipes = [{ name: 'a', policy: 'peak' }];
    bindEarlyCapacityEvents(
      emitter,
      createEarlyCapacityMetrics(registry),
      createPipeLabels(
        () => pipes,
        () => true,
      ),
      () => ['a'],
    );
    emitter.emit('verdict', {
      pipe: 'a',
      ...due,
      verdict: 'late',
      lateMs: 60_000,
      confirmedAt: B + 60_000,
      early: NONE,
      short: { ...NONE, replicaMinutes: 4 },
    });
    const s = parseScrape(await registry.metrics());
    expect(
      sampleValue(s, 'pipescaler_window_short_capacity_seconds_total', { policy: 'peak', pipe: 'a', unit: 'replica' }),
    ).toBe(240);
  });
});
