// What the embedded cloud holds now, in the shape of its fixtures' organizations (ids, states,
// scaling in effect, sources, endpoint statuses): `GET /admin/state` answers it, so `plan` and
// `simulate` read the cloud a running demo daemon scales without spending the demo key's rate
// limit (a read of the public API is an empty scaling PATCH that counts against it).
import { z } from 'zod';
import { PipeSource, PipeState, ReversePrivateEndpointStatus, ServiceState } from '../api/index.js';
import type { CloudStore } from './store.js';

export const CloudStateSchema = z.object({
  organizations: z.array(
    z.object({
      id: z.string(),
      services: z.array(
        z.object({
          id: z.string(),
          name: z.string(),
          state: ServiceState,
          pipes: z.array(
            z.object({
              id: z.string(),
              state: PipeState,
              scaling: z.record(z.string(), z.number().nullable()),
              source: PipeSource,
            }),
          ),
          reversePrivateEndpoints: z.array(z.object({ id: z.string(), status: ReversePrivateEndpointStatus })),
        }),
      ),
    }),
  ),
});
export type CloudState = z.infer<typeof CloudStateSchema>;

/** The store's organizations now: each pipe with the changes whose delay has passed applied. */
export function cloudState(store: CloudStore): CloudState {
  return {
    organizations: [...store.organizations.values()].map((org) => ({
      id: org.id,
      services: [...org.services.values()].map((svc) => ({
        id: svc.service.id,
        name: svc.service.name,
        state: svc.service.state,
        pipes: [...svc.pipes.keys()].flatMap((id) => {
          const pipe = store.pipe(id); // settled: the changes whose delay has passed are in effect
          return pipe ? [{ id: pipe.id, state: pipe.state, scaling: { ...pipe.scaling }, source: pipe.source }] : [];
        }),
        reversePrivateEndpoints: [...svc.reversePrivateEndpoints.values()].map((e) => ({ id: e.id, status: e.status })),
      })),
    })),
  };
}
