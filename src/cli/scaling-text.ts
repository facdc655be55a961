// How a scaling reads in the CLI: one name and one unit per field, for every view that shows one.
import { SCALING_FIELDS, type ScalingField, type ScalingValues } from '../api/index.js';

const NAMES: Record<ScalingField, string> = {
  replicas: 'replicas',
  concurrency: 'concurrency',
  replicaCpuMillicores: 'cpu',
  replicaMemoryGb: 'memory',
};

const UNITS: Record<ScalingField, string> = {
  replicas: '',
  concurrency: '',
  replicaCpuMillicores: 'm',
  replicaMemoryGb: 'GB',
};

const withUnit = (f: ScalingField, v: number): string => `${v}${UNITS[f]}`;

/** "replicas 6, cpu 1000m, memory 4GB"; "-" when there is nothing. */
export function formatValues(values: ScalingValues): string {
  const parts = SCALING_FIELDS.flatMap((f) => {
    const v = values[f];
    return v === undefined ? [] : [`${NAMES[f]} ${withUnit(f, v)}`];
  });
  return parts.length > 0 ? parts.join(', ') : '-';
}

/** "replicas 2->4, cpu 500m->1000m": each field of `next` from what it was ("?" when unknown). */
export function formatMoves(previous: ScalingValues, next: ScalingValues): string {
  return SCALING_FIELDS.flatMap((f) => {
    const to = next[f];
    if (to === undefined) return [];
    const was = previous[f];
    return [`${NAMES[f]} ${was === undefined ? '?' : withUnit(f, was)}->${withUnit(f, to)}`];
  }).join(', ');
}

/** "4x1000m/4GB" (replicas x CPU/memory each), "conc 3": a scaling in a few characters. */
export function compactScaling(v: ScalingValues | null | undefined): string {
  if (!v) return '-';
  const each = (['replicaCpuMillicores', 'replicaMemoryGb'] as const)
    .flatMap((f) => {
      const n = v[f];
      return n === undefined ? [] : [withUnit(f, n)];
    })
    .join('/');
  const stream = v.replicas !== undefined ? (each ? `${v.replicas}x${each}` : `${v.replicas} repl`) : each;
  const parts = [stream, v.concurrency !== undefined ? `conc ${v.concurrency}` : ''].filter((s) => s !== '');
  return parts.join(', ') || '-';
}

/** "replicas=6 replicaCpuMillicores=1000": the API's own field names, for `status --wide`. */
export function rawScaling(v: ScalingValues | null | undefined): string {
  if (!v) return '-';
  return (
    SCALING_FIELDS.flatMap((f) => {
      const n = v[f];
      return n === undefined ? [] : [`${f}=${n}`];
    }).join(' ') || '-'
  );
}
