// `simulate`: the daemon's loop on a fake clock. At every step each pipe gets decide() exactly as
// the daemon would call it; a change is applied at once to the simulated pipe, stamps lastChange
// for each direction it moves in, and every recommendation is kept for scale-down stabilization.
// Pure, so the daemon's tests can hold their timeline against it.
import type { ScalingValues } from '../api/index.js';
import { changeDirections, decide } from './decide.js';
import type { Config, Direction, PipeView, Reason } from './types.js';

export interface SimulatedChange {
  readonly pipe: string;
  /** Epoch ms of the tick that made the change. */
  readonly at: number;
  readonly direction: Direction;
  /** Winning windows at that tick (empty: baseline). */
  readonly windows: readonly string[];
  /** The PATCH body: only the fields that change, with their new values. */
  readonly scaling: ScalingValues;
  /** The values those fields had before. */
  readonly previous: ScalingValues;
  readonly reasons: readonly Reason[];
}

/**
 * Every scaling change in [from, to), ticking every `stepMs` from `from`. Pipes without a view
 * (not read) are left out: the daemon would skip them too. Sorted by time, then config order.
 */
export function simulate(
  config: Config,
  views: Readonly<Record<string, PipeView | undefined>>,
  from: number,
  to: number,
  stepMs: number,
): SimulatedChange[] {
  if (!(stepMs > 0)) throw new RangeError('stepMs must be above 0');
  const changes: SimulatedChange[] = [];
  const state = new Map<string, PipeView>();
  for (const pipe of config.pipes) {
    const view = views[pipe.name];
    if (view !== undefined) state.set(pipe.name, { ...view, bounds: pipe.bounds });
  }
  for (let now = from; now < to; now += stepMs) {
    for (const pipe of config.pipes) {
      const view = state.get(pipe.name);
      if (view === undefined) continue;
      const policy = config.policies[pipe.policy]!;
      const decision = decide(policy, now, view);
      if (decision.action === 'skip') continue;

      const keepFrom = now - policy.behavior.scaleDown.stabilizationMs;
      const recommendations = Object.keys(decision.recommendation).length > 0
        ? [...view.recommendations.filter((r) => r.at >= keepFrom), { at: now, values: decision.recommendation }]
        : view.recommendations.filter((r) => r.at >= keepFrom);
      let next: PipeView = { ...view, recommendations };

      if (decision.action === 'change') {
        const previous: ScalingValues = {};
        for (const f of Object.keys(decision.changes) as (keyof ScalingValues)[]) {
          if (view.applied[f] !== undefined) previous[f] = view.applied[f];
        }
        const moves = changeDirections(view.applied, decision.changes);
        next = {
          ...next,
          applied: { ...view.applied, ...decision.changes },
          lastChange: {
            ...view.lastChange,
            ...(moves.up ? { up: now } : {}),
            ...(moves.down ? { down: now } : {}),
          },
        };
        changes.push({
          pipe: pipe.name, at: now, direction: decision.direction, windows: decision.windows,
          scaling: decision.changes, previous, reasons: decision.reasons,
        });
      }
      state.set(pipe.name, next);
    }
  }
  return changes;
}
