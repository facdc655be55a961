// The recommendations a pipe keeps for scale-down stabilization: a sliding-window maximum that
// must answer "the highest recommendation of a field within the window" at every later instant
// exactly as the whole list would, whatever order the stored entries come in.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ScalingValues } from '../../src/api/index.js';
import { stabilizationFloor } from '../../src/policy/behavior.js';
import { pruneRecommendations, recommendationsAfter } from '../../src/policy/recommendations.js';
import type { Policy } from '../../src/policy/types.js';

const NOW = Date.UTC(2026, 10, 27, 12);
const M = 60_000;
/** A policy's behavior that keeps recommendations for `stabilizationMs`. */
const keeping = (stabilizationMs: number): Pick<Policy, 'behavior'> => ({
  behavior: {
    scaleUp: { maxStep: {}, cooldownMs: 0 },
    scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs },
  },
});
const keep = keeping(10 * M);
const none = { action: 'none', recommendation: {} } as const;

describe('recommendations kept for stabilization', () => {
  it('keeps an entry inside the window that is stored before an older one', () => {
    // Out of time order (a clock stepped back, replicas whose clocks differ): the older entry
    // leaves, the newer one stays until its own time is up.
    const list = [
      { at: NOW - 1 * M, values: { replicas: 5 } },
      { at: NOW - 20 * M, values: { replicas: 3 } },
    ];
    expect(recommendationsAfter(keep, NOW, list, none)).toEqual([{ at: NOW - 1 * M, values: { replicas: 5 } }]);
  });

  it('lets no entry of the future drop one that counts now', () => {
    // An entry stamped after `now` does not count yet (stabilizationFloor): the one it would
    // equal stays until then.
    const list = [
      { at: NOW - 1 * M, values: { replicas: 5 } },
      { at: NOW + 2 * M, values: { replicas: 5 } },
    ];
    const kept = recommendationsAfter(keep, NOW, list, none);
    expect(kept).toEqual(list);
    expect(stabilizationFloor(kept, 'replicas', NOW + 1 * M, 10 * M, 1)).toBe(5);
  });

  it('drops entries without values, and keeps the list in time order', () => {
    const list = [
      { at: NOW - 2 * M, values: { replicas: 4 } },
      { at: NOW - 3 * M, values: {} },
      { at: NOW - 4 * M, values: { replicas: 6 } },
    ];
    expect(pruneRecommendations(list, NOW - 10 * M, NOW)).toEqual([
      { at: NOW - 4 * M, values: { replicas: 6 } },
      { at: NOW - 2 * M, values: { replicas: 4 } },
    ]);
  });

  it('answers every later floor as the whole list does, in any order', () => {
    const entry = fc.record({
      at: fc.integer({ min: NOW - 30 * M, max: NOW + 5 * M }),
      values: fc.record({ replicas: fc.integer({ min: 1, max: 10 }) }, { requiredKeys: [] }),
    });
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 8 }),
        fc.integer({ min: 0, max: 20 * M }),
        fc.integer({ min: 0, max: 30 * M }),
        (list, windowMs, later) => {
          const policy = keeping(windowMs);
          const kept = recommendationsAfter(policy, NOW, list, none);
          const t = NOW + later;
          const whole = (l: readonly { at: number; values: ScalingValues }[]) =>
            stabilizationFloor(l, 'replicas', t, windowMs, 0);
          expect(whole(kept)).toBe(whole(list));
        },
      ),
      { numRuns: 500, seed: 7 },
    );
  });
});
