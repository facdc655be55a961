// A service's state as the lifecycle uses it: trusted while it is recent, and whether the platform
// would refuse a change to a service in it. service-lists.ts reads the lists that store it.
import { SERVICE_STATES_REFUSING_CHANGES, type ServiceState } from '../../api/index.js';
import type { StoredService } from '../model/record.js';

/**
 * The stored state of a service if it is recent enough to trust (younger than a reconcile
 * period): undefined means "read the list again before a change"; null, "the platform did not say".
 */
export function trustedState(
  service: StoredService | null,
  at: number,
  reconcileMs: number,
): ServiceState | null | undefined {
  return service && at - service.at < reconcileMs ? service.state : undefined;
}

/** Whether the platform would refuse a change to a service in this state (424). */
export const refuses = (state: ServiceState | null | undefined): boolean =>
  state !== null && state !== undefined && SERVICE_STATES_REFUSING_CHANGES.has(state);
