// What a change made by hand becomes (src/policy/drift.ts): reverted (the default), held as an
// override with reason `manual` for a duration, or adopted as a floor until the window ends.
import { describe, expect, it } from 'vitest';
import { onDriftAction } from '../../src/policy/drift.js';
import { at, oneOff, policy } from './build.js';

const T = at('2026-11-24T10:00Z');
const peak = oneOff({ name: 'peak', from: '2026-11-24T09:00Z', to: '2026-11-24T12:00Z' });

describe('onDriftAction', () => {
  it('revert is the default, and what a drift of no known field gets', () => {
    expect(onDriftAction(policy(), T, { replicas: 2 }, { replicas: 5 }, 'id')).toEqual({ action: 'revert' });
    const hold = policy({ behavior: { ...policy().behavior, onDrift: { kind: 'hold', durationMs: 3_600_000 } } });
    expect(onDriftAction(hold, T, {}, { replicas: 5 }, 'id')).toEqual({ action: 'revert' });
  });

  it('hold: the fields that differ, as a manual override for the duration', () => {
    const hold = policy({ behavior: { ...policy().behavior, onDrift: { kind: 'hold', durationMs: 3_600_000 } } });
    expect(
      onDriftAction(
        hold,
        T,
        { replicas: 2, replicaCpuMillicores: 500 },
        { replicas: 5, replicaCpuMillicores: 500 },
        'id',
      ),
    ).toEqual({
      action: 'override',
      override: {
        id: 'id',
        values: { replicas: 5 },
        setAt: T,
        until: T + 3_600_000,
        reason: 'manual',
        source: 'manual',
        mode: 'set',
      },
    });
  });

  it('adoptAsFloor: a floor until the current window ends; outside any window, until the next boundary', () => {
    const adopt = policy({ windows: [peak], behavior: { ...policy().behavior, onDrift: { kind: 'adoptAsFloor' } } });
    expect(onDriftAction(adopt, T, { replicas: 5 }, { replicas: 7 }, 'id')).toMatchObject({
      action: 'override',
      override: { values: { replicas: 7 }, until: at('2026-11-24T12:00Z'), mode: 'floor', reason: 'manual' },
    });
    expect(onDriftAction(adopt, at('2026-11-24T07:00Z'), { replicas: 2 }, { replicas: 3 }, 'id')).toMatchObject({
      override: { until: at('2026-11-24T09:00Z') },
    });
  });
});
