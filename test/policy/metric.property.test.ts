// decide() on metric inputs: whatever the value, the error, the applied value and the behavior,
// the bounds hold; an unavailable metric with onError hold never scales down; a value within the
// tolerance changes nothing; maxStep limits every move.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/decide.js';
import type { Behavior, MetricReading, Policy } from '../../src/policy/types.js';
import { at, policy, recurring, view } from './build.js';

const NOW = at('2026-11-24T10:00:00Z');
const bounds = fc
  .tuple(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 10 }))
  .map(([a, b]) => ({ min: Math.min(a, b), max: Math.max(a, b) }));
const behavior: fc.Arbitrary<Behavior> = fc
  .record({
    up: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    down: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    stab: fc.constantFrom(0, 300_000),
  })
  .map(({ up, down, stab }) => ({
    scaleUp: { maxStep: up === undefined ? {} : { replicas: up }, cooldownMs: 0 },
    scaleDown: { maxStep: down === undefined ? {} : { replicas: down }, cooldownMs: 0, stabilizationMs: stab },
  }));
const reading: fc.Arbitrary<MetricReading> = fc.oneof(
  fc.double({ min: 0, max: 5_000, noNaN: true }).map((value) => ({ value, at: NOW })),
  fc.constantFrom<MetricReading>(
    { error: 'down' },
    { value: NaN, at: NOW },
    { value: -1, at: NOW },
    { value: Infinity, at: NOW },
    { value: 10, at: NOW - 600_000 },
  ),
);
const recs = fc.array(
  fc.record({
    at: fc.integer({ min: NOW - 600_000, max: NOW }),
    values: fc.record({ replicas: fc.integer({ min: 1, max: 10 }) }),
  }),
  { maxLength: 4 },
);

function make(b: { min: number; max: number }, beh: Behavior, tolerance: number, inWindow: boolean): Policy {
  return policy({
    baseline: { replicas: { min: 1, max: 10 } },
    windows: inWindow
      ? [recurring({ name: 'w', start: '00:00', durationMs: 86_400_000, timezone: 'UTC', target: { replicas: b } })]
      : [],
    behavior: beh,
    metric: {
      query: 'q',
      match: {},
      targetPer: { replicas: 100 },
      onError: { kind: 'hold' },
      staleAfterMs: 120_000,
      tolerance,
    },
  });
}

describe('decide() with a metric (properties)', () => {
  // The recommendation always lies within the bounds; desired does once the applied value does
  // (behavior smooths a move into the bounds from outside, as it does for a window without a metric).
  it('the recommendation stays within the window bounds, whatever the reading; desired too from inside them', () => {
    fc.assert(
      fc.property(
        bounds,
        behavior,
        reading,
        fc.integer({ min: 1, max: 10 }),
        recs,
        fc.constantFrom(0, 0.1, 0.3),
        (b, beh, r, applied, rs, tol) => {
          const d = decide(
            make(b, beh, tol, true),
            NOW,
            view({ applied: { replicas: applied }, metric: r, recommendations: rs }),
          );
          expect(d.recommendation.replicas).toBeGreaterThanOrEqual(b.min);
          expect(d.recommendation.replicas).toBeLessThanOrEqual(b.max);
          if (applied >= b.min && applied <= b.max) {
            expect(d.desired.replicas).toBeGreaterThanOrEqual(b.min);
            expect(d.desired.replicas).toBeLessThanOrEqual(b.max);
          } else {
            // from outside, every move heads into the bounds
            expect(Math.abs(d.desired.replicas! - d.recommendation.replicas!)).toBeLessThanOrEqual(
              Math.abs(applied - d.recommendation.replicas!),
            );
          }
          expect(d.metric!.recommended).toBeGreaterThanOrEqual(b.min);
          expect(d.metric!.recommended).toBeLessThanOrEqual(b.max);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('an unavailable metric with onError hold never scales down (inside the bounds)', () => {
    const bad = fc.constantFrom<MetricReading>(
      { error: 'timeout' },
      { value: NaN, at: NOW },
      { value: -3, at: NOW },
      { value: 1, at: NOW - 121_000 },
    );
    fc.assert(
      fc.property(bounds, behavior, bad, fc.integer({ min: 1, max: 10 }), recs, (b, beh, r, applied, rs) => {
        const d = decide(
          make(b, beh, 0.1, true),
          NOW,
          view({ applied: { replicas: applied }, metric: r, recommendations: rs }),
        );
        expect(d.desired.replicas).toBeGreaterThanOrEqual(Math.min(applied, b.max));
        expect(d.reasons.some((x) => x.code === 'metric_unavailable')).toBe(true);
        if (applied >= b.min && applied <= b.max) expect(d.action).toBe('none');
      }),
      { numRuns: 300 },
    );
  });

  it('a value within the tolerance of the applied value changes nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.double({ min: -0.099, max: 0.099, noNaN: true }),
        behavior,
        (applied, off, beh) => {
          const value = applied * 100 * (1 + off);
          const d = decide(
            make({ min: 1, max: 10 }, beh, 0.1, true),
            NOW,
            view({ applied: { replicas: applied }, metric: { value, at: NOW } }),
          );
          expect(d.action).toBe('none');
          expect(d.desired.replicas).toBe(applied);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('no move is larger than the maxStep of its direction', () => {
    fc.assert(
      fc.property(bounds, behavior, reading, fc.integer({ min: 1, max: 10 }), (b, beh, r, applied) => {
        fc.pre(applied >= b.min && applied <= b.max); // from outside the bounds the limits win over behavior
        const d = decide(make(b, beh, 0, true), NOW, view({ applied: { replicas: applied }, metric: r }));
        const moved = d.desired.replicas! - applied;
        const step = moved > 0 ? beh.scaleUp.maxStep.replicas : beh.scaleDown.maxStep.replicas;
        if (step !== undefined) expect(Math.abs(moved)).toBeLessThanOrEqual(step);
      }),
      { numRuns: 500 },
    );
  });
});
