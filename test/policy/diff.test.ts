// diffChanges() and diffConfigs(): what two simulations decide differently, pipe by pipe.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { diffChanges, diffConfigs } from '../../src/policy/diff.js';
import type { SimulatedChange } from '../../src/policy/simulate.js';
import type { Config } from '../../src/config/types.js';
import { at, view } from './build.js';

const change = (iso: string, replicas: number, pipe = 'p'): SimulatedChange => ({
  pipe,
  at: at(iso),
  direction: 'up',
  windows: [],
  scaling: { replicas },
  previous: { replicas: 1 },
  reasons: [],
});

describe('diffChanges', () => {
  it('drops equal changes and names the rest added, removed, moved or with other values', () => {
    const base = [
      change('2026-11-23T08:00Z', 4),
      change('2026-11-23T12:00Z', 6),
      change('2026-11-23T20:00Z', 2),
      change('2026-11-23T22:00Z', 1),
    ];
    const head = [
      change('2026-11-23T08:00Z', 4),
      change('2026-11-23T12:00Z', 8),
      change('2026-11-23T19:00Z', 2),
      change('2026-11-23T23:00Z', 3),
    ];
    const d = diffChanges(base, head);
    expect(d.map((c) => c.kind)).toEqual(['values', 'moved', 'removed', 'added']);
    expect(d[1]).toMatchObject({
      kind: 'moved',
      base: { at: at('2026-11-23T20:00Z') },
      head: { at: at('2026-11-23T19:00Z') },
    });
  });

  it('is empty for the same list', () => {
    const list = [change('2026-11-23T08:00Z', 4), change('2026-11-23T20:00Z', 2)];
    expect(diffChanges(list, [...list])).toEqual([]);
  });
});

describe('diffConfigs', () => {
  const shipped = loadConfig('config/pipescaler.yaml', {});
  const [first, second] = shipped.pipes;
  const base: Config = { ...shipped, pipes: [first!, second!] };
  const views = {
    [first!.name]: view({ applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 } }),
    [second!.name]: view(),
  };
  const from = at('2026-11-23T00:00Z');
  const to = at('2026-11-24T00:00Z');

  it('says two equal configs decide the same, with equal capacity', () => {
    const changes = [change('2026-11-23T08:00Z', 4, first!.name)];
    const d = diffConfigs({ config: base, views, changes }, { config: base, views, changes }, from, to);
    expect(d.differs).toBe(false);
    expect(d.pipes.map((p) => p.status)).toEqual(['same', 'same']);
    expect(d.total.delta).toEqual({ replicaCoreHours: 0, replicaGbHours: 0, concurrencySlotHours: 0 });
  });

  it('reports a renamed pipe by its ids, an added and a removed one, and the capacity delta', () => {
    const renamed = { ...second!, name: 'renamed-pipe' };
    const added = { ...first!, name: 'new-pipe', pipeId: 'c1000000-0000-4000-8000-0000000000ff' };
    const head: Config = { ...shipped, pipes: [renamed, added] };
    const headViews = { 'renamed-pipe': views[second!.name], 'new-pipe': view() };
    const d = diffConfigs(
      { config: base, views, changes: [change('2026-11-23T08:00Z', 4, first!.name)] },
      { config: head, views: headViews, changes: [change('2026-11-23T12:00Z', 3, 'new-pipe')] },
      from,
      to,
    );
    expect(d.differs).toBe(true);
    expect(d.pipes.map((p) => [p.pipe, p.status])).toEqual([
      ['renamed-pipe', 'renamed'],
      ['new-pipe', 'added'],
      [first!.name, 'removed'],
    ]);
    expect(d.pipes[0]).toMatchObject({ renamedFrom: second!.name, changes: [] });
    // base: first pipe 8 h x 2 x 0.5 + 16 h x 4 x 0.5 cores; renamed pipe 24 h x 2 x 0.5 on both sides
    expect(d.total.base.replicaCoreHours).toBeCloseTo(8 + 32 + 24);
    // head: renamed 24; new pipe 12 h x 2 x 0.5 + 12 h x 3 x 0.5
    expect(d.total.head.replicaCoreHours).toBeCloseTo(24 + 12 + 18);
    expect(d.total.delta.replicaCoreHours).toBeCloseTo(54 - 64);
  });
});
