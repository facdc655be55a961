// `diff`: what two configs decide differently over one period, per pipe, and the capacity each
// would run, and what each one's lead plans are expected to spend early and short. Pure: it takes both simulations (the changes simulate() made) and the views they
// started from. Pipes are matched by name; a pipe whose name moved but whose platform ids did not
// is reported as renamed.
import { SCALING_FIELDS, type ScalingValues } from '../api/index.js';
import { addCapacity, capacityOver, NO_CAPACITY, subtractCapacity, type Capacity } from './capacity.js';
import { addMinutes, NO_MINUTES, plannedCapacityOver, type BoundaryCapacity } from './early-capacity.js';
import type { SimulatedChange } from './simulate.js';
import type { ScalingConfig, PipeConfig, PipeView } from './types.js';

export interface DiffSide {
  readonly config: ScalingConfig;
  /** The views the simulation started from; a pipe without one was not simulated. */
  readonly views: Readonly<Record<string, PipeView | undefined>>;
  readonly changes: readonly SimulatedChange[];
}

export type ChangeDiff =
  | { readonly kind: 'added'; readonly head: SimulatedChange }
  | { readonly kind: 'removed'; readonly base: SimulatedChange }
  /** The same values at another instant. */
  | { readonly kind: 'moved'; readonly base: SimulatedChange; readonly head: SimulatedChange }
  /** Another value at the same instant. */
  | { readonly kind: 'values'; readonly base: SimulatedChange; readonly head: SimulatedChange };

export type PipeStatus = 'same' | 'changed' | 'added' | 'removed' | 'renamed';

export interface PipeDiff {
  /** The head's name; the base's for a removed pipe. */
  readonly pipe: string;
  readonly status: PipeStatus;
  readonly renamedFrom?: string;
  /** false when neither side could read the pipe: its changes are unknown, not absent. */
  readonly simulated: boolean;
  readonly changes: readonly ChangeDiff[];
  readonly base: Capacity;
  readonly head: Capacity;
  readonly delta: Capacity;
  /** The capacity each side's lead plans are expected to spend early and short at the boundaries
   *  of the period (early-capacity.ts plannedCapacityOver; none for a pipe with no lead slot). */
  readonly spent: Spent;
}

export interface Spent {
  readonly base: BoundaryCapacity;
  readonly head: BoundaryCapacity;
}

export interface ConfigDiff {
  readonly from: number;
  readonly to: number;
  readonly pipes: readonly PipeDiff[];
  readonly total: {
    readonly base: Capacity;
    readonly head: Capacity;
    readonly delta: Capacity;
    readonly spent: Spent;
  };
  /** false when both configs decide the same for every pipe (nothing added, removed or renamed). */
  readonly differs: boolean;
}

const NONE_SPENT: BoundaryCapacity = { early: NO_MINUTES, short: NO_MINUTES };

function valuesKey(values: ScalingValues): string {
  return SCALING_FIELDS.filter((f) => values[f] !== undefined)
    .map((f) => `${f}=${values[f]}`)
    .join(',');
}

/** Pairs the two change lists of one pipe: equal ones drop out, the rest become a ChangeDiff each. */
export function diffChanges(base: readonly SimulatedChange[], head: readonly SimulatedChange[]): ChangeDiff[] {
  const exact = (c: SimulatedChange): string => `${c.at}|${valuesKey(c.scaling)}`;
  const headLeft = [...head];
  const baseLeft: SimulatedChange[] = [];
  for (const b of base) {
    const i = headLeft.findIndex((h) => exact(h) === exact(b));
    if (i >= 0) headLeft.splice(i, 1);
    else baseLeft.push(b);
  }
  const out: ChangeDiff[] = [];
  const take = (match: (b: SimulatedChange, h: SimulatedChange) => boolean, kind: 'moved' | 'values'): void => {
    for (let bi = 0; bi < baseLeft.length;) {
      const b = baseLeft[bi];
      const h = b && headLeft.find((x) => match(b, x));
      if (!b || !h) {
        bi++;
        continue;
      }
      out.push({ kind, base: b, head: h });
      baseLeft.splice(bi, 1);
      headLeft.splice(headLeft.indexOf(h), 1);
    }
  };
  take((b, h) => b.at === h.at, 'values');
  take((b, h) => valuesKey(b.scaling) === valuesKey(h.scaling), 'moved');
  for (const b of baseLeft) out.push({ kind: 'removed', base: b });
  for (const h of headLeft) out.push({ kind: 'added', head: h });
  return out.sort((x, y) => instantOf(x) - instantOf(y));
}

function instantOf(d: ChangeDiff): number {
  return d.kind === 'added' ? d.head.at : d.kind === 'removed' ? d.base.at : Math.min(d.base.at, d.head.at);
}

const identity = (p: PipeConfig): string => `${p.organizationId}/${p.serviceId}/${p.pipeId}`;

export function diffConfigs(base: DiffSide, head: DiffSide, from: number, to: number): ConfigDiff {
  const byPipe = (side: DiffSide): Map<string, SimulatedChange[]> => {
    const m = new Map<string, SimulatedChange[]>();
    for (const c of side.changes) m.set(c.pipe, [...(m.get(c.pipe) ?? []), c]);
    return m;
  };
  const baseChanges = byPipe(base);
  const headChanges = byPipe(head);
  const capacity = (side: DiffSide, name: string, changes: Map<string, SimulatedChange[]>): Capacity => {
    const view = side.views[name];
    return view ? capacityOver(view.applied, changes.get(name) ?? [], from, to) : NO_CAPACITY;
  };

  const planned = {
    // each pipe's fields as `plan` counts them: its kind as read, else declared or implied
    base: plannedCapacityOver(base.config, from, to, { kindOf: (p) => base.views[p.name]?.kind }),
    head: plannedCapacityOver(head.config, from, to, { kindOf: (p) => head.views[p.name]?.kind }),
  };
  const spentOf = (side: 'base' | 'head', name: string | undefined): BoundaryCapacity =>
    (name === undefined ? undefined : planned[side].get(name)) ?? NONE_SPENT;

  const baseNames = new Set(base.config.pipes.map((p) => p.name));
  const headNames = new Set(head.config.pipes.map((p) => p.name));
  // a base pipe gone by name but present under another name with the same ids: renamed
  const goneByIdentity = new Map(
    base.config.pipes.filter((p) => !headNames.has(p.name)).map((p) => [identity(p), p.name]),
  );
  const renamedFrom = new Map<string, string>();
  for (const p of head.config.pipes) {
    const old = baseNames.has(p.name) ? undefined : goneByIdentity.get(identity(p));
    if (old !== undefined) renamedFrom.set(p.name, old);
  }
  const renamedAway = new Set(renamedFrom.values());

  const pipes: PipeDiff[] = [];
  for (const p of head.config.pipes) {
    const baseName = renamedFrom.get(p.name) ?? (baseNames.has(p.name) ? p.name : undefined);
    const headSim = head.views[p.name] !== undefined;
    const baseSim = baseName !== undefined && base.views[baseName] !== undefined;
    const changes =
      baseName === undefined
        ? (headChanges.get(p.name) ?? []).map((h): ChangeDiff => ({ kind: 'added', head: h }))
        : diffChanges(baseChanges.get(baseName) ?? [], headChanges.get(p.name) ?? []);
    const b = baseName === undefined ? NO_CAPACITY : capacity(base, baseName, baseChanges);
    const h = capacity(head, p.name, headChanges);
    const status: PipeStatus =
      baseName === undefined
        ? 'added'
        : baseName !== p.name
          ? 'renamed'
          : changes.length > 0 || baseSim !== headSim
            ? 'changed'
            : 'same';
    pipes.push({
      pipe: p.name,
      status,
      ...(baseName !== undefined && baseName !== p.name ? { renamedFrom: baseName } : {}),
      simulated: headSim || baseSim,
      changes,
      base: b,
      head: h,
      delta: subtractCapacity(h, b),
      spent: { base: spentOf('base', baseName), head: spentOf('head', p.name) },
    });
  }
  for (const p of base.config.pipes) {
    if (headNames.has(p.name) || renamedAway.has(p.name)) continue;
    const b = capacity(base, p.name, baseChanges);
    pipes.push({
      pipe: p.name,
      status: 'removed',
      simulated: base.views[p.name] !== undefined,
      changes: (baseChanges.get(p.name) ?? []).map((c): ChangeDiff => ({ kind: 'removed', base: c })),
      base: b,
      head: NO_CAPACITY,
      delta: subtractCapacity(NO_CAPACITY, b),
      spent: { base: spentOf('base', p.name), head: NONE_SPENT },
    });
  }
  const sum = (pick: (d: PipeDiff) => Capacity): Capacity => pipes.map(pick).reduce(addCapacity, NO_CAPACITY);
  const spentSum = (side: 'base' | 'head'): BoundaryCapacity =>
    pipes
      .map((d) => d.spent[side])
      .reduce((a, c) => ({ early: addMinutes(a.early, c.early), short: addMinutes(a.short, c.short) }), NONE_SPENT);
  const total = {
    base: sum((d) => d.base),
    head: sum((d) => d.head),
    delta: sum((d) => d.delta),
    spent: { base: spentSum('base'), head: spentSum('head') },
  };
  return { from, to, pipes, total, differs: pipes.some((d) => d.status !== 'same') };
}
