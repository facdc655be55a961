// PATCH .../pipes/{pipeId}/scaling: the one write of the data-pipe part, and (with an empty body)
// the way a client reads a pipe.
import {
  ENDPOINTS,
  KIND_FIELDS,
  pipeKind,
  SCALING_FIELDS,
  SERVICE_STATES_REFUSING_CHANGES,
  type ScalingField,
} from '../../api/index.js';
import type { SentResultOf } from '../../api/internal.js';
import { badRequest, CloudHttpError, parseBody } from '../errors.js';
import { changedFields, delayOf, desiredScaling, propagating, applyDue, takeChange } from '../propagation.js';
import type { StoredPipe } from '../records.js';
import { findIn, findService, isoNow, type RouteContext } from './context.js';

export function scalePipe(ctx: RouteContext<'scalePipe'>): SentResultOf<'scalePipe'> {
  const svc = findService(ctx);
  const pipe = findIn(svc.pipes, ctx.params.pipeId, 'pipe');
  const raw = ctx.body();
  const req = parseBody(ENDPOINTS.scalePipe.body, raw === undefined ? {} : raw);
  const sent = SCALING_FIELDS.flatMap((f) => {
    const v = req[f];
    return v === undefined || v === null ? [] : [{ f, v }];
  });
  const changes = sent.map(({ f }) => f);
  if (changes.length === 0) return served(pipe, ctx);

  const kind = pipeKind(pipe.source);
  if (kind === 'database' || kind === null) {
    throw badRequest('Database pipes are scaled service-wide, not per pipe');
  }
  const misfit = changes.filter((f) => !KIND_FIELDS[kind].includes(f));
  if (misfit.length > 0) {
    const label = kind === 'stream' ? 'a stream' : 'an object-storage';
    throw badRequest(
      `${misfit.join(', ')} ${misfit.length > 1 ? 'do' : 'does'} not apply to ${label} pipe (use ${KIND_FIELDS[kind].join(', ')})`,
    );
  }
  if (SERVICE_STATES_REFUSING_CHANGES.has(svc.service.state)) {
    throw new CloudHttpError(424, `Service is not running. Current state: ${svc.service.state}`);
  }
  if (pipe.state === 'Completed') throw badRequest('Pipe is Completed and cannot be modified');

  // Compared with what the pipe will hold once its pending changes are in: a request that asks
  // for that changes nothing, one that asks for the value still in effect overtakes them.
  const values = changedFields(desiredScaling(ctx.store, pipe), sent);
  if (Object.keys(values).length > 0) {
    const delayMs = ctx.stuck ? Infinity : delayOf(ctx.propagation, pipe);
    takeChange(ctx.store, pipe, values, delayMs, ctx.now());
    pipe.updatedAt = isoNow(ctx);
    ctx.store.scalingChangedAt.set(pipe.id.toLowerCase(), ctx.now());
  }
  return served(pipe, ctx);
}

// The pipe as the live API answers it: what is in effect now (a change still propagating is not
// shown), quirks included when the fixtures ask for them.
function served(pipe: StoredPipe, ctx: RouteContext<'scalePipe'>): SentResultOf<'scalePipe'> {
  applyDue(ctx.store, pipe, ctx.now());
  const { quantityStrings, transientZeroMs } = ctx.quirks;
  const transient = ctx.propagation.reads === 'transient' && propagating(ctx.store, pipe);
  // The published contract types each scaling member as a number: the fields a pipe's kind does
  // not take (concurrency of a stream pipe, replicas of an object-storage one) are left out, not null.
  const scaling: Partial<Record<ScalingField, number | string | null>> = Object.fromEntries(
    Object.entries(pipe.scaling).filter(([, v]) => v !== null),
  );
  if (!quantityStrings && transientZeroMs === 0 && !transient) return { ...pipe, scaling };
  const changedAt = ctx.store.scalingChangedAt.get(pipe.id.toLowerCase());
  if (transient || (transientZeroMs > 0 && changedAt !== undefined && ctx.now() - changedAt < transientZeroMs)) {
    // the live API's transient 0 and null right after a change (a quirk the fixtures turn on)
    if (scaling.replicaCpuMillicores !== undefined) scaling.replicaCpuMillicores = 0;
    if (scaling.replicaMemoryGb !== undefined) scaling.replicaMemoryGb = null;
  } else if (quantityStrings) {
    asQuantities(scaling);
  }
  return { ...pipe, scaling };
}

function asQuantities(s: Partial<Record<ScalingField, number | string | null>>): void {
  if (typeof s.replicaCpuMillicores === 'number') s.replicaCpuMillicores = `${s.replicaCpuMillicores}m`;
  const gb = s.replicaMemoryGb;
  if (typeof gb === 'number') s.replicaMemoryGb = Number.isInteger(gb) ? `${gb}Gi` : `${Math.round(gb * 1024)}Mi`;
}
