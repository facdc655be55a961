// What a pipe runs over a period, in units that need no price list: replica-core-hours
// (replicas x cores per replica), replica-GB-hours (replicas x GB per replica) and
// concurrency-slot-hours. Pure: a starting scaling and the changes a simulation made.
import type { ScalingValues } from '../api/index.js';

export interface Capacity {
  readonly replicaCoreHours: number;
  readonly replicaGbHours: number;
  readonly concurrencySlotHours: number;
}

export const NO_CAPACITY: Capacity = { replicaCoreHours: 0, replicaGbHours: 0, concurrencySlotHours: 0 };

const HOUR_MS = 3_600_000;

/** The capacity one scaling holds for `ms` milliseconds. Fields the pipe does not report count 0. */
function held(values: ScalingValues, ms: number): Capacity {
  const hours = ms / HOUR_MS;
  const replicas = values.replicas ?? 0;
  return {
    replicaCoreHours: ((replicas * (values.replicaCpuMillicores ?? 0)) / 1000) * hours,
    replicaGbHours: replicas * (values.replicaMemoryGb ?? 0) * hours,
    concurrencySlotHours: (values.concurrency ?? 0) * hours,
  };
}

export function addCapacity(a: Capacity, b: Capacity): Capacity {
  return {
    replicaCoreHours: a.replicaCoreHours + b.replicaCoreHours,
    replicaGbHours: a.replicaGbHours + b.replicaGbHours,
    concurrencySlotHours: a.concurrencySlotHours + b.concurrencySlotHours,
  };
}

export function subtractCapacity(a: Capacity, b: Capacity): Capacity {
  return {
    replicaCoreHours: a.replicaCoreHours - b.replicaCoreHours,
    replicaGbHours: a.replicaGbHours - b.replicaGbHours,
    concurrencySlotHours: a.concurrencySlotHours - b.concurrencySlotHours,
  };
}

/**
 * The capacity a pipe runs in [from, to): `start` until the first change, then each change's
 * fields over what ran before. `changes` are in time order; those outside the period are ignored.
 */
export function capacityOver(
  start: ScalingValues,
  changes: readonly { readonly at: number; readonly scaling: ScalingValues }[],
  from: number,
  to: number,
): Capacity {
  let total = NO_CAPACITY;
  let current = start;
  let since = from;
  for (const change of changes) {
    if (change.at < from || change.at >= to) continue;
    total = addCapacity(total, held(current, change.at - since));
    current = { ...current, ...change.scaling };
    since = change.at;
  }
  return addCapacity(total, held(current, Math.max(0, to - since)));
}
