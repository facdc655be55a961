// Which series a pipe gets. At 10,000 pipes every series per pipe is 10,000 series per replica, so
// by default a pipe keeps only what an operator reads per pipe (desired and applied per field,
// failing, unconfirmed, paused: at most 9) and every other family is kept per policy (per API key
// for a parked pipe, a key's trouble). `telemetry.perPipeDetail: true` adds the `pipe` label back
// to those families (beside their policy or key, so a `sum by (policy)` reads the same either way).
import { OTHER, configName } from './labels.js';

/** A pipe of the config in force, as telemetry groups it. */
export interface PipeView {
  readonly name: string;
  readonly policy?: string;
  readonly key?: string;
}

export interface PipeLabels {
  /** Whether the pipe-level families carry the `pipe` label (telemetry.perPipeDetail). */
  readonly detail: () => boolean;
  /** `{ policy }`, with `pipe` under per-pipe detail: the labels of a family kept per policy. */
  readonly byPolicy: (pipe: string) => { policy: string; pipe?: string };
  /** `{ key }`, with `pipe` under per-pipe detail. */
  readonly byKey: (pipe: string) => { key: string; pipe?: string };
  policyOf(pipe: string): string;
  keyOf(pipe: string): string;
}

/**
 * @param pipes the pipes in force, asked again at each use (a reload may add some); the lookup is
 *   rebuilt only when the array returned changes.
 * @param detail telemetry.perPipeDetail in force.
 */
export function createPipeLabels(pipes: () => readonly PipeView[], detail: () => boolean = () => false): PipeLabels {
  let seen: readonly PipeView[] | undefined;
  let byName = new Map<string, PipeView>();
  const lookup = (pipe: string): PipeView | undefined => {
    const current = pipes();
    if (current !== seen) {
      seen = current;
      byName = new Map(current.map((p) => [configName(p.name), p]));
    }
    return byName.get(pipe);
  };
  const policyOf = (pipe: string): string => {
    const p = lookup(pipe)?.policy;
    return p === undefined ? OTHER : configName(p);
  };
  const keyOf = (pipe: string): string => {
    const k = lookup(pipe)?.key;
    return k === undefined ? 'default' : configName(k);
  };
  return {
    detail,
    policyOf,
    keyOf,
    byPolicy: (pipe) => (detail() ? { policy: policyOf(pipe), pipe } : { policy: policyOf(pipe) }),
    byKey: (pipe) => (detail() ? { key: keyOf(pipe), pipe } : { key: keyOf(pipe) }),
  };
}

/** Every pipe in detail, policy `other` unless named (tests and callers that bind no config). */
export const DETAILED: PipeLabels = createPipeLabels(
  () => [],
  () => true,
);
