// What simulate prints for a scale-up sent ahead of its boundary when the lead plan reserves its
// confirmation reads (src/cli/policy-output.ts): its slot, when it is at target and when confirmed.
import { describe, expect, it } from 'vitest';
import { changeLine, simulationJson } from '../../src/cli/policy-output.js';
import type { SimulatedChange } from '../../src/policy/index.js';

const up: SimulatedChange = {
  pipe: 'orders-events',
  at: Date.parse('2026-11-23T06:56:00Z'),
  direction: 'up',
  windows: [],
  scaling: { replicas: 4 },
  previous: { replicas: 2 },
  reasons: [],
  lead: { boundary: Date.parse('2026-11-23T07:00:00Z'), windows: ['business-hours'] },
  expectedAt: Date.parse('2026-11-23T06:59:00Z'),
  slot: { start: Date.parse('2026-11-23T06:55:01.111Z'), confirmedBy: Date.parse('2026-11-23T06:59:04.444Z') },
};

describe('simulate: a lead scale-up whose confirmation reads are planned', () => {
  it('names its slot, when it is at target and when its confirming read shows it', () => {
    expect(changeLine(up)).toContain(
      '[baseline, ahead of business-hours at 07:00:00Z (slot from 06:55:01Z), at target by 06:59:00Z, confirmed by 06:59:04Z]',
    );
    expect(simulationJson([up], {}, [], () => null)[0]).toMatchObject({
      expectedAt: '2026-11-23T06:59:00.000Z',
      slot: { start: '2026-11-23T06:55:01.111Z', confirmedBy: '2026-11-23T06:59:04.444Z' },
    });
  });

  it('without planned reads (no actuation counted) as before', () => {
    const { slot: _slot, expectedAt: _at, ...plain } = up;
    expect(changeLine(plain)).toMatch(/\[baseline, ahead of business-hours at 07:00:00Z\]$/);
    expect(simulationJson([plain], {}, [], () => null)[0]).not.toHaveProperty('slot');
  });
});
