// How `plan`, `simulate` and `status` say which actuation a scale-up's lead counted on: the pipe's
// measured p95, its kind's, or the configured expectation (evaluate.actuation.expected), and when
// the cap (evaluate.actuation.max) cut a measured one.
import { refOf, type ActuationEstimate } from '../daemon/index.js';
import { formatDuration, type PipeConfig } from '../policy/index.js';

/** Where each pipe's expected actuation comes from (the samples in Redis; null: not read). */
export type ActuationOf = (pipe: PipeConfig) => ActuationEstimate | null;

/** Each pipe's estimate from the daemon's samples (readEstimates): its own p95, its kind's, or the
 *  configured expectation when neither has enough; `estimates` null (Redis not read): null. */
export function actuationFrom(estimates: ReadonlyMap<string, ActuationEstimate> | null): ActuationOf {
  return (p) => (estimates ? (estimates.get(refOf(p)) ?? { ms: undefined, source: 'configured', samples: 0 }) : null);
}

/** "1m30s actuation: the pipe's p95 over its last 34 changes"; `estimate` null: the samples were not read. */
export function describeActuation(
  actuationMs: number,
  estimate: ActuationEstimate | null,
  kind?: string | null,
): string {
  const ms = `${formatDuration(actuationMs)} actuation`;
  if (estimate === null) return `${ms}: evaluate.actuation.expected, the measured ones not read`;
  const capped =
    estimate.ms !== undefined && estimate.ms > actuationMs
      ? `, capped at evaluate.actuation.max: ${formatDuration(estimate.ms)} measured`
      : '';
  switch (estimate.source) {
    case 'pipe':
      return `${ms}: the pipe's p95 over its last ${estimate.samples} changes${capped}`;
    case 'kind':
      return `${ms}: the p95 of ${kind ? `${kind} pipes` : 'its kind'} over their last ${estimate.samples} changes${capped}`;
    case 'configured':
      return `${ms}: evaluate.actuation.expected, ${estimate.samples === 0 ? 'none' : `only ${estimate.samples}`} measured yet`;
  }
}
