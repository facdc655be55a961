// `plan`: what decide() says for every configured pipe at one instant. Pure; the CLI reads the
// pipe views and prints.
import { decide } from './decide.js';
import { activeWindows } from './windows.js';
import type { Config, Decision, PipeConfig, PipeView, Policy, Window } from './types.js';

export interface PlanEntry {
  readonly pipe: PipeConfig;
  readonly policy: Policy;
  /** null: the pipe could not be read (the decision then says unknown_pipe). */
  readonly view: PipeView | null;
  /** Every window containing the instant, winners or not. */
  readonly active: readonly Window[];
  readonly decision: Decision;
}

/** A view for a pipe nothing is known of: decide() skips it as not read yet. */
export function unknownView(pipe: PipeConfig): PipeView {
  return { kind: null, state: null, applied: {}, bounds: pipe.bounds, lastChange: {}, recommendations: [], endpoints: {} };
}

export function plan(config: Config, views: Readonly<Record<string, PipeView | undefined>>, at: number): PlanEntry[] {
  return config.pipes.map((pipe) => {
    const policy = config.policies[pipe.policy]!;
    const view = views[pipe.name] ?? null;
    const decision = decide(policy, at, { ...(view ?? unknownView(pipe)), bounds: pipe.bounds });
    return { pipe, policy, view, active: activeWindows(policy.windows, at).active, decision };
  });
}
