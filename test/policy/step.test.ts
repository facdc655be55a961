import { describe, expect, it } from 'vitest';
import { afterChange, evaluateStep } from '../../src/policy/step.js';
import type { PipeView, Policy } from '../../src/policy/types.js';

const T = Date.parse('2026-11-23T10:00:00Z');
const policy: Policy = {
  name: 'p',
  baseline: { replicas: { value: 2 } },
  windows: [],
  behavior: {
    scaleUp: { maxStep: {}, cooldownMs: 0 },
    scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 600_000 },
  },
};
const view: PipeView = {
  kind: 'stream',
  state: 'Running',
  applied: { replicas: 4 },
  bounds: {},
  lastChange: {},
  endpoints: {},
  recommendations: [{ at: T - 60_000, values: { replicas: 4 } }],
};

describe('the evaluation step', () => {
  it('decides and keeps the recommendation for stabilization (held at 4 by the one a minute ago)', () => {
    const { decision, recommendations } = evaluateStep(policy, T, view);
    expect(decision.action).toBe('none');
    expect(recommendations).toEqual([
      { at: T - 60_000, values: { replicas: 4 } },
      { at: T, values: { replicas: 2 } },
    ]);
  });

  it('a skip leaves the recommendations as they were', () => {
    const { decision, recommendations } = evaluateStep(policy, T, { ...view, state: 'Stopped' });
    expect(decision.action).toBe('skip');
    expect(recommendations).toBe(view.recommendations);
  });

  it('a change stamps each direction it moves a field in, both when it moves both ways', () => {
    const both = afterChange(
      { replicas: 4, replicaCpuMillicores: 500 },
      { up: 1 },
      { replicas: 2, replicaCpuMillicores: 1000 },
      T,
    );
    expect(both).toEqual({
      applied: { replicas: 2, replicaCpuMillicores: 1000 },
      lastChange: { up: T, down: T },
      moves: { up: true, down: true },
    });
    const down = afterChange({ replicas: 4 }, { up: 1 }, { replicas: 3 }, T, { replicas: 3, replicaMemoryGb: 2 });
    expect(down).toEqual({
      applied: { replicas: 3, replicaMemoryGb: 2 },
      lastChange: { up: 1, down: T },
      moves: { up: false, down: true },
    });
  });
});
