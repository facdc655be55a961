import { describe, expect, it } from 'vitest';
import { changeDirections, decide } from '../../src/policy/decide.js';
import type { Behavior, Decision, PipeView, Policy } from '../../src/policy/types.js';
import { at, oneOff, policy, recurring, view } from './build.js';

const NOW = at('2026-11-23T10:00Z'); // a Monday, 11:00 in Berlin
const M = 60_000;

const biz = recurring({
  name: 'business-hours',
  timezone: 'Europe/Berlin',
  days: ['mon', 'tue', 'wed', 'thu', 'fri'],
  start: '08:00',
  end: '20:00',
  target: { replicas: { value: 6 } },
});
const base = policy({
  baseline: { replicas: { value: 2 }, replicaCpuMillicores: { value: 500 }, replicaMemoryGb: { value: 2 } },
  windows: [biz],
});

function codes(d: Decision): string[] {
  return d.reasons.map((r) => (r.field === undefined ? r.code : `${r.code}:${r.field}`));
}

describe('skips: no changes, one reason', () => {
  it.each<{ name: string; v: Partial<PipeView>; code: string; message: string }>([
    {
      name: 'kind unknown',
      v: { kind: null, state: null },
      code: 'unknown_pipe',
      message: 'pipe not read yet: first contact needed before scaling',
    },
    {
      name: 'stopped pipe',
      v: { state: 'Stopped' },
      code: 'pipe_state',
      message: 'pipe is Stopped: only Running, Degraded, Provisioning pipes are scaled',
    },
    {
      name: 'completed pipe',
      v: { kind: 'objectStorage', state: 'Completed' },
      code: 'pipe_state',
      message: 'pipe is Completed: only Running, Degraded, Provisioning pipes are scaled',
    },
    { name: 'state unknown', v: { state: null }, code: 'pipe_state', message: 'pipe state unknown: not scaling' },
    {
      name: 'endpoint not ready',
      v: { endpoints: { 'rpe-b': 'Ready', 'rpe-a': 'PendingAcceptance', 'rpe-c': 'Failed' } },
      code: 'endpoint_not_ready',
      message: 'reverse private endpoint not Ready: rpe-a is PendingAcceptance, rpe-c is Failed',
    },
    {
      name: 'paused until later',
      v: { paused: { reason: 'incident 42', until: NOW + 1 } },
      code: 'paused',
      message: 'paused until 2026-11-23T10:00:00.001Z: incident 42',
    },
    { name: 'paused without end', v: { paused: { reason: 'by ops' } }, code: 'paused', message: 'paused: by ops' },
    {
      name: 'idle service',
      v: { serviceState: 'idle' },
      code: 'service_not_running',
      message: 'service is idle: the platform refuses scaling changes (424) until it runs again',
    },
    {
      name: 'stopped service',
      v: { serviceState: 'stopped' },
      code: 'service_not_running',
      message: 'service is stopped: the platform refuses scaling changes (424) until it runs again',
    },
  ])('$name', ({ v, code, message }) => {
    const d = decide(base, NOW, view(v));
    expect(d).toEqual({
      action: 'skip',
      direction: 'none',
      windows: ['business-hours'],
      recommendation: {},
      desired: {},
      changes: {},
      reasons: [{ code, message }],
    });
  });

  it('an expired pause is no pause', () => {
    const d = decide(base, NOW, view({ paused: { reason: 'old', until: NOW } }));
    expect(d.action).toBe('change');
    expect(d.changes).toEqual({ replicas: 6 });
  });

  it('a service in any other state (or not known) is no reason to skip', () => {
    expect(decide(base, NOW, view({ serviceState: 'running' })).action).toBe('change');
    expect(decide(base, NOW, view({ serviceState: 'degraded' })).action).toBe('change');
    expect(decide(base, NOW, view({})).action).toBe('change');
  });

  it('all endpoints Ready: scaled', () => {
    expect(decide(base, NOW, view({ endpoints: { a: 'Ready' } })).action).toBe('change');
  });

  it('database pipes: nothing to do, said so', () => {
    const d = decide(base, NOW, view({ kind: 'database', state: 'Running', applied: {} }));
    expect(d).toEqual({
      action: 'none',
      direction: 'none',
      windows: ['business-hours'],
      recommendation: {},
      desired: {},
      changes: {},
      reasons: [{ code: 'kind', message: 'database pipes are scaled service-wide' }],
    });
  });
});

describe('the target, the kind and the comparison', () => {
  it('a window raises replicas; the baseline keeps the other fields; only changes are sent', () => {
    const d = decide(base, NOW, view());
    expect(d.action).toBe('change');
    expect(d.direction).toBe('up');
    expect(d.windows).toEqual(['business-hours']);
    expect(d.recommendation).toEqual({ replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 });
    expect(d.desired).toEqual({ replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 });
    expect(d.changes).toEqual({ replicas: 6 });
    expect(codes(d)).toEqual(['window', 'baseline:replicaCpuMillicores', 'baseline:replicaMemoryGb']);
  });

  it('outside the window the baseline brings it back down', () => {
    const d = decide(
      base,
      at('2026-11-23T19:00Z'),
      view({ applied: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 } }),
    );
    expect(d.windows).toEqual([]);
    expect(d.direction).toBe('down');
    expect(d.changes).toEqual({ replicas: 2 });
  });

  it('nothing differs: action none, reason unchanged', () => {
    const d = decide(base, NOW, view({ applied: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 } }));
    expect(d.action).toBe('none');
    expect(d.direction).toBe('none');
    expect(d.changes).toEqual({});
    expect(d.reasons.at(-1)).toEqual({
      code: 'unchanged',
      message: 'already applied: replicas 6, replicaCpuMillicores 500, replicaMemoryGb 2',
    });
  });

  it('an object-storage pipe takes only concurrency; the rest is named as ignored', () => {
    const p = policy({ baseline: { replicas: { value: 2 }, concurrency: { value: 8 } } });
    const d = decide(p, NOW, view({ kind: 'objectStorage', applied: { concurrency: 4 } }));
    expect(d.recommendation).toEqual({ concurrency: 8 });
    expect(d.changes).toEqual({ concurrency: 8 });
    expect(d.reasons.at(-1)).toEqual({
      code: 'kind',
      message: 'objectStorage pipes take only concurrency: ignoring replicas',
    });
  });

  it('a policy with no field of the kind: none, said so', () => {
    const d = decide(policy(), NOW, view({ kind: 'objectStorage', applied: { concurrency: 4 } }));
    expect(d.action).toBe('none');
    expect(d.reasons.slice(-2).map((r) => r.message)).toEqual([
      'objectStorage pipes take only concurrency: ignoring replicas',
      'the policy sets no field an objectStorage pipe takes',
    ]);
  });

  it('an unknown applied value is filled in, as a scale-up', () => {
    const d = decide(base, NOW, view({ applied: { replicas: 6, replicaCpuMillicores: 500 } }));
    expect(d.changes).toEqual({ replicaMemoryGb: 2 });
    expect(d.direction).toBe('up');
  });
});

describe('clamps, each alone, with the reason it reports', () => {
  const at12 = policy({ baseline: { replicas: { value: 12 } } });
  it.each<{
    name: string;
    p: Policy;
    v: Partial<PipeView>;
    want: number;
    reason: { code: string; bound?: string; message: string };
  }>([
    {
      name: 'pipe bound max',
      p: base,
      v: { bounds: { replicas: { max: 4 } } },
      want: 4,
      reason: { code: 'pipe_bound', bound: 'max', message: 'replicas 6 -> 4: pipe bound max 4' },
    },
    {
      name: 'pipe bound min',
      p: base,
      v: { bounds: { replicas: { min: 8 } } },
      want: 8,
      reason: { code: 'pipe_bound', bound: 'min', message: 'replicas 6 -> 8: pipe bound min 8' },
    },
    {
      name: 'platform range max',
      p: at12,
      v: {},
      want: 10,
      reason: { code: 'platform_range', message: 'replicas 12 -> 10: platform range 1..10' },
    },
    {
      name: 'platform range min',
      p: policy({ baseline: { replicas: { value: 0 } } }),
      v: {},
      want: 1,
      reason: { code: 'platform_range', message: 'replicas 0 -> 1: platform range 1..10' },
    },
    {
      name: 'platform whole numbers',
      p: policy({ baseline: { replicas: { value: 2.5 } } }),
      v: {},
      want: 3,
      reason: { code: 'platform_range', message: 'replicas 2.5 -> 3: platform range 1..10, whole numbers' },
    },
    {
      name: 'pipe bound first, then the platform range',
      p: at12,
      v: { bounds: { replicas: { max: 11 } } },
      want: 10,
      reason: { code: 'platform_range', message: 'replicas 11 -> 10: platform range 1..10' },
    },
  ])('$name', ({ p, v, want, reason }) => {
    const d = decide(p, NOW, view(v));
    expect(d.recommendation.replicas).toBe(want);
    expect(d.desired.replicas).toBe(want);
    expect(d.reasons).toContainEqual({ ...reason, field: 'replicas' });
  });
});

describe('behavior after the ranges', () => {
  const behavior: Behavior = {
    scaleUp: { maxStep: { replicas: 2 }, cooldownMs: 60_000 },
    scaleDown: { maxStep: { replicas: 1 }, cooldownMs: 5 * M, stabilizationMs: 10 * M },
  };
  const p = policy({
    baseline: { replicas: { value: 2 } },
    windows: [{ ...biz, target: { replicas: { value: 12 } } }],
    behavior,
  });

  it('window -> pipe bound -> platform range is the recommendation; maxStep shapes what is sent', () => {
    const d = decide(p, NOW, view({ applied: { replicas: 2 }, bounds: { replicas: { max: 8 } } }));
    expect(d.recommendation).toEqual({ replicas: 8 });
    expect(d.desired).toEqual({ replicas: 4 });
    expect(d.changes).toEqual({ replicas: 4 });
    expect(codes(d)).toEqual(['window', 'pipe_bound:replicas', 'max_step:replicas']);
  });

  it('cooldown holds; nothing is sent; both reasons say why', () => {
    const d = decide(p, NOW, view({ applied: { replicas: 2 }, lastChange: { up: NOW - 30_000 } }));
    expect(d.action).toBe('none');
    expect(d.recommendation).toEqual({ replicas: 10 });
    expect(d.reasons.slice(1).map((r) => r.message)).toEqual([
      'replicas 12 -> 10: platform range 1..10',
      'replicas scale-up 2 -> 10 held: scale-up cooldown 1m, 30s remaining',
      'already applied: replicas 2',
    ]);
  });

  it('stabilization keeps a recent high recommendation after the window ends', () => {
    const later = at('2026-11-23T19:05Z');
    const d = decide(
      p,
      later,
      view({ applied: { replicas: 10 }, recommendations: [{ at: later - 6 * M, values: { replicas: 10 } }] }),
    );
    expect(d.recommendation).toEqual({ replicas: 2 });
    expect(d.desired).toEqual({ replicas: 10 });
    expect(d.reasons.map((r) => r.code)).toEqual(['baseline', 'stabilization', 'unchanged']);
  });

  it('the pipe bound beats a hold: a value applied above a new bound comes down at once', () => {
    const later = at('2026-11-23T19:05Z');
    const d = decide(
      p,
      later,
      view({ applied: { replicas: 10 }, bounds: { replicas: { max: 6 } }, lastChange: { down: later - 65_000 } }),
    );
    expect(d.desired).toEqual({ replicas: 6 });
    expect(d.changes).toEqual({ replicas: 6 });
    expect(d.reasons.map((r) => r.message)).toEqual([
      'no window is active: baseline sets replicas 2',
      'replicas scale-down 10 -> 2 held: scale-down cooldown 5m, 3m55s remaining',
      'replicas 10 -> 6: pipe bound max 6 (limits outrank behavior)',
    ]);
  });

  it('mixed directions: each field on its own, reported up, both seen by changeDirections', () => {
    const mixed = policy({ baseline: { replicas: { value: 4 }, replicaMemoryGb: { value: 1 } } });
    const applied = { replicas: 2, replicaMemoryGb: 4, replicaCpuMillicores: 500 };
    const d = decide(mixed, NOW, view({ applied }));
    expect(d.changes).toEqual({ replicas: 4, replicaMemoryGb: 1 });
    expect(d.direction).toBe('up');
    expect(changeDirections(applied, d.changes)).toEqual({ up: true, down: true });
    expect(changeDirections(applied, { replicaMemoryGb: 1 })).toEqual({ up: false, down: true });
  });
});

describe('windows through decide()', () => {
  it.each([
    // Berlin spring-forward: 02:30 does not exist; the window begins at 03:00 CEST = 01:00Z
    {
      name: 'gap start, just before',
      p: policy({
        windows: [recurring({ name: 'night', timezone: 'Europe/Berlin', days: ['sun'], start: '02:30', end: '06:00' })],
      }),
      now: '2026-03-29T00:59:59.999Z',
      windows: [],
    },
    {
      name: 'gap start, at the first instant after the gap',
      p: policy({
        windows: [recurring({ name: 'night', timezone: 'Europe/Berlin', days: ['sun'], start: '02:30', end: '06:00' })],
      }),
      now: '2026-03-29T01:00Z',
      windows: ['night'],
    },
    // New York fall-back: 01:30 happens twice; the first (EDT, 05:30Z) starts it
    {
      name: 'repeated hour, first occurrence',
      p: policy({
        windows: [
          recurring({ name: 'nyc', timezone: 'America/New_York', days: ['sun'], start: '01:30', end: '03:00' }),
        ],
      }),
      now: '2026-11-01T05:30Z',
      windows: ['nyc'],
    },
    {
      name: 'week boundary, Monday morning',
      p: policy({
        windows: [
          recurring({ name: 'weekend', timezone: 'Europe/Berlin', days: ['sun'], start: '22:00', end: '06:00' }),
        ],
      }),
      now: '2026-11-23T04:00Z',
      windows: ['weekend'],
    },
    {
      name: 'overlap without priority: both',
      p: policy({ windows: [biz, recurring({ name: 'other', timezone: 'UTC', start: '09:00', end: '11:00' })] }),
      now: '2026-11-23T10:00Z',
      windows: ['business-hours', 'other'],
    },
    {
      name: 'overlap with priority: the higher',
      p: policy({
        windows: [
          biz,
          oneOff({ name: 'sale', from: '2026-11-23T00:00:00-05:00', to: '2026-11-24T00:00:00-05:00', priority: 5 }),
        ],
      }),
      now: '2026-11-23T10:00Z',
      windows: ['sale'],
    },
  ])('$name', ({ p, now, windows }) => {
    expect(decide(p, at(now), view()).windows).toEqual(windows);
  });
});

describe('every step together, reasons in decision order', () => {
  it('window, baseline, pipe bound, platform range, stabilization, max step, kind', () => {
    const behavior: Behavior = {
      scaleUp: { maxStep: { replicaCpuMillicores: 250 }, cooldownMs: 0 },
      scaleDown: { maxStep: { replicas: 1 }, cooldownMs: 0, stabilizationMs: 10 * M },
    };
    const quiet = recurring({
      name: 'quiet',
      timezone: 'America/New_York',
      days: ['mon'],
      start: '04:00',
      end: '07:00',
      target: { replicas: { value: 1 }, replicaCpuMillicores: { value: 4000 }, concurrency: { value: 3 } },
    });
    const p = policy({
      baseline: { replicas: { value: 4 }, replicaMemoryGb: { min: 1, max: 3 } },
      windows: [quiet],
      behavior,
    });
    const now = at('2026-11-23T10:00Z'); // 05:00 in New York
    const d = decide(
      p,
      now,
      view({
        applied: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 4 },
        bounds: { replicas: { min: 2 } },
        recommendations: [{ at: now - 5 * M, values: { replicas: 4 } }],
      }),
    );
    expect(d.windows).toEqual(['quiet']);
    expect(d.recommendation).toEqual({ replicas: 2, replicaCpuMillicores: 2000, replicaMemoryGb: 3 });
    expect(d.desired).toEqual({ replicas: 5, replicaCpuMillicores: 750, replicaMemoryGb: 3 });
    expect(d.changes).toEqual(d.desired);
    expect(d.direction).toBe('up');
    expect(d.reasons.map((r) => r.message)).toEqual([
      'quiet (America/New_York, mon 04:00-07:00) is active (priority 0): sets replicas 1, concurrency 3, replicaCpuMillicores 4000',
      'replicaMemoryGb 1..3 from the baseline: no winning window sets it',
      'replicaMemoryGb between 1 and 3: applied 4 moves to 3',
      'replicas 1 -> 2: pipe bound min 2',
      'replicaCpuMillicores 4000 -> 2000: platform range 125..2000',
      'replicas goes down to 4, not 2: highest recommendation in the last 10m is 4',
      'replicas scale-down 6 -> 4 limited to 5: scale-down maxStep 1',
      'replicaCpuMillicores scale-up 500 -> 2000 limited to 750: scale-up maxStep 250',
      'stream pipes take only replicas, replicaCpuMillicores, replicaMemoryGb: ignoring concurrency',
    ]);
  });
});
