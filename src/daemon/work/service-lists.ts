// The state of a pipe's service, read before a change: the platform refuses a change to an idle
// or stopped service (424), and a services list tells that for a whole organization in one GET.
import { RateLimitError } from 'bullmq';
import { isApiError, type ServiceState } from '../../api/index.js';
import type { PipeConfig } from '../../policy/index.js';
import { pauseLane } from './turn-failure.js';
import type { DaemonContext } from './context.js';
import { spend, UnitExpired } from '../lanes/spend.js';
import { trustedState } from '../lifecycle/service-state.js';
import type { KeyLane } from '../lanes/lane.js';

/**
 * Reads an organization's services list, one request at a time per organization in this replica:
 * the turns that arrive while it is in flight wait for it and spend no request of their own. A
 * list that fails (a key without the right to list services, a 5xx) leaves the state unknown for
 * a reconcile period, and the change goes ahead for the platform to judge; a 429 pauses the lane.
 */
export class ServiceLists {
  readonly #inflight = new Map<string, Promise<ReadonlyMap<string, ServiceState | null>>>();

  constructor(private readonly ctx: DaemonContext) {}

  /** `state`: the state the turn's snapshot read (redis-guard.ts stateOfMarker); the list it
   *  requests is stored only while the marker still names it, as the turn's other writes. */
  async read(
    pipe: PipeConfig,
    lane: KeyLane,
    state: string,
  ): Promise<{ requested: boolean; state: ServiceState | null }> {
    const org = pipe.organizationId.toLowerCase();
    const pending = this.#inflight.get(org);
    if (pending) {
      const states = await pending.catch((err: unknown) => {
        // The lane is paused for the platform's window: this turn waits too rather than PATCH into a 429.
        if (err instanceof RateLimitError) throw new RateLimitError();
        return new Map<string, ServiceState | null>();
      });
      return { requested: false, state: states.get(pipe.serviceId.toLowerCase()) ?? null };
    }
    // Another turn may have stored the list since this one took its snapshot.
    const stored = trustedState(
      await this.ctx.store.service(pipe),
      this.ctx.now(),
      this.ctx.config().evaluate.reconcileMs,
    );
    if (stored !== undefined) return { requested: false, state: stored };
    if (this.#inflight.has(org)) return this.read(pipe, lane, state);
    const list = this.#list(pipe, lane, state).finally(() => this.#inflight.delete(org));
    this.#inflight.set(org, list);
    const states = await list;
    return { requested: true, state: states.get(pipe.serviceId.toLowerCase()) ?? null };
  }

  async #list(pipe: PipeConfig, lane: KeyLane, state: string): Promise<ReadonlyMap<string, ServiceState | null>> {
    const { ctx } = this;
    const states = new Map<string, ServiceState | null>();
    try {
      const res = await spend(lane, (beforeSend) =>
        lane.client.listServices(pipe.organizationId, undefined, { retry: false, beforeSend }),
      );
      ctx.emitter.emit('api:contact', { at: ctx.now() });
      for (const s of res.result) states.set(s.id.toLowerCase(), s.state ?? null);
    } catch (err) {
      if (err instanceof UnitExpired) ctx.emitter.emit('budget:unit-expired', { key: lane.keyName });
      if (err instanceof RateLimitError) throw err; // no unit of the key's budget: wait for its window
      if (isApiError(err) && err.code === 'API_RATE_LIMITED') return pauseLane(ctx, lane, err);
      ctx.logger.debug(
        { pipe: pipe.name, err: (err as Error).message },
        'services list failed: the change goes ahead without the service state',
      );
      // Unknown for every configured service of the organization, so none asks again this period.
      const org = pipe.organizationId.toLowerCase();
      for (const p of ctx.config().pipes)
        if (p.organizationId.toLowerCase() === org) states.set(p.serviceId.toLowerCase(), null);
    }
    if (!states.has(pipe.serviceId.toLowerCase())) states.set(pipe.serviceId.toLowerCase(), null);
    // Stored only while Redis still holds the state the turn read: a list answered after Redis
    // lost it (emptied, or restored from an older snapshot) goes to this turn alone, whose own
    // writes are refused the same way; the turns after the loss read the list again.
    await ctx.store.writeServices(
      pipe.organizationId,
      [...states].map(([id, s]) => ({ id, state: s })),
      ctx.now(),
      state,
    );
    return states;
  }
}
