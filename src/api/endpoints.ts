// The endpoint table: every operation of the platform's API that pipescaler knows
// (docs/platform-api.md#endpoints), shared by the client, the embedded cloud, the CLI and the
// metrics labels.
import { z } from 'zod';
import { ReversePrivateEndpoint } from './schemas/endpoint.js';
import { EmptyEnvelope, envelope } from './schemas/envelope.js';
import { Pipe, ScalingRequest } from './schemas/pipe.js';
import { Service } from './schemas/service.js';
import { Alert, AlertInput, Dashboard, DashboardInput, Source } from './schemas/stack.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface EndpointDef {
  readonly method: HttpMethod;
  /** Path template; `{name}` segments are path parameters. */
  readonly path: string;
  /** Schema of the JSON body, for the methods that take one. */
  readonly body?: z.ZodType;
  /** Schema of the whole success response (the envelope). */
  readonly response: z.ZodType;
}

const SERVICE = '/v1/organizations/{organizationId}/services/{serviceId}';
const STACK = `${SERVICE}/stack`;

export const ENDPOINTS = {
  scalePipe: {
    method: 'PATCH',
    path: `${SERVICE}/pipes/{pipeId}/scaling`,
    body: ScalingRequest,
    response: envelope(Pipe),
  },
  listServices: {
    method: 'GET',
    path: '/v1/organizations/{organizationId}/services',
    response: envelope(z.array(Service)),
  },
  getReversePrivateEndpoint: {
    method: 'GET',
    path: `${SERVICE}/pipesReversePrivateEndpoints/{reversePrivateEndpointId}`,
    response: envelope(ReversePrivateEndpoint),
  },
  listDashboards: { method: 'GET', path: `${STACK}/dashboards`, response: envelope(z.array(Dashboard)) },
  createDashboard: { method: 'POST', path: `${STACK}/dashboards`, body: DashboardInput, response: envelope(Dashboard) },
  getDashboard: { method: 'GET', path: `${STACK}/dashboards/{dashboardId}`, response: envelope(Dashboard) },
  updateDashboard: {
    method: 'PUT',
    path: `${STACK}/dashboards/{dashboardId}`,
    body: DashboardInput,
    response: envelope(Dashboard),
  },
  deleteDashboard: { method: 'DELETE', path: `${STACK}/dashboards/{dashboardId}`, response: EmptyEnvelope },
  listAlerts: { method: 'GET', path: `${STACK}/alerts`, response: envelope(z.array(Alert)) },
  createAlert: { method: 'POST', path: `${STACK}/alerts`, body: AlertInput, response: envelope(Alert) },
  getAlert: { method: 'GET', path: `${STACK}/alerts/{alertId}`, response: envelope(Alert) },
  updateAlert: { method: 'PUT', path: `${STACK}/alerts/{alertId}`, body: AlertInput, response: envelope(Alert) },
  deleteAlert: { method: 'DELETE', path: `${STACK}/alerts/{alertId}`, response: EmptyEnvelope },
  listSources: { method: 'GET', path: `${STACK}/sources`, response: envelope(z.array(Source)) },
} as const satisfies Record<string, EndpointDef>;

export type Operation = keyof typeof ENDPOINTS;
export const OPERATIONS = Object.keys(ENDPOINTS) as readonly Operation[];

/**
 * The `result` of an operation's success as a server sends it: the response schema's input (a
 * quantity string where the client reads a number, unknown fields passed through); undefined for
 * a DELETE, whose envelope has none.
 */
export type SentResultOf<Op extends Operation> = Op extends Operation
  ? z.input<(typeof ENDPOINTS)[Op]['response']> extends { result: infer R }
    ? R
    : undefined
  : never;

type ParamsIn<Path extends string> = Path extends `${string}{${infer Name}}${infer Rest}`
  ? Name | ParamsIn<Rest>
  : never;

/** The names of an operation's path parameters, read from its path template. */
export type PathParamOf<Op extends Operation> = ParamsIn<(typeof ENDPOINTS)[Op]['path']>;

/** A path template cut at its parameters: literal, name, literal, name, ..., literal. */
interface PathTemplate {
  readonly parts: readonly string[];
  readonly names: ReadonlySet<string>;
}

const templates = new Map<string, PathTemplate>();

/** The cut of a template, made once per template (the client fills one per request). */
export function pathTemplate(template: string): PathTemplate {
  let t = templates.get(template);
  if (!t) {
    const parts = template.split(/\{(\w+)\}/);
    t = { parts, names: new Set(parts.filter((_, i) => i % 2 === 1)) };
    templates.set(template, t);
  }
  return t;
}

/** Fill a path template; every value is URI-encoded. */
export function buildPath(template: string, params: Readonly<Record<string, string | undefined>>): string {
  const { parts } = pathTemplate(template);
  // parts has odd length (a split with one capture group): every index read below is in range
  let path = parts[0] ?? '';
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i] ?? '';
    const v = params[name];
    if (v === undefined) throw new Error(`missing path parameter ${name}`);
    path += encodeURIComponent(v) + (parts[i + 1] ?? '');
  }
  return path;
}
