// One handler per operation of the endpoint table: the compiler checks none is missing and that
// each returns its operation's result.
import type { RouteHandlers } from './context.js';
import { scalePipe } from './pipes.js';
import { getReversePrivateEndpoint, listServices } from './services.js';
import * as stack from './stack.js';

export const HANDLERS: RouteHandlers = {
  scalePipe,
  listServices,
  getReversePrivateEndpoint,
  listDashboards: stack.listDashboards,
  createDashboard: stack.createDashboard,
  getDashboard: stack.getDashboard,
  updateDashboard: stack.updateDashboard,
  deleteDashboard: stack.deleteDashboard,
  listAlerts: stack.listAlerts,
  createAlert: stack.createAlert,
  getAlert: stack.getAlert,
  updateAlert: stack.updateAlert,
  deleteAlert: stack.deleteAlert,
  listSources: stack.listSources,
};
