// `plan`: what decide() says for every configured pipe at one instant. Pure; the CLI reads the
// pipe views and prints.
import { policyOf } from './config-lookup.js';
import { decide } from './decide.js';
import { slotCapacity, type BoundaryCapacity, type PlannedSlot } from './early-capacity.js';
import { leadPlanAt, leadUntil, type LeadPlanOptions, type LeadSlot } from './lead-plan.js';
import { activeWindows } from './windows.js';
import type { ScalingConfig, Decision, PipeConfig, PipeView, Policy, Window } from './types.js';

export interface PlanEntry {
  readonly pipe: PipeConfig;
  readonly policy: Policy;
  /** null: the pipe could not be read (the decision then says unknown_pipe). */
  readonly view: PipeView | null;
  /** Every window containing the instant, winners or not. */
  readonly active: readonly Window[];
  readonly decision: Decision;
  /** leadTime auto: the pipe's next slot in its key's lead plan (its next early start, and when it
   *  is expected at target), or null. */
  readonly leadSlot: LeadSlot | null;
  /** The capacity that slot is expected to spend early (in force at its send plus the actuation
   *  it counts on, before its boundary) and short (after it): early-capacity.ts. */
  readonly leadCapacity: BoundaryCapacity | null;
  /** Every slot of the pipe in the lead plan in force at the instant whose boundary is after it
   *  (the first is `leadSlot`), each with the capacity it is expected to spend. */
  readonly leadSlots: readonly PlannedSlot[];
}

/** A view for a pipe nothing is known of: decide() skips it as not read yet. */
export function unknownView(pipe: PipeConfig): PipeView {
  return {
    kind: null,
    state: null,
    applied: {},
    bounds: pipe.bounds,
    lastChange: {},
    recommendations: [],
    endpoints: {},
  };
}

/** `fleet`: the whole config the keys' lead plans are made of, when `config` holds only some of its
 *  pipes; `lead.actuationMs`: the pipes' measured actuation, when the caller has it (lead-plan.ts). */
export function plan(
  config: ScalingConfig,
  views: Readonly<Record<string, PipeView | undefined>>,
  at: number,
  fleet: ScalingConfig = config,
  lead: Pick<LeadPlanOptions, 'actuationMs'> = {},
): PlanEntry[] {
  // The keys' lead plans the daemon follows at this instant (leadTime auto).
  const plans = leadPlanAt(fleet, at, lead);
  return config.pipes.map((pipe) => {
    const policy = policyOf(config, pipe);
    const view = views[pipe.name] ?? null;
    const until = leadUntil(plans, pipe.name, at);
    const decision = decide(policy, at, {
      ...(view ?? unknownView(pipe)),
      bounds: pipe.bounds,
      ...(until !== undefined ? { leadUntil: until } : {}),
    });
    // nextSlot() and the slots after it, each counted by the one computation of early-capacity.ts
    const leadSlots = (plans.slots.get(pipe.name) ?? [])
      .filter((slot) => slot.boundary > at)
      .map((slot) => ({ slot, capacity: slotCapacity(pipe, policy, slot, view?.kind) }));
    return {
      pipe,
      policy,
      view,
      active: activeWindows(policy.windows, at).active,
      decision,
      leadSlot: leadSlots[0]?.slot ?? null,
      leadCapacity: leadSlots[0]?.capacity ?? null,
      leadSlots,
    };
  });
}
