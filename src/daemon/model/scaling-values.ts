// Small pure helpers over ScalingValues: what to send, what the platform now has, what drifted.
import { KIND_FIELDS, SCALING_FIELDS, type PipeKind, type PipeScaling, type ScalingValues } from '../../api/index.js';

/** The fields of `desired` that fit the pipe's kind and differ from `applied`: the PATCH body. */
export function changesFor(kind: PipeKind, desired: ScalingValues, applied: ScalingValues): ScalingValues {
  const out: ScalingValues = {};
  for (const f of KIND_FIELDS[kind]) {
    const want = desired[f];
    if (want !== undefined && want !== applied[f]) out[f] = want;
  }
  return out;
}

/**
 * What the pipe has after the platform answered. A field the platform reports as null (unknown, or
 * the transient null/0 right after a change) keeps what we knew: never what we sent, which is in
 * effect only once an answer shows it (confirmation.ts).
 */
export function mergeReported(previous: ScalingValues, reported: PipeScaling): ScalingValues {
  const out: ScalingValues = { ...previous };
  for (const f of SCALING_FIELDS) {
    const v = reported[f];
    if (typeof v === 'number') out[f] = v;
  }
  return out;
}

/** Fields of the kind where the platform's value differs from what pipescaler last applied. */
export function driftOf(kind: PipeKind, expected: ScalingValues, actual: ScalingValues): ScalingValues | null {
  const out: ScalingValues = {};
  for (const f of KIND_FIELDS[kind]) {
    const e = expected[f];
    const a = actual[f];
    if (e !== undefined && a !== undefined && e !== a) out[f] = a;
  }
  return Object.keys(out).length > 0 ? out : null;
}

export function isEmpty(v: ScalingValues): boolean {
  return Object.keys(v).length === 0;
}

export function sameValues(a: ScalingValues, b: ScalingValues): boolean {
  const ka = Object.keys(a);
  return (
    ka.length === Object.keys(b).length && ka.every((k) => a[k as keyof ScalingValues] === b[k as keyof ScalingValues])
  );
}
