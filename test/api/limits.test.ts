import { describe, expect, it } from 'vitest';
import { clampToLimit, limitViolation, SCALING_LIMITS, ScalingRequest } from '../../src/api/index.js';

describe('scaling limits (SCALING_LIMITS, the platform ranges)', () => {
  it('are the ranges of the contract', () => {
    expect(SCALING_LIMITS).toEqual({
      replicas: { min: 1, max: 10, integer: true },
      concurrency: { min: 0, max: 34, integer: true },
      replicaCpuMillicores: { min: 125, max: 2000, integer: true },
      replicaMemoryGb: { min: 0.5, max: 8, integer: false },
    });
  });

  it.each([
    ['replicas', 0, 'replicas must be between 1 and 10'],
    ['replicas', 11, 'replicas must be between 1 and 10'],
    ['replicas', 2.5, 'replicas must be an integer'],
    ['concurrency', -1, 'concurrency must be between 0 and 34'],
    ['concurrency', 35, 'concurrency must be between 0 and 34'],
    ['replicaCpuMillicores', 124, 'replicaCpuMillicores must be between 125 and 2000'],
    ['replicaCpuMillicores', 2001, 'replicaCpuMillicores must be between 125 and 2000'],
    ['replicaMemoryGb', 0.49, 'replicaMemoryGb must be between 0.5 and 8'],
    ['replicaMemoryGb', 8.01, 'replicaMemoryGb must be between 0.5 and 8'],
  ] as const)('%s = %s is refused with "%s" by the helper and the request schema', (field, value, message) => {
    expect(limitViolation(field, value)).toBe(message);
    const parsed = ScalingRequest.safeParse({ [field]: value });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toBe(message);
  });

  it('accepts both ends of every range, nulls and an empty body', () => {
    for (const [field, { min, max }] of Object.entries(SCALING_LIMITS)) {
      expect(ScalingRequest.safeParse({ [field]: min }).success).toBe(true);
      expect(ScalingRequest.safeParse({ [field]: max }).success).toBe(true);
      expect(ScalingRequest.safeParse({ [field]: null }).success).toBe(true);
    }
    expect(ScalingRequest.safeParse({}).success).toBe(true);
  });

  it('clamps into range', () => {
    expect(clampToLimit('replicas', 40)).toBe(10);
    expect(clampToLimit('replicaMemoryGb', 0.1)).toBe(0.5);
    expect(clampToLimit('concurrency', 3.4)).toBe(3);
  });
});
