// The bad-response sweep of the client: a raw node:http server answers one malformed
// response per case (wrong types, missing fields, HTML, truncated JSON, odd statuses, dropped
// connections) and each call ends in one typed ApiError with the expected code, whose message
// names the operation and, for a response that does not fit, the field. Nothing escapes as an
// unhandled rejection and no secret reaches the error. The valid bodies that the cases mutate are
// real answers of the embedded cloud.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, ApiError, type ApiErrorCode, type ApiReach } from '../../src/api/index.js';
import { demoCredentials, startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { ALERT, DASHBOARD, DEMO, ORG, PIPE, RPE, SVC } from '../cloud/helpers.js';
import { collectEscapes } from '../escapes.js';

type Responder = (req: IncomingMessage, res: ServerResponse) => void;
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-dynamic-delete --
   the cases write wrong types into real answers and delete their members on purpose, through untyped JSON. */
type Json = Record<string, any>;

const SECRET = 'MARKER-sweep-secret-never-shown';
const REQ_ID = '6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f';

const PIPE_REF = { organizationId: ORG, serviceId: SVC.analytics, pipeId: PIPE.orders };
const SVC_REF = { organizationId: ORG, serviceId: SVC.analytics };
const CALLS = {
  scalePipe: (c: ApiClient) => c.scalePipe(PIPE_REF, {}),
  listServices: (c: ApiClient) => c.listServices(ORG),
  getReversePrivateEndpoint: (c: ApiClient) =>
    c.getReversePrivateEndpoint({ ...SVC_REF, reversePrivateEndpointId: RPE.ready }),
  listDashboards: (c: ApiClient) => c.listDashboards(SVC_REF),
  getDashboard: (c: ApiClient) => c.getDashboard({ ...SVC_REF, dashboardId: DASHBOARD }),
  deleteDashboard: (c: ApiClient) => c.deleteDashboard({ ...SVC_REF, dashboardId: DASHBOARD }),
  getAlert: (c: ApiClient) => c.getAlert({ ...SVC_REF, alertId: ALERT }),
  listSources: (c: ApiClient) => c.listSources(SVC_REF),
} as const;
type Op = keyof typeof CALLS;

// Real results of the embedded cloud, filled in beforeAll; each case mutates a deep copy.
const REAL_OPS = [
  'scalePipe',
  'listServices',
  'getReversePrivateEndpoint',
  'listDashboards',
  'getDashboard',
  'getAlert',
  'listSources',
] as const;
const real = {} as Record<(typeof REAL_OPS)[number], unknown>;

const send =
  (status: number, body: string, headers: Record<string, string> = {}): Responder =>
  (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
const json = (status: number, body: unknown, headers: Record<string, string> = {}): Responder =>
  send(status, JSON.stringify(body), { 'content-type': 'application/json', ...headers });
/** A 200 envelope around the real result of `op`, after `edit` changed a copy of it. */
const okWith =
  (op: keyof typeof real, edit: (result: Json) => unknown = (r) => r): Responder =>
  (req, res) => {
    const result = structuredClone(real[op]) as Json;
    const edited = edit(result);
    json(200, { status: 200, requestId: REQ_ID, result: edited === undefined ? result : edited })(req, res);
  };
/** A 200 envelope edited as a whole (result = the real pipe). */
const envelopeWith =
  (edit: (env: Json) => void): Responder =>
  (req, res) => {
    const env: Json = { status: 200, requestId: REQ_ID, result: structuredClone(real.scalePipe) };
    edit(env);
    json(200, env)(req, res);
  };
const html = (status: number): Responder =>
  send(status, `<html><head><title>${status}</title></head><body><h1>${status}</h1></body></html>`, {
    'content-type': 'text/html',
  });
const platform = (status: number, error: string): Responder => json(status, { status, error, requestId: REQ_ID });

interface Case {
  name: string;
  op: Op;
  respond: Responder;
  code: ApiErrorCode;
  /** Tested against the message after the `<operation>: ` prefix. */
  message: RegExp;
  status?: number;
  /** Whether the platform may have acted on the request; default: from the status (2xx yes, 5xx
   *  maybe, other no), `maybe` without one. */
  reached?: ApiReach;
}
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const at = (path: string) => new RegExp(`^response does not fit the schema at ${escapeRe(path)}: `);
const shape = (name: string, op: Op, respond: Responder, path: string): Case => ({
  name,
  op,
  respond,
  code: 'API_BAD_RESPONSE',
  message: at(path),
  status: 200,
});
const del = (field: string) => (r: Json) => {
  delete r[field];
};

const wrongTypes: Case[] = [
  shape(
    'status as a string',
    'scalePipe',
    envelopeWith((e) => {
      e.status = '200';
    }),
    'status',
  ),
  shape(
    'requestId missing',
    'scalePipe',
    envelopeWith((e) => {
      delete e.requestId;
    }),
    'requestId',
  ),
  shape(
    'result null',
    'scalePipe',
    envelopeWith((e) => {
      e.result = null;
    }),
    'result',
  ),
  shape(
    'no result',
    'scalePipe',
    envelopeWith((e) => {
      delete e.result;
    }),
    'result',
  ),
  shape(
    'an array where the pipe belongs',
    'scalePipe',
    envelopeWith((e) => {
      e.result = [e.result];
    }),
    'result',
  ),
  shape(
    'an object where the list belongs',
    'listServices',
    okWith('listServices', (r) => r[0]),
    'result',
  ),
  shape(
    'scaling.replicas as "two"',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.scaling.replicas = 'two';
    }),
    'result.scaling.replicas',
  ),
  shape(
    'scaling.replicaCpuMillicores as "lots"',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.scaling.replicaCpuMillicores = 'lots';
    }),
    'result.scaling.replicaCpuMillicores',
  ),
  shape(
    'scaling.replicaMemoryGb in unknown units',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.scaling.replicaMemoryGb = '2 gallons';
    }),
    'result.scaling.replicaMemoryGb',
  ),
  shape(
    'scaling.concurrency as a boolean',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.scaling.concurrency = true;
    }),
    'result.scaling.concurrency',
  ),
  shape(
    'scaling as an array',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.scaling = [2];
    }),
    'result.scaling',
  ),
  shape(
    'state as a number',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.state = 3;
    }),
    'result.state',
  ),
  shape(
    'createdAt as a number',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.createdAt = 1767225600;
    }),
    'result.createdAt',
  ),
  shape(
    'a pipe id that is not a uuid',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.id = 'orders';
    }),
    'result.id',
  ),
  shape(
    'fieldMappings as an object',
    'scalePipe',
    okWith('scalePipe', (r) => {
      r.fieldMappings = {};
    }),
    'result.fieldMappings',
  ),
  shape(
    'a service port as a string',
    'listServices',
    okWith('listServices', (r) => {
      r[0].endpoints[0].port = '8443';
    }),
    'result[0].endpoints[0].port',
  ),
  shape(
    'a service protocol not in the enum',
    'listServices',
    okWith('listServices', (r) => {
      r[1].endpoints[0].protocol = 'gopher';
    }),
    'result[1].endpoints[0].protocol',
  ),
  shape(
    'a service createdAt that is not ISO 8601',
    'listServices',
    okWith('listServices', (r) => {
      r[0].createdAt = 'yesterday';
    }),
    'result[0].createdAt',
  ),
  shape(
    'an endpoint status not in the enum',
    'getReversePrivateEndpoint',
    okWith('getReversePrivateEndpoint', (r) => {
      r.status = 'Sideways';
    }),
    'result.status',
  ),
  shape(
    'endpoint dnsNames as a string',
    'getReversePrivateEndpoint',
    okWith('getReversePrivateEndpoint', (r) => {
      r.dnsNames = 'b-1.example';
    }),
    'result.dnsNames',
  ),
  shape(
    'a dashboard id that is not 24-hex',
    'getDashboard',
    okWith('getDashboard', (r) => {
      r.id = 'dash-1';
    }),
    'result.id',
  ),
  shape(
    'dashboard tiles null',
    'listDashboards',
    okWith('listDashboards', (r) => {
      r[0].tiles = null;
    }),
    'result[0].tiles',
  ),
  shape(
    'an alert state not in the enum',
    'getAlert',
    okWith('getAlert', (r) => {
      r.state = 'LOUD';
    }),
    'result.state',
  ),
  shape(
    'a source kind not in the enum',
    'listSources',
    okWith('listSources', (r) => {
      r[0].kind = 'video';
    }),
    'result[0].kind',
  ),
];

const missing: Case[] = [
  shape('a pipe without id', 'scalePipe', okWith('scalePipe', del('id')), 'result.id'),
  shape('a pipe without scaling', 'scalePipe', okWith('scalePipe', del('scaling')), 'result.scaling'),
  shape('a pipe without source', 'scalePipe', okWith('scalePipe', del('source')), 'result.source'),
  shape(
    'a destination without table',
    'scalePipe',
    okWith('scalePipe', (r) => {
      delete r.destination.table;
    }),
    'result.destination.table',
  ),
  shape(
    'a service without name',
    'listServices',
    okWith('listServices', (r) => {
      delete r[2].name;
    }),
    'result[2].name',
  ),
  shape(
    'an endpoint without type',
    'getReversePrivateEndpoint',
    okWith('getReversePrivateEndpoint', del('type')),
    'result.type',
  ),
  shape('a delete answer without requestId', 'deleteDashboard', json(200, { status: 200 }), 'requestId'),
  shape(
    'a 200 whose body is an error',
    'scalePipe',
    platform(200, 'BAD_REQUEST: replicas must be between 1 and 10'),
    'result',
  ),
];

const notJson = (name: string, op: Op, status: number, respond: Responder, detail = /.*/): Case => ({
  name,
  op,
  respond,
  status,
  code: 'API_BAD_RESPONSE',
  message: new RegExp(`^HTTP ${status} answer is not JSON \\(${detail.source}\\)$`),
});
// 1.5 Mi latin1 characters, 3 MiB on the wire (each is two bytes of UTF-8): under the client's 4 MiB bound.
const HUGE = Buffer.alloc(1536 * 1024, 0xfe).toString('latin1');
const bodies: Case[] = [
  notJson('HTML on 200', 'scalePipe', 200, html(200), /text\/html, \d+ bytes/),
  notJson(
    'truncated JSON',
    'scalePipe',
    200,
    send(200, `{"status":200,"requestId":"${REQ_ID}","result":{"id":`, { 'content-type': 'application/json' }),
  ),
  notJson('an empty body', 'listServices', 200, send(200, '', { 'content-type': 'application/json' }), /empty body/),
  notJson('a 204 with no body', 'scalePipe', 204, send(204, ''), /empty body/),
  notJson(
    '3 MB of binary garbage',
    'listServices',
    200,
    send(200, HUGE, { 'content-type': 'application/octet-stream' }),
    /application\/octet-stream, \d+ bytes/,
  ),
  notJson(
    'XML under an XML content type',
    'listSources',
    200,
    send(200, '<sources/>', { 'content-type': 'application/xml' }),
    /application\/xml, 10 bytes/,
  ),
  shape('a body of null', 'scalePipe', send(200, 'null', { 'content-type': 'application/json' }), '(root)'),
  shape(
    'a body that is a JSON string',
    'scalePipe',
    send(200, '"ok"', { 'content-type': 'application/json' }),
    '(root)',
  ),
  shape(
    'a body that is a JSON number',
    'listServices',
    send(200, '200', { 'content-type': 'application/json' }),
    '(root)',
  ),
  shape('a body that is an array', 'listServices', json(200, []), '(root)'),
];

const statusCase = (
  name: string,
  op: Op,
  status: number,
  respond: Responder,
  code: ApiErrorCode,
  message: RegExp,
): Case => ({ name, op, respond, status, code, message });
const statuses: Case[] = [
  statusCase(
    'HTML on 500',
    'scalePipe',
    500,
    html(500),
    'API_SERVER_ERROR',
    /^HTTP 500 without an error body \(text\/html, \d+ bytes\)$/,
  ),
  statusCase('HTML on 502', 'listServices', 502, html(502), 'API_SERVER_ERROR', /^HTTP 502 without an error body/),
  statusCase(
    'an empty 503',
    'scalePipe',
    503,
    send(503, ''),
    'API_SERVER_ERROR',
    /^HTTP 503 without an error body \(empty body\)$/,
  ),
  statusCase(
    'a 500 in the platform envelope',
    'scalePipe',
    500,
    platform(500, 'INTERNAL_SERVER_ERROR: boom'),
    'API_SERVER_ERROR',
    /^INTERNAL_SERVER_ERROR: boom$/,
  ),
  statusCase(
    "the gateway's HTML 404",
    'scalePipe',
    404,
    html(404),
    'API_NOT_FOUND',
    /^no such route: PATCH \/v1\/organizations\/.+\/scaling \(HTTP 404, text\/html, \d+ bytes\)$/,
  ),
  statusCase(
    'a 404 in the envelope',
    'scalePipe',
    404,
    platform(404, 'NOT_FOUND: Unknown pipe'),
    'API_NOT_FOUND',
    /^NOT_FOUND: Unknown pipe$/,
  ),
  statusCase(
    'a 400 whose error is a number',
    'scalePipe',
    400,
    json(400, { status: 400, error: 42 }),
    'API_BAD_REQUEST',
    /^HTTP 400 without an error body/,
  ),
  statusCase(
    'a 401',
    'listServices',
    401,
    platform(401, 'UNAUTHORIZED: Invalid API key'),
    'API_UNAUTHORIZED',
    /^UNAUTHORIZED: Invalid API key$/,
  ),
  statusCase(
    'a 403 as plain text',
    'listServices',
    403,
    send(403, 'Forbidden', { 'content-type': 'text/plain' }),
    'API_FORBIDDEN',
    /^HTTP 403 without an error body/,
  ),
  statusCase(
    'a 424',
    'scalePipe',
    424,
    platform(424, 'FAILED_DEPENDENCY: Service is not running. Current state: idle'),
    'API_FAILED_DEPENDENCY',
    /Current state: idle$/,
  ),
  statusCase(
    'a 429 without headers',
    'scalePipe',
    429,
    json(429, { error: 'TOO_MANY_REQUESTS' }),
    'API_RATE_LIMITED',
    /^TOO_MANY_REQUESTS \(window resets in 1 s\)$/,
  ),
  statusCase(
    'a 429 with a reset that is not a number',
    'scalePipe',
    429,
    json(429, { error: 'TOO_MANY_REQUESTS' }, { 'x-ratelimit-reset': 'soon' }),
    'API_RATE_LIMITED',
    /resets in 1 s/,
  ),
  statusCase('a 429 in HTML', 'scalePipe', 429, html(429), 'API_RATE_LIMITED', /^TOO_MANY_REQUESTS/),
  statusCase(
    'an unknown status 418',
    'scalePipe',
    418,
    send(418, 'I am a teapot', { 'content-type': 'text/plain' }),
    'API_BAD_REQUEST',
    /^HTTP 418 without an error body/,
  ),
  statusCase(
    'a 302 redirect',
    'scalePipe',
    302,
    send(302, '', { location: 'http://127.0.0.1:9/elsewhere' }),
    'API_BAD_RESPONSE',
    /^HTTP 302/,
  ),
  statusCase(
    'a 301 redirect to https',
    'listServices',
    301,
    send(301, '', { location: 'https://127.0.0.1:9/v1' }),
    'API_BAD_RESPONSE',
    /^HTTP 301/,
  ),
];

const transport: Case[] = [
  {
    name: 'a connection reset',
    op: 'scalePipe',
    code: 'API_NETWORK',
    message: /^network error \(/,
    respond: (req) => req.socket.destroy(),
  },
  {
    name: 'a reset after half the body',
    op: 'listServices',
    code: 'API_NETWORK',
    message: /^network error \(/,
    respond: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"status":200,');
      setImmediate(() => res.socket?.destroy());
    },
  },
  {
    name: 'a malformed status line',
    op: 'scalePipe',
    code: 'API_BAD_RESPONSE',
    message: /^malformed HTTP answer \(.*Invalid status code/,
    respond: (req) => {
      req.socket.end('HTTP/1.1 OK maybe\r\n\r\n');
    },
  },
  {
    name: 'no answer within the timeout',
    op: 'scalePipe',
    code: 'API_TIMEOUT',
    message: /^no complete answer within 150 ms$/,
    respond: () => {},
  },
  {
    name: 'a body that stalls',
    op: 'listServices',
    code: 'API_TIMEOUT',
    message: /^no complete answer within 150 ms$/,
    respond: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":200,');
    },
  },
];

const CASES: Case[] = [...wrongTypes, ...missing, ...bodies, ...statuses, ...transport];

let cloud: EmbeddedCloud;
let server: Server;
let baseUrl: string;
let current: Responder = html(500);
const redirected: string[] = [];
const escaped = collectEscapes();

beforeAll(async () => {
  cloud = await startCloud({ fixtures: DEMO, rateLimit: false });
  const creds = demoCredentials(DEMO);
  const c = new ApiClient({ baseUrl: cloud.url, keyId: creds.keyId, keySecret: creds.keySecret, retry: false });
  try {
    for (const op of REAL_OPS) real[op] = (await CALLS[op](c)).result;
  } finally {
    await c.close();
  }
  server = createServer((req, res) => {
    if (req.url?.includes('/elsewhere')) redirected.push(String(req.headers.authorization));
    req.resume();
    req.on('end', () => current(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await cloud.close();
});

/** The error of one call, or a failed expectation when the call succeeded or threw something else. */
async function failure(op: Op, options: Partial<ConstructorParameters<typeof ApiClient>[0]> = {}): Promise<ApiError> {
  const client = new ApiClient({
    baseUrl,
    keyId: 'sweep-key',
    keySecret: SECRET,
    timeoutMs: 150,
    retry: false,
    ...options,
  });
  try {
    const outcome = await CALLS[op](client).then(
      (r) => ({ ok: r }),
      (e: unknown) => ({ err: e }),
    );
    if ('ok' in outcome) throw new Error(`${op} succeeded: ${JSON.stringify(outcome.ok).slice(0, 200)}`);
    expect(outcome.err).toBeInstanceOf(ApiError);
    return outcome.err as ApiError;
  } finally {
    await client.close();
  }
}

describe('the bad-response sweep', () => {
  it('holds at least 40 cases, each named once, and the real bodies it mutates are valid', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    expect((real.listServices as unknown[]).length).toBeGreaterThanOrEqual(3);
  });

  it('the unmutated real bodies are accepted from the raw server too', async () => {
    for (const op of REAL_OPS) {
      current = okWith(op);
      const client = new ApiClient({ baseUrl, keyId: 'sweep-key', keySecret: SECRET, retry: false });
      try {
        expect((await CALLS[op](client)).requestId).toBe(REQ_ID);
      } finally {
        await client.close();
      }
    }
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: one typed ApiError naming the operation', async (_name, c) => {
    current = c.respond;
    const err = await failure(c.op);
    expect({ code: err.code, message: err.message }).toMatchObject({
      code: c.code,
      message: expect.stringMatching(new RegExp(`^${c.op}: `)),
    });
    expect(err.message.slice(c.op.length + 2)).toMatch(c.message);
    expect(err.operation).toBe(c.op);
    if (c.status !== undefined) expect(err.status).toBe(c.status);
    const reached =
      c.reached ?? (c.status === undefined ? 'maybe' : c.status < 300 ? 'yes' : c.status >= 500 ? 'maybe' : 'no');
    expect({ reached: err.reached, outcomeUnknown: err.outcomeUnknown }).toEqual({
      reached,
      // a 5xx is an answer (sent again with the same Idempotency-Key); no answer, or an unreadable 2xx, is not
      outcomeUnknown: reached !== 'no' && !(c.status !== undefined && c.status >= 500),
    });
    const shown = `${inspect(err, { depth: 6 })} ${JSON.stringify(err)} ${err.stack ?? ''}`;
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain(Buffer.from(`sweep-key:${SECRET}`).toString('base64'));
  });

  it('a valid envelope under a wrong content type is read: the body decides, not the label', async () => {
    let seenType: string | undefined;
    current = (_req, res) => {
      res.setHeader('content-type', 'text/plain');
      seenType = String(res.getHeader('content-type'));
      res.end(JSON.stringify({ status: 200, requestId: REQ_ID, result: real.scalePipe }));
    };
    const client = new ApiClient({ baseUrl, keyId: 'sweep-key', keySecret: SECRET, retry: false });
    try {
      expect((await client.scalePipe(PIPE_REF, {})).result.id).toBe(PIPE.orders);
      expect(seenType).toBe('text/plain');
    } finally {
      await client.close();
    }
  });

  it('a pipe state the client does not know reads as Unknown (no scaling), named in `tolerated`, not a failure', async () => {
    current = okWith('scalePipe', (r) => {
      r.state = 'Hibernating';
    });
    const client = new ApiClient({ baseUrl, keyId: 'sweep-key', keySecret: SECRET, retry: false });
    try {
      const res = await client.scalePipe(PIPE_REF, { replicas: 3 });
      expect(res.result.state).toBe('Unknown');
      expect(res.tolerated).toEqual(['result.state "Hibernating" is not a state the client knows: read as Unknown']);
      current = okWith('scalePipe');
      expect((await client.scalePipe(PIPE_REF, {})).tolerated).toBeUndefined();
    } finally {
      await client.close();
    }
  });

  it('counts and quantities sent as strings are read as the numbers they are', async () => {
    current = okWith('scalePipe', (r) => {
      Object.assign(r.scaling, { replicas: '3', replicaCpuMillicores: '1', replicaMemoryGb: '512Mi' });
    });
    const client = new ApiClient({ baseUrl, keyId: 'sweep-key', keySecret: SECRET, retry: false });
    try {
      expect((await client.scalePipe(PIPE_REF, {})).result.scaling).toMatchObject({
        replicas: 3,
        replicaCpuMillicores: 1000,
        replicaMemoryGb: 0.5,
      });
    } finally {
      await client.close();
    }
  });

  it('over several attempts, one that may have landed keeps the outcome unknown though the last was refused', async () => {
    let n = 0;
    const script: Responder[] = [() => {}, json(429, { error: 'TOO_MANY_REQUESTS' }, { 'x-ratelimit-reset': '1' })];
    current = (req, res) => script[Math.min(n++, 1)]!(req, res);
    const client = new ApiClient({
      baseUrl,
      keyId: 'sweep-key',
      keySecret: SECRET,
      timeoutMs: 150,
      retry: { maxAttempts: 2 },
      sleep: async () => {},
    });
    try {
      const err = await client.scalePipe(PIPE_REF, { replicas: 3 }).catch((e: unknown) => e as ApiError);
      expect(err).toMatchObject({ code: 'API_RATE_LIMITED', attempts: 2, reached: 'maybe', outcomeUnknown: true });
    } finally {
      await client.close();
    }
  });

  it('a redirect is not followed: the credentials never go to the Location', () => {
    expect(redirected).toEqual([]);
  });

  it('with retries, an HTML 503 then a valid answer succeeds; HTML 500s give up after maxAttempts without real waits', async () => {
    let n = 0;
    const script = [html(503), okWith('scalePipe')];
    current = (req, res) => script[Math.min(n++, 1)]!(req, res);
    const sleeps: number[] = [];
    const client = new ApiClient({
      baseUrl,
      keyId: 'sweep-key',
      keySecret: SECRET,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      random: () => 0.5,
    });
    try {
      expect((await client.scalePipe(PIPE_REF, {})).requestId).toBe(REQ_ID);
      expect(sleeps).toHaveLength(1);
      current = html(500);
      const err = await client.scalePipe(PIPE_REF, {}).catch((e: unknown) => e as ApiError);
      expect(err).toMatchObject({ code: 'API_SERVER_ERROR', attempts: 5 });
      expect(sleeps).toHaveLength(5);
    } finally {
      await client.close();
    }
  });

  it('a scaling answer that fits but whose envelope requestId is not a uuid is the answer, with the problem named', async () => {
    current = envelopeWith((e) => {
      e.requestId = 'req-42';
    });
    const client = new ApiClient({ baseUrl, keyId: 'sweep-key', keySecret: SECRET, retry: false });
    try {
      const res = await client.scalePipe(PIPE_REF, { replicas: 3 });
      expect(res.result.id).toBe(PIPE.orders);
      expect(res.requestId).toBe('req-42');
      expect(res.envelopeIssue).toMatch(/^scalePipe: envelope requestId is not a uuid \("req-42"\)$/);
    } finally {
      await client.close();
    }
  });

  it("a garbage answer leaves no request id behind it that is not the server's", async () => {
    current = json(200, { status: 200, requestId: randomUUID(), result: 'nope' });
    const err = await failure('scalePipe');
    expect(err.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('after the sweep nothing escaped as an unhandled rejection or exception', () => {
    expect(escaped).toEqual([]);
  });
});
