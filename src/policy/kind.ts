// What a pipe is when nobody has read it: its declared kind (`pipes[].kind`) or the kind its
// policy's fields imply (replicas, CPU and memory: a stream pipe; concurrency: object storage), and
// the view plan and simulate start from then: the policy's baseline. Pure.
import {
  KIND_FIELDS,
  SCALABLE_KINDS,
  SCALING_LIMITS,
  type ScalableKind,
  type ScalingField,
  type ScalingValues,
} from '../api/index.js';
import type { PipeConfig, PipeView, Policy, Target } from './types.js';

export interface AssumedKind {
  readonly kind: ScalableKind;
  readonly from: 'declared' | 'policy';
}

/** The one scalable kind whose fields hold every field the policy sets, or null (none, or mixed). */
export function impliedKind(policy: Policy): ScalableKind | null {
  const fields = new Set<ScalingField>();
  const add = (t: Target): void => {
    for (const f of Object.keys(t) as ScalingField[]) fields.add(f);
  };
  add(policy.baseline);
  for (const w of policy.windows) add(w.target);
  if (fields.size === 0) return null;
  const fits = SCALABLE_KINDS.filter((k) => [...fields].every((f) => KIND_FIELDS[k].includes(f)));
  return fits.length === 1 ? (fits[0] ?? null) : null;
}

export function assumedKind(pipe: PipeConfig, policy: Policy): AssumedKind | null {
  if (pipe.kind) return { kind: pipe.kind, from: 'declared' };
  const implied = impliedKind(policy);
  return implied ? { kind: implied, from: 'policy' } : null;
}

/**
 * A running pipe of the assumed kind at the policy's baseline (a range at its lower end, clamped to
 * the pipe's bounds and the platform's range); a field the baseline leaves out is left unknown.
 */
export function assumedView(pipe: PipeConfig, policy: Policy, kind: ScalableKind): PipeView {
  const applied: ScalingValues = {};
  for (const f of KIND_FIELDS[kind]) {
    const t = policy.baseline[f];
    if (t === undefined) continue;
    const limits = SCALING_LIMITS[f];
    const bound = pipe.bounds[f];
    const wanted = 'value' in t ? t.value : t.min;
    applied[f] = Math.min(bound?.max ?? limits.max, limits.max, Math.max(bound?.min ?? limits.min, limits.min, wanted));
  }
  return { kind, state: 'Running', applied, bounds: pipe.bounds, lastChange: {}, recommendations: [], endpoints: {} };
}

export function describeAssumed(a: AssumedKind): string {
  const what = a.kind === 'stream' ? 'a stream pipe' : 'an object-storage pipe';
  return `not read: assumed ${what} (${a.from === 'declared' ? 'pipes[].kind' : "from its policy's fields"}) running at the baseline`;
}
