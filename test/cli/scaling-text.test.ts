import { describe, expect, it } from 'vitest';
import { compactScaling, formatMoves, formatValues, rawScaling } from '../../src/cli/scaling-text.js';

const full = { replicas: 4, replicaCpuMillicores: 1000, replicaMemoryGb: 4 };

describe('scaling text', () => {
  it('names each field with its unit, in the API order', () => {
    expect(formatValues({ replicaMemoryGb: 4, replicas: 6, replicaCpuMillicores: 1000 })).toBe(
      'replicas 6, cpu 1000m, memory 4GB',
    );
    expect(formatValues({ concurrency: 3 })).toBe('concurrency 3');
    expect(formatValues({})).toBe('-');
  });

  it('shows a move per field of the new values, "?" for an unknown old one', () => {
    expect(formatMoves({ replicas: 2, replicaCpuMillicores: 500 }, { replicas: 4, replicaCpuMillicores: 1000 })).toBe(
      'replicas 2->4, cpu 500m->1000m',
    );
    expect(formatMoves({}, { replicaMemoryGb: 8 })).toBe('memory ?->8GB');
  });

  it('writes a scaling in a few characters', () => {
    expect(compactScaling(full)).toBe('4x1000m/4GB');
    expect(compactScaling({ replicas: 2 })).toBe('2 repl');
    expect(compactScaling({ replicaCpuMillicores: 500 })).toBe('500m');
    expect(compactScaling({ concurrency: 3 })).toBe('conc 3');
    expect(compactScaling({})).toBe('-');
    expect(compactScaling(null)).toBe('-');
  });

  it('writes the API field names for --wide', () => {
    expect(rawScaling({ replicaMemoryGb: 4, replicas: 6, replicaCpuMillicores: 1000 })).toBe(
      'replicas=6 replicaCpuMillicores=1000 replicaMemoryGb=4',
    );
    expect(rawScaling({})).toBe('-');
    expect(rawScaling(undefined)).toBe('-');
  });
});
