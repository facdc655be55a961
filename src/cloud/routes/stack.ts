// Observability stack: dashboards and alerts (list, create, get, full-replace update, delete) and
// sources (list), validated with the schemas of src/api (docs/platform-api.md#observability-stack).
import { ENDPOINTS } from '../../api/index.js';
import type { SentResultOf } from '../../api/internal.js';
import { badRequest, parseBody } from '../errors.js';
import { newObjectId, withTileIds } from '../store.js';
import { findIn, findService, isoNow, type RouteContext } from './context.js';
import { type StoredAlert, type StoredDashboard, type StoredService } from '../records.js';

function requireBody(ctx: { body(): unknown }): unknown {
  const body = ctx.body();
  if (body === undefined) throw badRequest('a JSON body is required');
  return body;
}

export function listDashboards(ctx: RouteContext<'listDashboards'>): SentResultOf<'listDashboards'> {
  return [...findService(ctx).dashboards.values()];
}

export function getDashboard(ctx: RouteContext<'getDashboard'>): SentResultOf<'getDashboard'> {
  return findIn(findService(ctx).dashboards, ctx.params.dashboardId, 'dashboard');
}

export function createDashboard(ctx: RouteContext<'createDashboard'>): SentResultOf<'createDashboard'> {
  const svc = findService(ctx);
  const input = parseBody(ENDPOINTS.createDashboard.body, requireBody(ctx));
  const now = isoNow(ctx);
  const d: StoredDashboard = withTileIds({
    ...input,
    tags: input.tags ?? [],
    id: newObjectId(ctx.now()),
    createdAt: now,
    updatedAt: now,
  });
  svc.dashboards.set(d.id, d);
  return d;
}

export function updateDashboard(ctx: RouteContext<'updateDashboard'>): SentResultOf<'updateDashboard'> {
  const svc = findService(ctx);
  const old = findIn(svc.dashboards, ctx.params.dashboardId, 'dashboard');
  const input = parseBody(ENDPOINTS.updateDashboard.body, requireBody(ctx));
  const d: StoredDashboard = withTileIds({
    ...input,
    tags: input.tags ?? [],
    id: old.id,
    createdAt: old.createdAt,
    updatedAt: isoNow(ctx),
  });
  svc.dashboards.set(d.id.toLowerCase(), d);
  return d;
}

export function deleteDashboard(ctx: RouteContext<'deleteDashboard'>): SentResultOf<'deleteDashboard'> {
  const svc = findService(ctx);
  const d = findIn(svc.dashboards, ctx.params.dashboardId, 'dashboard');
  svc.dashboards.delete(d.id.toLowerCase());
  // The platform deletes the alerts attached to the dashboard's tiles with it.
  for (const [id, a] of svc.alerts) {
    if (a.dashboardId?.toLowerCase() === d.id.toLowerCase()) svc.alerts.delete(id);
  }
  return undefined;
}

export function listAlerts(ctx: RouteContext<'listAlerts'>): SentResultOf<'listAlerts'> {
  return [...findService(ctx).alerts.values()];
}

export function getAlert(ctx: RouteContext<'getAlert'>): SentResultOf<'getAlert'> {
  return findIn(findService(ctx).alerts, ctx.params.alertId, 'alert');
}

// A tile alert must name a dashboard of this service and a tile of that dashboard.
function checkTile(
  svc: StoredService,
  a: { source: string; dashboardId?: string | null | undefined; tileId?: string | null | undefined },
): void {
  if (a.source !== 'tile' || !a.dashboardId) return;
  const d = svc.dashboards.get(a.dashboardId.toLowerCase());
  if (!d) throw badRequest(`dashboardId: unknown dashboard ${a.dashboardId}`);
  if (a.tileId && !d.tiles.some((t) => t.id === a.tileId)) {
    throw badRequest(`tileId: unknown tile ${a.tileId} on dashboard ${a.dashboardId}`);
  }
}

export function createAlert(ctx: RouteContext<'createAlert'>): SentResultOf<'createAlert'> {
  const svc = findService(ctx);
  const input = parseBody(ENDPOINTS.createAlert.body, requireBody(ctx));
  checkTile(svc, input);
  const now = isoNow(ctx);
  const a: StoredAlert = { ...input, id: newObjectId(ctx.now()), state: 'OK', createdAt: now, updatedAt: now };
  svc.alerts.set(a.id, a);
  return a;
}

export function updateAlert(ctx: RouteContext<'updateAlert'>): SentResultOf<'updateAlert'> {
  const svc = findService(ctx);
  const old = findIn(svc.alerts, ctx.params.alertId, 'alert');
  const input = parseBody(ENDPOINTS.updateAlert.body, requireBody(ctx));
  checkTile(svc, input);
  const a: StoredAlert = { ...input, id: old.id, state: old.state, createdAt: old.createdAt, updatedAt: isoNow(ctx) };
  svc.alerts.set(a.id.toLowerCase(), a);
  return a;
}

export function deleteAlert(ctx: RouteContext<'deleteAlert'>): SentResultOf<'deleteAlert'> {
  const svc = findService(ctx);
  const a = findIn(svc.alerts, ctx.params.alertId, 'alert');
  svc.alerts.delete(a.id.toLowerCase());
  return undefined;
}

export function listSources(ctx: RouteContext<'listSources'>): SentResultOf<'listSources'> {
  return [...findService(ctx).sources.values()];
}
