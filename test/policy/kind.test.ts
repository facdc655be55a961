// impliedKind(), assumedKind() and assumedView(): what plan and simulate start from for a pipe
// nobody read.
import { describe, expect, it } from 'vitest';
import { assumedKind, assumedView, impliedKind } from '../../src/policy/kind.js';
import type { PipeConfig } from '../../src/policy/types.js';
import { policy, recurring } from './build.js';

const pipe = (o: Partial<PipeConfig> = {}): PipeConfig => ({
  name: 'p',
  organizationId: 'o',
  serviceId: 's',
  pipeId: 'i',
  policy: 'p',
  key: 'default',
  bounds: {},
  ...o,
});

describe('impliedKind', () => {
  it('is stream for replicas/CPU/memory, objectStorage for concurrency, null for none or a mix', () => {
    expect(impliedKind(policy({ baseline: { replicas: { value: 2 }, replicaCpuMillicores: { value: 500 } } }))).toBe(
      'stream',
    );
    expect(impliedKind(policy({ baseline: { concurrency: { value: 2 } } }))).toBe('objectStorage');
    expect(impliedKind(policy({ baseline: {} }))).toBeNull();
    expect(
      impliedKind(
        policy({
          baseline: { concurrency: { value: 2 } },
          windows: [recurring({ start: '08:00', end: '20:00', timezone: 'UTC', target: { replicas: { value: 3 } } })],
        }),
      ),
    ).toBeNull();
  });

  it('a declared kind wins over the policy', () => {
    const p = policy({ baseline: {} });
    expect(assumedKind(pipe({ kind: 'objectStorage' }), p)).toEqual({ kind: 'objectStorage', from: 'declared' });
    expect(assumedKind(pipe(), p)).toBeNull();
    expect(assumedKind(pipe(), policy())).toEqual({ kind: 'stream', from: 'policy' });
  });
});

describe('assumedView', () => {
  it('runs at the baseline, a range at its lower end, inside the pipe bounds; only fields of the kind', () => {
    const p = policy({
      baseline: { replicas: { min: 3, max: 6 }, replicaMemoryGb: { value: 2 }, concurrency: { value: 5 } },
    });
    expect(assumedView(pipe(), p, 'stream')).toEqual({
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 3, replicaMemoryGb: 2 },
      bounds: {},
      lastChange: {},
      recommendations: [],
      endpoints: {},
    });
    expect(assumedView(pipe({ bounds: { replicas: { min: 4 } } }), p, 'stream').applied.replicas).toBe(4);
    expect(assumedView(pipe(), p, 'objectStorage').applied).toEqual({ concurrency: 5 });
  });
});
