// The outcome's one reason, from real decide() results: a scale-down a pipe's max forces is
// `pipe_bound`, a scale-down a pipe's min only holds short is the window's.
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/decide.js';
import { outcomeReason, skipCode } from '../../src/policy/outcome-reason.js';
import { at, policy, recurring, view } from './build.js';

const NOW = at('2026-11-23T10:00Z'); // a Monday, 11:00 in Berlin
const biz = recurring({
  name: 'business-hours',
  timezone: 'Europe/Berlin',
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  start: '08:00',
  end: '20:00',
  target: { replicas: { value: 6 } },
});
const p = policy({ baseline: { replicas: { value: 2 } }, windows: [biz] });
const night = at('2026-11-23T23:00Z');

describe('outcomeReason', () => {
  it('a scale-down a pipe bound max forces is pipe_bound, not window', () => {
    const d = decide(p, NOW, view({ applied: { replicas: 8 }, bounds: { replicas: { max: 4 } } }));
    expect(d).toMatchObject({
      action: 'change',
      direction: 'down',
      changes: { replicas: 4 },
      windows: ['business-hours'],
    });
    expect(d.reasons).toContainEqual(expect.objectContaining({ code: 'pipe_bound', bound: 'max' }));
    expect(outcomeReason(d)).toBe('pipe_bound');
  });

  it('a scale-up a pipe bound min forces is pipe_bound, not baseline', () => {
    const d = decide(p, night, view({ applied: { replicas: 1 }, bounds: { replicas: { min: 3 } } }));
    expect(d).toMatchObject({ action: 'change', direction: 'up', changes: { replicas: 3 }, windows: [] });
    expect(outcomeReason(d)).toBe('pipe_bound');
  });

  it('a scale-down a min only holds short is the target that moved it', () => {
    const d = decide(p, night, view({ applied: { replicas: 6 }, bounds: { replicas: { min: 3 } } }));
    expect(d).toMatchObject({ direction: 'down', changes: { replicas: 3 } });
    expect(outcomeReason(d)).toBe('baseline');
  });

  it('a scale-up a max only holds short is the window', () => {
    const d = decide(p, NOW, view({ applied: { replicas: 2 }, bounds: { replicas: { max: 4 } } }));
    expect(d).toMatchObject({ direction: 'up', changes: { replicas: 4 } });
    expect(outcomeReason(d)).toBe('window');
  });

  it('without bounds: window, baseline; a skip: its code', () => {
    expect(outcomeReason(decide(p, NOW, view({ applied: { replicas: 2 } })))).toBe('window');
    expect(outcomeReason(decide(p, night, view({ applied: { replicas: 6 } })))).toBe('baseline');
    const skipped = decide(p, NOW, view({ state: 'Stopped' }));
    expect(outcomeReason(skipped)).toBe('pipe_state');
    expect(skipCode(skipped)).toBe('pipe_state');
  });
});
