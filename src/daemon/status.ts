// What `pipescaler status` and daemon.status() show per pipe, read from the shared Redis state.
import type { PipeKind, PipeState, ScalingValues } from '../api/index.js';
import type { Config } from '../policy/types.js';
import type { PauseFlag, StateStore, StoredDecision, StoredError } from './state-store.js';

export interface PipeStatus {
  readonly pipe: string;
  readonly policy: string;
  readonly key: string;
  readonly kind: PipeKind | null;
  readonly state: PipeState | null;
  readonly applied: ScalingValues;
  readonly desired: ScalingValues | null;
  readonly windows: readonly string[];
  readonly lastDecision: StoredDecision | null;
  readonly lastError: StoredError | null;
  readonly paused: PauseFlag | null;
  readonly parked: StoredError | null;
  readonly drifts: number;
}

export async function readPipeStatuses(store: StateStore, config: Config): Promise<PipeStatus[]> {
  return Promise.all(config.pipes.map(async (p) => {
    const { rec, pause: paused } = await store.snapshot(p.name, p);
    return {
      pipe: p.name, policy: p.policy, key: p.key, kind: rec.kind, state: rec.state, applied: rec.applied,
      desired: rec.desired, windows: rec.lastDecision?.windows ?? [], lastDecision: rec.lastDecision,
      lastError: rec.lastError, paused, parked: rec.parked, drifts: rec.drifts,
    };
  }));
}
