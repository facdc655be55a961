// diffConfigs() over random pairs of configs: every change either simulation made is accounted for
// exactly once (dropped as equal to one of the other side, or named in one ChangeDiff), and the
// capacity totals add up (total = the sum of the pipes, delta = head - base).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCALING_FIELDS } from '../../src/api/index.js';
import { capacityOver, type Capacity } from '../../src/policy/capacity.js';
import { diffConfigs, type ChangeDiff, type ConfigDiff } from '../../src/policy/diff.js';
import { simulate, type SimulatedChange } from '../../src/policy/simulate.js';
import type { PipeConfig, PipeView, Policy } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { instant, pipeView, policy } from './arbitraries.js';

const NAMES = ['a', 'b', 'c', 'd', 'e'] as const;

const pipeOf = (name: string, ids: string, policyName: string): PipeConfig => ({
  name,
  organizationId: 'o',
  serviceId: 's',
  pipeId: ids,
  policy: policyName,
  key: 'default',
  bounds: {},
});

function configOf(pipes: PipeConfig[], policies: Record<string, Policy>): Config {
  return {
    api: { keys: { default: { keyId: 'k', keySecret: 's', rateLimit: { requests: 10, perMs: 10_000 } } } },
    evaluate: { cron: '*/30 * * * * *' },
    pipes,
    policies,
  } as unknown as Config;
}

/** What becomes of a base pipe in the head: kept (maybe with the other policy), removed or renamed. */
const fate = fc.constantFrom('same', 'other-policy', 'removed', 'renamed');

const pair = instant.chain((from) =>
  fc.record({
    from: fc.constant(from),
    hours: fc.integer({ min: 6, max: 72 }),
    stepMs: fc.constantFrom(60_000, 300_000, 900_000),
    // the base's policy, and the head's: unrelated, or the base's with its windows an hour later
    pq: policy.chain((p) => fc.tuple(fc.constant(p), fc.oneof(policy, fc.constant(anHourLater(p))))),
    base: fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }),
    fates: fc.array(fate, { minLength: 4, maxLength: 4 }),
    added: fc.uniqueArray(fc.constantFrom(...NAMES), { maxLength: 2 }),
    // mostly running pipes, so most cases scale; some stopped, paused, of unknown kind
    views: fc.array(
      fc.oneof(
        { arbitrary: pipeView(from).map((v) => ({ ...v, bounds: {} })), weight: 1 },
        {
          arbitrary: pipeView(from).map((v): PipeView => ({
            ...v,
            kind: 'stream',
            state: 'Running',
            bounds: {},
            endpoints: {},
            paused: undefined,
          })),
          weight: 3,
        },
      ),
      { minLength: 5, maxLength: 5 },
    ),
    unread: fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
  }),
);

/** The same policy with every window an hour later: its changes move rather than change. */
function anHourLater(p: Policy): Policy {
  return {
    ...p,
    windows: p.windows.map((w) =>
      w.kind === 'oneOff'
        ? { ...w, from: w.from + 3_600_000, to: w.to + 3_600_000 }
        : {
            ...w,
            start: { ...w.start, hour: (w.start.hour + 1) % 24 },
            ...(w.end ? { end: { ...w.end, hour: (w.end.hour + 1) % 24 } } : {}),
          },
    ),
  };
}

type Case = typeof pair extends fc.Arbitrary<infer T> ? T : never;

interface Sides {
  readonly base: { config: Config; views: Record<string, PipeView | undefined>; changes: SimulatedChange[] };
  readonly head: { config: Config; views: Record<string, PipeView | undefined>; changes: SimulatedChange[] };
  readonly from: number;
  readonly to: number;
}

function sides(c: Case): Sides {
  const {
    from,
    hours,
    stepMs,
    pq: [p, q],
    base: baseNames,
    fates,
    added,
    views,
    unread,
  } = c;
  const to = from + hours * 3_600_000;
  const policies = { p: { ...p, name: 'p' }, q: { ...q, name: 'q' } };
  const basePipes = baseNames.map((n) => pipeOf(n, `id-${n}`, 'p'));
  const headPipes: PipeConfig[] = [];
  const taken = new Set<string>();
  basePipes.forEach((bp, i) => {
    const f = fates[i];
    if (f === 'removed') return;
    if (f === 'renamed') {
      const name = `${bp.name}-renamed`;
      headPipes.push({ ...bp, name });
      taken.add(name);
      return;
    }
    headPipes.push(f === 'other-policy' ? { ...bp, policy: 'q' } : bp);
    taken.add(bp.name);
  });
  // an added pipe: a new name with ids of its own
  for (const n of added) {
    const name = `${n}-new`;
    if (!taken.has(name)) headPipes.push(pipeOf(name, `id-${name}`, 'q'));
  }
  // each name's view (the same pipe reads the same on both sides), or none: not read
  const viewOf = (pipe: PipeConfig): PipeView | undefined => {
    const i = NAMES.indexOf(pipe.pipeId.replace(/^id-/, '').replace(/-new$/, '') as (typeof NAMES)[number]);
    return unread[i] ? undefined : views[i];
  };
  const side = (pipes: PipeConfig[]) => {
    const config = configOf(pipes, policies);
    const v = Object.fromEntries(pipes.map((pp) => [pp.name, viewOf(pp)]));
    return { config, views: v, changes: simulate(config, v, from, to, stepMs) };
  };
  return { base: side(basePipes), head: side(headPipes), from, to };
}

const exact = (c: SimulatedChange): string =>
  `${c.pipe}|${c.at}|${SCALING_FIELDS.map((f) => c.scaling[f] ?? '').join(',')}`;

/** The base and head changes a ChangeDiff names. */
function named(d: ChangeDiff): { base?: SimulatedChange; head?: SimulatedChange } {
  switch (d.kind) {
    case 'added':
      return { head: d.head };
    case 'removed':
      return { base: d.base };
    default:
      return { base: d.base, head: d.head };
  }
}

function expectCapacityClose(got: Capacity, want: Capacity): void {
  for (const k of ['replicaCoreHours', 'replicaGbHours', 'concurrencySlotHours'] as const) {
    expect(Math.abs(got[k] - want[k]), k).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(want[k])));
  }
}

const sum = (xs: Capacity[]): Capacity => ({
  replicaCoreHours: xs.reduce((a, x) => a + x.replicaCoreHours, 0),
  replicaGbHours: xs.reduce((a, x) => a + x.replicaGbHours, 0),
  concurrencySlotHours: xs.reduce((a, x) => a + x.concurrencySlotHours, 0),
});

const minus = (a: Capacity, b: Capacity): Capacity => ({
  replicaCoreHours: a.replicaCoreHours - b.replicaCoreHours,
  replicaGbHours: a.replicaGbHours - b.replicaGbHours,
  concurrencySlotHours: a.concurrencySlotHours - b.concurrencySlotHours,
});

/** Every change of both sides is in the diff once, or dropped as equal to exactly one of the other side. */
function expectAccounted(s: Sides, diff: ConfigDiff): void {
  const seen = new Set<SimulatedChange>();
  const note = (c: SimulatedChange | undefined, side: readonly SimulatedChange[]): void => {
    if (c === undefined) return;
    expect(side, 'a change the diff names comes from its side').toContain(c);
    expect(seen.has(c), 'a change is named at most once').toBe(false);
    seen.add(c);
  };
  for (const pd of diff.pipes) {
    for (const d of pd.changes) {
      const { base, head } = named(d);
      note(base, s.base.changes);
      note(head, s.head.changes);
      // each kind says what it claims: the same instant (values) or the same values (moved)
      if (d.kind === 'values') {
        expect(d.head.at).toBe(d.base.at);
        expect(exact({ ...d.head, pipe: '' })).not.toBe(exact({ ...d.base, pipe: '' }));
      }
      if (d.kind === 'moved') {
        expect(d.head.at).not.toBe(d.base.at);
        expect({ ...d.head.scaling }).toEqual({ ...d.base.scaling });
      }
      if (base) expect([pd.renamedFrom ?? pd.pipe]).toContain(base.pipe);
      if (head) expect(head.pipe).toBe(pd.pipe);
    }
  }
  // what the diff does not name is equal pairs: per pipe (through a rename), the same multiset on both sides
  const headName = new Map<string, string>(diff.pipes.map((pd) => [pd.renamedFrom ?? pd.pipe, pd.pipe]));
  const left = (changes: readonly SimulatedChange[], rename: boolean): string[] =>
    changes
      .filter((c) => !seen.has(c))
      .map((c) => exact({ ...c, pipe: rename ? (headName.get(c.pipe) ?? `gone:${c.pipe}`) : c.pipe }))
      .sort();
  expect(left(s.base.changes, true)).toEqual(left(s.head.changes, false));
  // and no change is dropped from a pipe that exists on one side only
  for (const pd of diff.pipes) {
    if (pd.status === 'added') expect(pd.changes.length).toBe(s.head.changes.filter((c) => c.pipe === pd.pipe).length);
    if (pd.status === 'removed')
      expect(pd.changes.length).toBe(s.base.changes.filter((c) => c.pipe === pd.pipe).length);
  }
}

describe('diffConfigs() on random pairs of configs', () => {
  it('accounts for every change of either side exactly once', () => {
    const kinds = new Map<string, number>();
    fc.assert(
      fc.property(pair, (c) => {
        const s = sides(c);
        const diff = diffConfigs(s.base, s.head, s.from, s.to);
        expectAccounted(s, diff);
        for (const d of diff.pipes.flatMap((pd) => pd.changes)) kinds.set(d.kind, (kinds.get(d.kind) ?? 0) + 1);
        // differs exactly when some pipe is not the same
        expect(diff.differs).toBe(diff.pipes.some((pd) => pd.status !== 'same'));
        // a pipe is listed once: every head pipe, and every base pipe neither kept nor renamed
        const listed = diff.pipes.map((pd) => pd.pipe);
        expect(new Set(listed).size).toBe(listed.length);
      }),
      { numRuns: 150 },
    );
    // the runs meet every kind of difference
    for (const k of ['added', 'removed', 'moved', 'values']) expect(kinds.get(k) ?? 0, k).toBeGreaterThan(2);
  }, 120_000);

  it('adds capacity up: total = the sum of the pipes, delta = head - base, each pipe its own timeline', () => {
    fc.assert(
      fc.property(pair, (c) => {
        const s = sides(c);
        const diff = diffConfigs(s.base, s.head, s.from, s.to);
        expectCapacityClose(diff.total.base, sum(diff.pipes.map((pd) => pd.base)));
        expectCapacityClose(diff.total.head, sum(diff.pipes.map((pd) => pd.head)));
        expectCapacityClose(diff.total.delta, minus(diff.total.head, diff.total.base));
        for (const pd of diff.pipes) {
          expectCapacityClose(pd.delta, minus(pd.head, pd.base));
          // each side's capacity is what its own simulation ran (nothing on a side the pipe is not on)
          const headView = pd.status === 'removed' ? undefined : s.head.views[pd.pipe];
          const baseName = pd.status === 'added' ? undefined : (pd.renamedFrom ?? pd.pipe);
          const baseView = baseName === undefined ? undefined : s.base.views[baseName];
          const own = (view: PipeView | undefined, changes: SimulatedChange[], name: string | undefined) =>
            view === undefined || name === undefined
              ? sum([])
              : capacityOver(
                  view.applied,
                  changes.filter((x) => x.pipe === name),
                  s.from,
                  s.to,
                );
          expectCapacityClose(pd.head, own(headView, s.head.changes, pd.status === 'removed' ? undefined : pd.pipe));
          expectCapacityClose(pd.base, own(baseView, s.base.changes, baseName));
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it('finds nothing between a config and itself', () => {
    fc.assert(
      fc.property(pair, (c) => {
        const s = sides(c);
        const diff = diffConfigs(s.base, s.base, s.from, s.to);
        expect(diff.differs).toBe(false);
        expect(diff.pipes.every((pd) => pd.changes.length === 0 && pd.status === 'same')).toBe(true);
        expectCapacityClose(diff.total.delta, sum([]));
      }),
      { numRuns: 50 },
    );
  }, 60_000);
});
