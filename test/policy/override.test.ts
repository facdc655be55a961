// Overrides in decide() (src/policy/override.ts): they replace the policy's target for their fields
// until they expire, pass behavior, stay inside bounds and platform ranges and the pipe's state,
// ramp by their own step, and under `overrides: scaleUpOnly` (or as a floor) only raise.
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/decide.js';
import { overrideValuesAt } from '../../src/policy/override.js';
import { pipeTimeline } from '../../src/policy/simulate.js';
import type { Behavior } from '../../src/policy/types.js';
import { at, policy, view } from './build.js';
import { type Override } from '../../src/policy/types.js';

const T = at('2026-11-24T16:00Z');
const MIN = 60_000;
const o = (over: Partial<Override> = {}): Override => ({
  id: 'o1',
  values: { replicas: 8 },
  setAt: T,
  until: T + 120 * MIN,
  reason: 'incident 4711',
  source: 'operator',
  mode: 'set',
  ...over,
});
const slow: Behavior = {
  scaleUp: { maxStep: { replicas: 1 }, cooldownMs: 10 * MIN },
  scaleDown: { maxStep: { replicas: 1 }, cooldownMs: 10 * MIN, stabilizationMs: 30 * MIN },
};

describe('an override in decide()', () => {
  const p = policy({ baseline: { replicas: { value: 2 } }, behavior: slow });

  it('replaces the target for its fields, past cooldown and maxStep, from setAt until (exclusive) until', () => {
    const v = view({ applied: { replicas: 2 }, lastChange: { up: T - MIN }, override: o() });
    const d = decide(p, T, v);
    expect(d).toMatchObject({
      action: 'change',
      changes: { replicas: 8 },
      override: { id: 'o1', fields: ['replicas'] },
    });
    expect(d.reasons.find((r) => r.code === 'override')?.message).toBe(
      'override sets replicas 8 until 2026-11-24T18:00:00.000Z: incident 4711',
    );
    expect(d.reasons.some((r) => r.code === 'cooldown' || r.code === 'max_step')).toBe(false);
    expect(decide(p, T - 1, v).changes).toEqual({});
    expect(decide(p, T + 120 * MIN - 1, v).changes).toEqual({ replicas: 8 });
    // ended: the policy is back (its behavior applies: one step down at a time)
    const after = decide(p, T + 120 * MIN, { ...v, applied: { replicas: 8 }, lastChange: {} });
    expect(after).toMatchObject({ changes: { replicas: 7 } });
    expect(after.override).toBeUndefined();
  });

  it('stays inside the pipe bounds and the platform range, and a pipe that may not be scaled is not', () => {
    const bounded = decide(p, T, view({ bounds: { replicas: { max: 6 } }, override: o() }));
    expect(bounded.changes).toEqual({ replicas: 6 });
    expect(bounded.reasons.find((r) => r.code === 'pipe_bound')?.message).toBe(
      'replicas 8 -> 6: pipe bound max 6 (limits outrank an override)',
    );
    expect(decide(p, T, view({ state: 'Stopped', override: o() })).action).toBe('skip');
    expect(decide(p, T, view({ paused: { reason: 'x' }, override: o() })).action).toBe('skip');
    // a field the kind does not take is not sent
    expect(decide(p, T, view({ override: o({ values: { concurrency: 4 } }) })).changes).toEqual({});
  });

  it('scaleUpOnly (or a floor) only raises the target', () => {
    const upOnly = policy({ baseline: { replicas: { value: 5 } }, behavior: { ...slow, overrides: 'scaleUpOnly' } });
    const low = view({ applied: { replicas: 5 }, override: o({ values: { replicas: 3 } }) });
    expect(decide(upOnly, T, low)).toMatchObject({ action: 'none', changes: {} });
    const high = view({ applied: { replicas: 5 }, override: o({ values: { replicas: 9 } }) });
    expect(decide(upOnly, T, high).changes).toEqual({ replicas: 9 });
    expect(
      decide(p, T, view({ applied: { replicas: 5 }, override: o({ values: { replicas: 4 }, mode: 'floor' }) })).changes,
    ).toEqual({
      replicas: 4,
    });
  });

  it('ramps by its step: the first at once, one more each interval, never past the value', () => {
    const ramp = o({
      values: { replicas: 8 },
      ramp: { step: { replicas: 2 }, everyMs: 5 * MIN, start: { replicas: 2 } },
    });
    expect([0, 4, 5, 10, 15, 60].map((m) => overrideValuesAt(ramp, T + m * MIN)?.replicas)).toEqual([4, 4, 6, 8, 8, 8]);
    const down = o({ values: { replicas: 2 }, ramp: { step: { replicas: 3 }, everyMs: MIN, start: { replicas: 9 } } });
    expect([0, 1, 2].map((m) => overrideValuesAt(down, T + m * MIN)?.replicas)).toEqual([6, 3, 2]);
    // simulated: a change at each step, then the policy when it ends
    const changes = pipeTimeline(p, view({ applied: { replicas: 2 }, override: ramp }), T, T + 180 * MIN, 30_000);
    expect(changes.map((c) => [(c.at - T) / MIN, c.scaling.replicas])).toEqual([
      [0, 4],
      [5, 6],
      [10, 8],
      [120, 7],
      [130, 6],
      [140, 5],
      [150, 4],
      [160, 3],
      [170, 2],
    ]);
  });
});
