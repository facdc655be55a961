// The organization part (services list with tag filters) and the networking part.
import { matchesTagFilters, parseTagFilter, type TagFilter } from '../../api/index.js';
import type { SentResultOf } from '../../api/internal.js';
import { badRequest } from '../errors.js';
import { findIn, findOrganization, findService, type RouteContext } from './context.js';

export function listServices(ctx: RouteContext<'listServices'>): SentResultOf<'listServices'> {
  const org = findOrganization(ctx);
  const raw = ctx.query.filter;
  const entries = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const filters: TagFilter[] = [];
  for (const entry of entries) {
    const f = parseTagFilter(entry);
    if (typeof f === 'string') throw badRequest(f);
    filters.push(f);
  }
  const out = [];
  for (const svc of org.services.values()) {
    if (filters.length === 0 || matchesTagFilters(svc.service.tags, filters)) out.push(published(svc.service));
  }
  return out;
}

type ServiceAnswer = SentResultOf<'listServices'>[number];

/** A service with the members the published contract requires of one: its autoscaling mode
 *  (fixtures may set it; horizontal otherwise) and the scaling in effect, from its settings. */
function published(s: ServiceAnswer): ServiceAnswer {
  const given: ServiceAnswer & { autoscalingMode?: string; currentScaling?: unknown } = s;
  const mode = given.autoscalingMode ?? 'horizontal';
  return {
    ...s,
    autoscalingMode: mode,
    currentScaling: given.currentScaling ?? {
      effectiveAutoscalingMode: mode,
      ...(s.minReplicaMemoryGb !== undefined ? { effectiveMinReplicaMemoryGb: s.minReplicaMemoryGb } : {}),
      ...(s.maxReplicaMemoryGb !== undefined ? { effectiveMaxReplicaMemoryGb: s.maxReplicaMemoryGb } : {}),
      ...(s.numReplicas !== undefined
        ? { effectiveMinReplicas: s.numReplicas, effectiveMaxReplicas: s.numReplicas }
        : {}),
      ...(s.idleScaling !== undefined ? { effectiveIdleScaling: s.idleScaling } : {}),
    },
  };
}

export function getReversePrivateEndpoint(
  ctx: RouteContext<'getReversePrivateEndpoint'>,
): SentResultOf<'getReversePrivateEndpoint'> {
  const svc = findService(ctx);
  return findIn(svc.reversePrivateEndpoints, ctx.params.reversePrivateEndpointId, 'reverse private endpoint');
}
