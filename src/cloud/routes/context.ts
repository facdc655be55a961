// What a route handler gets, and the lookups every route shares (404s in the platform's words).
import type { Quirks } from '../fixtures-schema.js';
import { notFound } from '../errors.js';
import type { CloudStore, StoredService } from '../store.js';

export interface RouteContext {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body; throws the deferred 400/415 of a malformed or non-JSON body. */
  body(): unknown;
  readonly store: CloudStore;
  readonly now: () => number;
  readonly quirks: Quirks;
}

/** The result of the success envelope; undefined for a DELETE. */
export type RouteHandler = (ctx: RouteContext) => unknown;

export const isoNow = (ctx: RouteContext): string => new Date(ctx.now()).toISOString();

export function findOrganization(ctx: RouteContext) {
  const org = ctx.store.organizations.get(ctx.params.organizationId!.toLowerCase());
  if (!org) throw notFound('organization');
  return org;
}

export function findService(ctx: RouteContext): StoredService {
  const org = findOrganization(ctx);
  const svc = org.services.get(ctx.params.serviceId!.toLowerCase());
  if (!svc) throw notFound('service');
  return svc;
}

/** Look an id up in one of the service's maps, or 404 `Unknown <what>`. */
export function findIn<T>(map: ReadonlyMap<string, T>, id: string, what: string): T {
  const v = map.get(id.toLowerCase());
  if (v === undefined) throw notFound(what);
  return v;
}
