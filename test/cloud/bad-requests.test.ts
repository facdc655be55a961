// The bad-input sweep of the embedded cloud: malformed requests of every kind over real
// HTTP, each answered with its status and the platform's error in words that name the field, and
// the server still serving a valid request right after (nothing crashed, nothing poisoned).
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../src/cloud/index.js';
import {
  ALERT,
  basic,
  DASHBOARD,
  DEMO_AUTH,
  demoCloud,
  expectOk,
  op,
  ORG,
  OTHER_AUTH,
  OTHER_ORG,
  PIPE,
  RPE,
  SVC,
} from './helpers.js';
import { collectEscapes } from '../escapes.js';

interface Case {
  name: string;
  method: string;
  /** Relative to the cloud's url. */
  path: string;
  body?: string | (() => Readable);
  /** Content type of the body; null sends none. Default application/json when there is a body. */
  contentType?: string | null;
  /** Authorization header; null sends none. Default: the demo key. */
  auth?: string | null;
  status: number;
  /** The error text of the envelope; omitted for the non-JSON 404 of an unrouted path. */
  error?: string | RegExp;
}

const SERVICE = `/v1/organizations/${ORG}/services/${SVC.analytics}`;
const SCALING = `${SERVICE}/pipes/${PIPE.orders}/scaling`;
const SERVICES = `/v1/organizations/${ORG}/services`;
const DASHBOARDS = `${SERVICE}/stack/dashboards`;
const UNKNOWN_UUID = 'f0000000-0000-4000-8000-0000000000ff';

const patch = (name: string, body: string, status: number, error: string | RegExp, path = SCALING): Case => ({
  name,
  method: 'PATCH',
  path,
  body,
  status,
  error,
});
const malformed = /^BAD_REQUEST: Malformed JSON body: /;

const badJson: Case[] = [
  patch('truncated JSON', '{"replicas": 2,', 400, malformed),
  patch('an unclosed object', '{"replicas": 2', 400, malformed),
  patch('trailing garbage', '{"replicas": 2} x', 400, malformed),
  patch('NaN', '{"replicas": NaN}', 400, malformed),
  patch('single quotes', "{'replicas': 2}", 400, malformed),
  patch('an unquoted member name', '{replicas: 2}', 400, malformed),
];

// Every scaling field with each JSON type that is not a number.
const WRONG_TYPES: [string, string][] = [
  ['a string', '"2"'],
  ['a boolean', 'true'],
  ['an array', '[2]'],
  ['an object', '{"n": 2}'],
];
const wrongTypes: Case[] = (['replicas', 'concurrency', 'replicaCpuMillicores', 'replicaMemoryGb'] as const).flatMap(
  (field) =>
    WRONG_TYPES.map(([what, json]) =>
      patch(`${field} as ${what}`, `{"${field}": ${json}}`, 400, `BAD_REQUEST: ${field} must be a number`),
    ),
);

const bodies: Case[] = [
  patch(
    'a quantity string for replicaMemoryGb',
    '{"replicaMemoryGb": "2Gi"}',
    400,
    'BAD_REQUEST: replicaMemoryGb must be a number',
  ),
  patch('a fractional replicas', '{"replicas": 2.5}', 400, 'BAD_REQUEST: replicas must be an integer'),
  patch('replicas that overflow to Infinity', '{"replicas": 1e400}', 400, 'BAD_REQUEST: replicas must be a number'),
  patch(
    'two bad fields at once',
    '{"replicas": -1, "concurrency": "x"}',
    400,
    'BAD_REQUEST: replicas must be between 1 and 10; concurrency must be a number',
  ),
  patch('a body that is an array', '[]', 400, 'BAD_REQUEST: body must be an object'),
  patch('a body of null', 'null', 400, 'BAD_REQUEST: body must be an object'),
  patch('a body that is a string', '"replicas"', 400, 'BAD_REQUEST: body must be an object'),
  patch('a body that is a number', '42', 400, 'BAD_REQUEST: body must be an object'),
  patch('an unknown member', '{"replica": 2}', 400, 'BAD_REQUEST: unknown member replica'),
  patch('two unknown members', '{"replicas": 2, "foo": 1, "bar": 2}', 400, 'BAD_REQUEST: unknown members foo, bar'),
  patch('a __proto__ member', '{"__proto__": {"replicas": 9}}', 400, 'BAD_REQUEST: unknown member __proto__'),
  patch(
    'arrays nested 500,000 deep (just under 1 MB)',
    '['.repeat(500_000) + ']'.repeat(500_000),
    400,
    'BAD_REQUEST: body nests deeper than 64 levels',
  ),
  patch(
    'brackets inside strings, which are not nesting',
    `{"a\\"${'['.repeat(100)}": "${'{'.repeat(100)}"}`,
    400,
    `BAD_REQUEST: unknown member a"${'['.repeat(100)}`,
  ),
  patch(
    'objects nested 65 deep',
    '{"a":'.repeat(65) + '1' + '}'.repeat(65),
    400,
    'BAD_REQUEST: body nests deeper than 64 levels',
  ),
  {
    name: 'a tile config nested 5,000 deep',
    method: 'POST',
    path: DASHBOARDS,
    status: 400,
    error: 'BAD_REQUEST: body nests deeper than 64 levels',
    body: `{"name":"deep","tiles":[{"name":"t","x":0,"y":0,"w":1,"h":1,"config":{"select":${'['.repeat(5000)}${']'.repeat(5000)}}}]}`,
  },
  patch('a body over 1 MB', JSON.stringify({ replicas: 2, pad: 'x'.repeat(1_100_000) }), 413, /^PAYLOAD_TOO_LARGE: /),
  {
    name: 'a chunked body that grows past 1 MB',
    method: 'PATCH',
    path: SCALING,
    status: 413,
    error: /^PAYLOAD_TOO_LARGE: /,
    body: () => growing(2_000_000),
  },
  {
    name: 'an empty JSON body where one is required',
    method: 'POST',
    path: DASHBOARDS,
    body: '',
    status: 400,
    error: 'BAD_REQUEST: a JSON body is required',
  },
  {
    name: 'an unknown member of a dashboard',
    method: 'POST',
    path: DASHBOARDS,
    body: '{"name":"n","tiles":[],"colour":"red"}',
    status: 400,
    error: 'BAD_REQUEST: unknown member colour',
  },
  {
    name: 'an unknown member of a tile',
    method: 'POST',
    path: DASHBOARDS,
    status: 400,
    error: 'BAD_REQUEST: tiles[0]: unknown member foo',
    body: '{"name":"n","tiles":[{"name":"t","x":0,"y":0,"w":1,"h":1,"config":{},"foo":1}]}',
  },
  {
    name: 'an alert with a bad interval and a string threshold',
    method: 'POST',
    path: `${SERVICE}/stack/alerts`,
    status: 400,
    error: 'BAD_REQUEST: interval: must be one of 1m, 5m, 15m, 30m, 1h, 6h, 12h, 1d; threshold: must be a number',
    body: `{"interval":"2m","threshold":"high","thresholdType":"above","channel":{"type":"webhook","webhookId":"w"},"dashboardId":"${DASHBOARD}","tileId":"x"}`,
  },
];

const contentTypes: Case[] = [
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  null,
].map((type) => ({
  name: `a JSON body sent as ${type ?? 'no content type'}`,
  method: 'PATCH',
  path: SCALING,
  body: '{"replicas": 2}',
  contentType: type,
  status: 415,
  error: `UNSUPPORTED_MEDIA_TYPE: Content-Type must be application/json, got ${type ?? '(none)'}`,
}));

const get = (name: string, path: string, status: number, error: string | RegExp): Case => ({
  name,
  method: 'GET',
  path,
  status,
  error,
});
const ids: Case[] = [
  get(
    'a malformed organizationId',
    '/v1/organizations/not-a-uuid/services',
    400,
    'BAD_REQUEST: Invalid organizationId not-a-uuid: must be a UUID',
  ),
  get(
    'an organizationId without dashes',
    `/v1/organizations/${ORG.replace(/-/g, '')}/services`,
    400,
    /^BAD_REQUEST: Invalid organizationId \w+: must be a UUID$/,
  ),
  get(
    'an organizationId in braces',
    `/v1/organizations/%7B${ORG}%7D/services`,
    400,
    `BAD_REQUEST: Invalid organizationId {${ORG}}: must be a UUID`,
  ),
  patch(
    'a malformed serviceId',
    '{}',
    400,
    'BAD_REQUEST: Invalid serviceId 123: must be a UUID',
    `${SERVICES}/123/pipes/${PIPE.orders}/scaling`,
  ),
  patch(
    'a pipeId one digit short',
    '{}',
    400,
    `BAD_REQUEST: Invalid pipeId ${PIPE.orders.slice(0, -1)}: must be a UUID`,
    `${SERVICE}/pipes/${PIPE.orders.slice(0, -1)}/scaling`,
  ),
  get(
    'a malformed reversePrivateEndpointId',
    `${SERVICE}/pipesReversePrivateEndpoints/xyz`,
    400,
    'BAD_REQUEST: Invalid reversePrivateEndpointId xyz: must be a UUID',
  ),
  get(
    'a short dashboardId',
    `${DASHBOARDS}/${DASHBOARD.slice(1)}`,
    400,
    `BAD_REQUEST: Invalid dashboardId ${DASHBOARD.slice(1)}: must be a 24-hex object id`,
  ),
  get(
    'a long dashboardId',
    `${DASHBOARDS}/${DASHBOARD}0`,
    400,
    `BAD_REQUEST: Invalid dashboardId ${DASHBOARD}0: must be a 24-hex object id`,
  ),
  get(
    'a non-hex dashboardId',
    `${DASHBOARDS}/0d000000000000000000000g`,
    400,
    'BAD_REQUEST: Invalid dashboardId 0d000000000000000000000g: must be a 24-hex object id',
  ),
  get(
    'a uuid as alertId',
    `${SERVICE}/stack/alerts/${PIPE.orders}`,
    400,
    `BAD_REQUEST: Invalid alertId ${PIPE.orders}: must be a 24-hex object id`,
  ),
  get(
    'an encoded path traversal as dashboardId',
    `${DASHBOARDS}/..%2F..%2F`,
    400,
    'BAD_REQUEST: Invalid dashboardId ../../: must be a 24-hex object id',
  ),
  get(
    'an organization of another key',
    `/v1/organizations/${OTHER_ORG}/services`,
    403,
    'FORBIDDEN: The API key does not belong to this organization',
  ),
  patch(
    'an unknown service',
    '{}',
    404,
    'NOT_FOUND: Unknown service',
    `${SERVICES}/${UNKNOWN_UUID}/pipes/${PIPE.orders}/scaling`,
  ),
  patch('an unknown pipe', '{}', 404, 'NOT_FOUND: Unknown pipe', `${SERVICE}/pipes/${UNKNOWN_UUID}/scaling`),
  patch(
    'an unknown pipe with a malformed body',
    '{"replicas":',
    404,
    'NOT_FOUND: Unknown pipe',
    `${SERVICE}/pipes/${UNKNOWN_UUID}/scaling`,
  ),
  get(
    'an unknown reverse private endpoint',
    `${SERVICE}/pipesReversePrivateEndpoints/${UNKNOWN_UUID}`,
    404,
    'NOT_FOUND: Unknown reverse private endpoint',
  ),
  get(
    "another service's endpoint",
    `/v1/organizations/${ORG}/services/${SVC.staging}/pipesReversePrivateEndpoints/${RPE.ready}`,
    404,
    'NOT_FOUND: Unknown reverse private endpoint',
  ),
  get('an unknown dashboard', `${DASHBOARDS}/ffffffffffffffffffffffff`, 404, 'NOT_FOUND: Unknown dashboard'),
  get('an unknown alert', `${SERVICE}/stack/alerts/${ALERT.replace(/1$/, 'f')}`, 404, 'NOT_FOUND: Unknown alert'),
];

const filter = (f: string, text: string): Case =>
  get(
    `the filter ${f === '' ? '(empty)' : f}`,
    `${SERVICES}?filter=${encodeURIComponent(f)}`,
    400,
    `BAD_REQUEST: filter "${f}" ${text}`,
  );
const UNSUPPORTED = 'is not supported: only tag:Key or tag:Key=Value';
const filters: Case[] = [
  filter('Environment=Production', UNSUPPORTED),
  filter('TAG:team', UNSUPPORTED),
  filter('', UNSUPPORTED),
  filter('tag:', 'has an invalid tag key'),
  filter('tag:=v', 'has an invalid tag key'),
  filter('tag:a b', 'has an invalid tag key'),
  filter(`tag:${'k'.repeat(129)}`, 'has an invalid tag key'),
  filter('tag:team=', 'has an invalid tag value'),
  filter('tag:team=da ta', 'has an invalid tag value'),
  filter('tag:team=v=w', 'has an invalid tag value'),
  get(
    'a bad filter after a good one',
    `${SERVICES}?filter=tag:team&filter=env`,
    400,
    `BAD_REQUEST: filter "env" ${UNSUPPORTED}`,
  ),
  get(
    'a filter with a broken percent escape',
    `${SERVICES}?filter=%ZZ`,
    400,
    `BAD_REQUEST: filter "%ZZ" ${UNSUPPORTED}`,
  ),
];

const auth = (name: string, header: string | null, status: number, error: string): Case => ({
  name,
  method: 'GET',
  path: SERVICES,
  auth: header,
  status,
  error,
});
const auths: Case[] = [
  auth('no Authorization header', null, 401, 'UNAUTHORIZED: Missing Authorization header'),
  auth('an empty Authorization header', '', 401, 'UNAUTHORIZED: Missing Authorization header'),
  auth('the Bearer scheme', 'Bearer pipescaler-demo-key', 401, 'UNAUTHORIZED: Authorization must use the Basic scheme'),
  auth(
    'the Digest scheme',
    'Digest username="pipescaler-demo-key", realm="api"',
    401,
    'UNAUTHORIZED: Authorization must use the Basic scheme',
  ),
  auth('Basic with no credentials', 'Basic', 401, 'UNAUTHORIZED: Authorization must use the Basic scheme'),
  auth(
    'Basic with no colon',
    `Basic ${Buffer.from('pipescaler-demo-key').toString('base64')}`,
    401,
    'UNAUTHORIZED: Malformed Basic credentials',
  ),
  auth(
    'Basic with an empty key id',
    basic('', 'demo-secret-change-me'),
    401,
    'UNAUTHORIZED: Malformed Basic credentials',
  ),
  auth(
    'Basic that is not base64',
    'Basic !!not-base64!!',
    401,
    'UNAUTHORIZED: Malformed Basic credentials: not base64',
  ),
  auth('a wrong secret', basic('pipescaler-demo-key', 'wrong'), 401, 'UNAUTHORIZED: Invalid API key'),
  auth('an empty secret', basic('pipescaler-demo-key', ''), 401, 'UNAUTHORIZED: Invalid API key'),
  auth('an unknown key id', basic('nobody', 'demo-secret-change-me'), 401, 'UNAUTHORIZED: Invalid API key'),
  auth("another organization's key", OTHER_AUTH, 403, 'FORBIDDEN: The API key does not belong to this organization'),
];

const unrouted = (
  method: string,
  path: string,
  name = `${method} ${path.replace(ORG, '{org}').replace(SVC.analytics, '{svc}')}`,
): Case => ({ name, method, path, status: 404, ...(['PUT', 'POST', 'PATCH'].includes(method) ? { body: '{}' } : {}) });
const routes: Case[] = [
  unrouted('DELETE', SCALING),
  unrouted('PUT', SCALING),
  unrouted('GET', SCALING),
  unrouted('POST', SCALING),
  unrouted('DELETE', SERVICES),
  unrouted('PATCH', DASHBOARDS),
  unrouted('POST', `${SERVICE}/stack/sources`),
  unrouted('OPTIONS', SERVICES),
  unrouted('GET', `${SERVICES}/`),
  unrouted('GET', SERVICE),
  unrouted('GET', `${SERVICE}/pipes/${PIPE.orders}`),
  unrouted('GET', `/v2/organizations/${ORG}/services`),
  unrouted('GET', '/'),
  unrouted('GET', '/admin/faults'),
];

const CASES: Case[] = [...badJson, ...wrongTypes, ...bodies, ...contentTypes, ...ids, ...filters, ...auths, ...routes];

/** A JSON body streamed without a length, growing to about `bytes`. */
function growing(bytes: number): Readable {
  return Readable.from(
    (function* () {
      yield '{"replicas": 2, "pad": "';
      for (let sent = 0; sent < bytes; sent += 65_536) yield 'x'.repeat(65_536);
      yield '"}';
    })(),
  );
}

let cloud: EmbeddedCloud;
const escaped = collectEscapes();
beforeAll(async () => {
  cloud = await demoCloud();
});
afterAll(async () => {
  await cloud.close();
});

async function send(c: Case) {
  const headers: Record<string, string> = {};
  const authorization = c.auth === undefined ? DEMO_AUTH : c.auth;
  if (authorization !== null) headers.authorization = authorization;
  if (c.body !== undefined && c.contentType !== null) headers['content-type'] = c.contentType ?? 'application/json';
  const body = typeof c.body === 'function' ? c.body() : c.body;
  const res = await request(`${cloud.url}${c.path}`, { method: c.method as 'GET', headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, type: String(res.headers['content-type']), text };
}

describe('the bad-input sweep', () => {
  it('holds at least 40 cases, each named once', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: a clear error, then a valid request still served',
    async (_name, c) => {
      const a = await send(c);
      expect(a.status, a.text).toBe(c.status);
      if (c.error === undefined) {
        // The gateway's answer for a path it does not route: not JSON, and no auth asked.
        expect(a.type).toMatch(/^text\/html/);
        expect(a.text).toContain('404 Not Found');
      } else {
        expect(a.type).toMatch(/^application\/json/);
        const json = JSON.parse(a.text) as { status: number; error: string; requestId: string };
        expect(json.status).toBe(c.status);
        expect(json.requestId).toMatch(/^[0-9a-f-]{36}$/);
        if (typeof c.error === 'string') expect(json.error).toBe(c.error);
        else expect(json.error).toMatch(c.error);
      }
      expectOk(
        'scalePipe',
        await op(cloud, 'scalePipe', { serviceId: SVC.analytics, pipeId: PIPE.orders }, { body: {} }),
      );
    },
  );

  it('query members the API does not define are ignored, never applied', async () => {
    const r = await send({
      name: 'q',
      method: 'PATCH',
      path: `${SCALING}?replicas=9&&&=&foo[]=x`,
      body: '{}',
      status: 200,
    });
    expect(r.status).toBe(200);
    expect((JSON.parse(r.text) as { result: { scaling: { replicas: unknown } } }).result.scaling.replicas).toBe(2);
    expect((await send({ name: 'q', method: 'GET', path: `${SERVICES}?foo=bar&&&=`, status: 200 })).status).toBe(200);
  });

  it('after the sweep: no 500 was answered, dashboards still list, nothing escaped the server', async () => {
    expectOk('listDashboards', await op(cloud, 'listDashboards', { serviceId: SVC.analytics }));
    const requests = cloud.stats().requests;
    for (const [operation, byStatus] of Object.entries(requests))
      expect(Object.keys(byStatus), operation).not.toContain('500');
    expect(escaped).toEqual([]);
  });
});
