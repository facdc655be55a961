import { describe, expect, it } from 'vitest';
import { combineTargets, resolveFieldTarget, resolveTarget } from '../../src/policy/target.js';
import type { FieldTarget, Target } from '../../src/policy/types.js';
import { oneOff, policy, recurring } from './build.js';

describe('combineTargets: equal priorities combine field by field with max', () => {
  it.each<{ name: string; targets: Target[]; want: Target }>([
    {
      name: 'fixed and fixed: the larger value',
      targets: [{ replicas: { value: 3 } }, { replicas: { value: 6 } }],
      want: { replicas: { value: 6 } },
    },
    {
      name: 'bounds and bounds: max of mins, max of maxes',
      targets: [{ replicas: { min: 2, max: 9 } }, { replicas: { min: 4, max: 6 } }],
      want: { replicas: { min: 4, max: 9 } },
    },
    {
      name: 'fixed inside bounds: raises the min',
      targets: [{ replicas: { value: 6 } }, { replicas: { min: 4, max: 8 } }],
      want: { replicas: { min: 6, max: 8 } },
    },
    {
      name: 'fixed above bounds: becomes both ends',
      targets: [{ replicas: { value: 10 } }, { replicas: { min: 4, max: 8 } }],
      want: { replicas: { min: 10, max: 10 } },
    },
    {
      name: 'fixed below bounds: the bounds stay',
      targets: [{ replicas: { min: 4, max: 8 } }, { replicas: { value: 2 } }],
      want: { replicas: { min: 4, max: 8 } },
    },
    {
      name: 'different fields: the union',
      targets: [{ replicas: { value: 3 } }, { concurrency: { value: 7 } }],
      want: { replicas: { value: 3 }, concurrency: { value: 7 } },
    },
    { name: 'nothing: nothing', targets: [], want: {} },
  ])('$name', ({ targets, want }) => {
    expect(combineTargets(targets)).toEqual(want);
  });

  it('the combined target resolves to the max of what each resolves to alone, for any applied value', () => {
    const pairs: [FieldTarget, FieldTarget][] = [
      [{ value: 6 }, { min: 4, max: 8 }],
      [{ value: 10 }, { min: 4, max: 8 }],
      [{ value: 2 }, { min: 4, max: 8 }],
      [
        { min: 1, max: 3 },
        { min: 5, max: 7 },
      ],
      [
        { min: 2, max: 9 },
        { min: 4, max: 6 },
      ],
      [{ value: 3 }, { value: 5 }],
    ];
    for (const [a, b] of pairs) {
      const both = combineTargets([{ replicas: a }, { replicas: b }]).replicas!;
      for (const applied of [undefined, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]) {
        const want = Math.max(resolveFieldTarget(a, applied), resolveFieldTarget(b, applied));
        expect(resolveFieldTarget(both, applied), `${JSON.stringify([a, b])} applied ${applied}`).toBe(want);
      }
    }
  });
});

describe('resolveFieldTarget', () => {
  it.each<{ t: FieldTarget; applied: number | undefined; want: number }>([
    { t: { value: 6 }, applied: 2, want: 6 },
    { t: { value: 6 }, applied: undefined, want: 6 },
    { t: { min: 4, max: 8 }, applied: 5, want: 5 }, // inside: kept
    { t: { min: 4, max: 8 }, applied: 4, want: 4 },
    { t: { min: 4, max: 8 }, applied: 8, want: 8 },
    { t: { min: 4, max: 8 }, applied: 2, want: 4 }, // below: clamped up
    { t: { min: 4, max: 8 }, applied: 10, want: 8 }, // above: clamped down
    { t: { min: 4, max: 8 }, applied: undefined, want: 4 }, // nothing applied known: min
  ])('$t with applied $applied -> $want', ({ t, applied, want }) => {
    expect(resolveFieldTarget(t, applied)).toBe(want);
  });
});

describe('resolveTarget', () => {
  const biz = recurring({
    name: 'biz',
    timezone: 'Europe/Berlin',
    start: '08:00',
    end: '20:00',
    target: { replicas: { value: 6 } },
  });
  const batch = recurring({
    name: 'batch',
    timezone: 'UTC',
    start: '09:00',
    end: '11:00',
    target: { replicas: { min: 4, max: 8 }, replicaMemoryGb: { value: 4 } },
  });
  const sale = oneOff({
    name: 'sale',
    from: '2026-11-27T05:00Z',
    to: '2026-11-30T05:00Z',
    priority: 10,
    target: { replicas: { value: 10 } },
  });
  const p = policy({
    baseline: { replicas: { value: 2 }, replicaCpuMillicores: { value: 500 } },
    windows: [biz, batch, sale],
  });

  it('no winner: the baseline, with one reason', () => {
    const r = resolveTarget(p, [], [], { replicas: 6 });
    expect(r.values).toEqual({ replicas: 2, replicaCpuMillicores: 500 });
    expect(r.reasons).toEqual([
      { code: 'baseline', message: 'no window is active: baseline sets replicas 2, replicaCpuMillicores 500' },
    ]);
  });

  it('fields no winner sets fall back to the baseline, each saying so', () => {
    const r = resolveTarget(p, [biz], [biz], {});
    expect(r.values).toEqual({ replicas: 6, replicaCpuMillicores: 500 });
    expect(r.reasons).toEqual([
      { code: 'window', message: 'biz (Europe/Berlin, daily 08:00-20:00) is active (priority 0): sets replicas 6' },
      {
        code: 'baseline',
        field: 'replicaCpuMillicores',
        message: 'replicaCpuMillicores 500 from the baseline: no winning window sets it',
      },
    ]);
  });

  it('equal winners combine with max and explain the combination and the bounds', () => {
    const r = resolveTarget(p, [biz, batch], [biz, batch], { replicas: 7 });
    expect(r.target.replicas).toEqual({ min: 6, max: 8 });
    expect(r.values).toEqual({ replicas: 7, replicaCpuMillicores: 500, replicaMemoryGb: 4 });
    expect(r.reasons).toContainEqual({
      code: 'window',
      field: 'replicas',
      message: 'replicas: max of biz 6, batch 4..8 = 6..8',
    });
    expect(r.reasons).toContainEqual({
      code: 'window',
      field: 'replicas',
      message: 'replicas between 6 and 8: keeps the applied 7',
    });
  });

  it('a higher priority outranks, and the loser is named', () => {
    const r = resolveTarget(p, [biz, sale], [sale], { replicas: 2 });
    expect(r.values.replicas).toBe(10);
    expect(r.reasons[0]!.message).toBe(
      'biz (Europe/Berlin, daily 08:00-20:00) is active but outranked (priority 0 < 10)',
    );
    expect(r.reasons[1]!.message).toBe(
      'sale (one-off 2026-11-27T05:00:00.000Z to 2026-11-30T05:00:00.000Z) is active (priority 10): sets replicas 10',
    );
  });

  it.each([
    { applied: 10, want: 8, message: 'replicas between 4 and 8: applied 10 moves to 8' },
    { applied: 1, want: 4, message: 'replicas between 4 and 8: applied 1 moves to 4' },
    {
      applied: undefined,
      want: 4,
      message: 'replicas between 4 and 8: nothing applied is known, taking the minimum 4',
    },
  ])('bounds with applied $applied -> $want', ({ applied, want, message }) => {
    const r = resolveTarget(p, [batch], [batch], applied === undefined ? {} : { replicas: applied });
    expect(r.values.replicas).toBe(want);
    expect(r.reasons).toContainEqual({ code: 'window', field: 'replicas', message });
  });
});
