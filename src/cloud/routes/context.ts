// What a route handler gets, and the lookups every route shares (404s in the platform's words).
import type { Operation } from '../../api/index.js';
import type { PathParamOf, SentResultOf } from '../../api/internal.js';
import type { Propagation, Quirks } from '../fixtures-schema.js';
import { notFound } from '../errors.js';
import type { CloudStore } from '../store.js';
import type { StoredOrganization, StoredService } from '../records.js';

export interface RouteContext<Op extends Operation> {
  /** The operation's path parameters, by the names of its path template. */
  readonly params: Readonly<Record<PathParamOf<Op>, string>>;
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body; throws the deferred 400/415 of a malformed or non-JSON body. */
  body(): unknown;
  readonly store: CloudStore;
  readonly now: () => number;
  readonly quirks: Quirks;
  /** When a scaling change takes effect (propagation.ts). */
  readonly propagation: Propagation;
  /** An injected `stuck` fault: the change this request makes never takes effect. */
  readonly stuck: boolean;
}

/** An operation's handler: what it returns is the result of the success envelope (undefined for a DELETE). */
export type RouteHandler<Op extends Operation> = (ctx: RouteContext<Op>) => SentResultOf<Op>;

/** One handler per operation, each typed by its own operation. */
export type RouteHandlers = { readonly [Op in Operation]: RouteHandler<Op> };

/** What a lookup needs: the store and the path parameters it reads. */
interface Scope<Param extends string> {
  readonly params: Readonly<Record<Param, string>>;
  readonly store: CloudStore;
}

export const isoNow = (ctx: { readonly now: () => number }): string => new Date(ctx.now()).toISOString();

export function findOrganization(ctx: Scope<'organizationId'>): StoredOrganization {
  const org = ctx.store.organizations.get(ctx.params.organizationId.toLowerCase());
  if (!org) throw notFound('organization');
  return org;
}

export function findService(ctx: Scope<'organizationId' | 'serviceId'>): StoredService {
  const org = findOrganization(ctx);
  const svc = org.services.get(ctx.params.serviceId.toLowerCase());
  if (!svc) throw notFound('service');
  return svc;
}

/** Look an id up in one of the service's maps, or 404 `Unknown <what>`. */
export function findIn<T>(map: ReadonlyMap<string, T>, id: string, what: string): T {
  const v = map.get(id.toLowerCase());
  if (v === undefined) throw notFound(what);
  return v;
}
