// capacityOver(): capacity-hours held by a starting scaling and the changes made over a period.
import { describe, expect, it } from 'vitest';
import { addCapacity, capacityOver, NO_CAPACITY, subtractCapacity } from '../../src/policy/capacity.js';
import { at } from './build.js';

const FROM = at('2026-11-23T00:00Z');
const TO = at('2026-11-24T00:00Z');

describe('capacityOver', () => {
  it('holds the start for the whole period when nothing changes', () => {
    const c = capacityOver({ replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [], FROM, TO);
    expect(c).toEqual({ replicaCoreHours: 24, replicaGbHours: 96, concurrencySlotHours: 0 });
  });

  it('switches at each change, merging only the fields the change sends', () => {
    const c = capacityOver(
      { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      [
        { at: at('2026-11-23T08:00Z'), scaling: { replicas: 4, replicaCpuMillicores: 1000 } },
        { at: at('2026-11-23T20:00Z'), scaling: { replicas: 2 } },
      ],
      FROM,
      TO,
    );
    // 8 h x 2 x 0.5 + 12 h x 4 x 1 + 4 h x 2 x 1 cores; 8 h x 2 x 2 + 12 h x 4 x 2 + 4 h x 2 x 2 GB
    expect(c.replicaCoreHours).toBeCloseTo(8 + 48 + 8);
    expect(c.replicaGbHours).toBeCloseTo(32 + 96 + 16);
    expect(c.concurrencySlotHours).toBe(0);
  });

  it('counts concurrency slots for object-storage pipes and ignores changes outside the period', () => {
    const c = capacityOver(
      { concurrency: 2 },
      [
        { at: at('2026-11-22T23:00Z'), scaling: { concurrency: 9 } },
        { at: at('2026-11-23T12:00Z'), scaling: { concurrency: 6 } },
        { at: TO, scaling: { concurrency: 1 } },
      ],
      FROM,
      TO,
    );
    expect(c).toEqual({ replicaCoreHours: 0, replicaGbHours: 0, concurrencySlotHours: 12 * 2 + 12 * 6 });
  });

  it('adds and subtracts field by field', () => {
    const a = { replicaCoreHours: 3, replicaGbHours: 2, concurrencySlotHours: 1 };
    expect(addCapacity(a, a)).toEqual({ replicaCoreHours: 6, replicaGbHours: 4, concurrencySlotHours: 2 });
    expect(subtractCapacity(NO_CAPACITY, a)).toEqual({
      replicaCoreHours: -3,
      replicaGbHours: -2,
      concurrencySlotHours: -1,
    });
  });
});
