// The client's error and retry machinery against raw HTTP servers, for the answers the embedded
// cloud cannot give on purpose (HTML, truncated JSON, stalls, dropped connections).
import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, ApiError, type ApiClientEvents, type ClientOptions } from '../../src/api/index.js';
import { hang, json, rawServer, reset, stallBody, text, type RawServer, type Responder } from './raw-server.js';

const ORG = '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b';
const SVC = 'a1000000-0000-4000-8000-000000000001';
const PIPE = 'b1000000-0000-4000-8000-000000000001';
const REF = { organizationId: ORG, serviceId: SVC, pipeId: PIPE };
const REQ_ID = '3b241101-e2bb-4255-8caf-4136c566a962';
const SECRET = 'MARKER-s3cr3t-do-not-leak';
const SECRET_B64 = Buffer.from(`key-1:${SECRET}`).toString('base64');

const pipe = (scaling: Record<string, unknown> = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) => ({
  id: PIPE,
  serviceId: SVC,
  name: 'orders-events',
  state: 'Running',
  scaling,
  source: { kafka: { brokers: 'b:9092', topics: 'orders' } },
  destination: { database: 'default', table: 'orders' },
  fieldMappings: [],
  settings: {},
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
});
const ok = (result: unknown): Responder => json(200, { status: 200, requestId: REQ_ID, result });
const platformError = (status: number, error: string): Responder => json(status, { status, error, requestId: REQ_ID });

let server: RawServer | undefined;
let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

interface Harness {
  client: ApiClient;
  server: RawServer;
  sleeps: number[];
  events: { [K in keyof ApiClientEvents]: ApiClientEvents[K][] };
}

async function harness(script: Responder[], options: Partial<ClientOptions> = {}): Promise<Harness> {
  server = await rawServer(script);
  const sleeps: number[] = [];
  client = new ApiClient({
    baseUrl: server.url,
    keyId: 'key-1',
    keySecret: SECRET,
    timeoutMs: 2_000,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
  const events: Harness['events'] = { request: [], retry: [], rateLimited: [] };
  client.events.on('request', (e) => events.request.push(e));
  client.events.on('retry', (e) => events.retry.push(e));
  client.events.on('rateLimited', (e) => events.rateLimited.push(e));
  return { client, server, sleeps, events };
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('ApiClient: requests on the wire', () => {
  it('sends Basic auth, JSON content type, the body as given and a uuid Idempotency-Key on the PATCH', async () => {
    const h = await harness([ok(pipe())]);
    const res = await h.client.scalePipe(REF, { replicas: 3 });
    expect(res).toMatchObject({ requestId: REQ_ID, status: 200, result: { id: PIPE } });
    const [req] = h.server.requests;
    expect(req?.method).toBe('PATCH');
    expect(req?.url).toBe(`/v1/organizations/${ORG}/services/${SVC}/pipes/${PIPE}/scaling`);
    expect(req?.headers.authorization).toBe(`Basic ${SECRET_B64}`);
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(req?.body ?? '')).toEqual({ replicas: 3 });
  });

  it('calls beforeSend right before writing: a throw ends the call with it, nothing sent; the next call goes out', async () => {
    const h = await harness([ok(pipe())]);
    class TooLate extends Error {}
    const refused = await h.client
      .scalePipe(
        REF,
        { replicas: 3 },
        {
          beforeSend: () => {
            throw new TooLate('too late');
          },
        },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(TooLate);
    expect(h.server.requests).toEqual([]);
    let checks = 0;
    const res = await h.client.scalePipe(REF, { replicas: 3 }, { beforeSend: () => void (checks += 1) });
    expect(res.status).toBe(200);
    expect(checks).toBe(1);
    expect(h.server.requests).toHaveLength(1);
  });

  it('repeats the filter query parameter, keeps a base URL path prefix, and sends no body on a GET', async () => {
    server = await rawServer([ok([])]);
    client = new ApiClient({ baseUrl: `${server.url}/gateway/`, keyId: 'key-1', keySecret: SECRET });
    await client.listServices(ORG, ['tag:Environment=Production', 'tag:isActive']);
    const [req] = server.requests;
    expect(req?.url).toBe(
      `/gateway/v1/organizations/${ORG}/services?filter=tag%3AEnvironment%3DProduction&filter=tag%3AisActive`,
    );
    expect(req?.headers['content-type']).toBeUndefined();
    expect(req?.headers['idempotency-key']).toBeUndefined();
  });

  it('normalizes quantity strings and reads a transient 0 or null as unknown', async () => {
    const h = await harness([
      ok(pipe({ replicas: 0, replicaCpuMillicores: '500m', replicaMemoryGb: '512Mi', concurrency: null })),
    ]);
    const { result } = await h.client.scalePipe(REF, {});
    expect(result.scaling).toEqual({
      replicas: null,
      replicaCpuMillicores: 500,
      replicaMemoryGb: 0.5,
      concurrency: null,
    });
  });
});

describe('ApiClient: answers that are not the platform envelope', () => {
  it('an HTML 404 from the gateway is API_NOT_FOUND naming the route', async () => {
    const h = await harness([text(404, '<html><body>404 Not Found</body></html>')]);
    const err = await failure(h.client.scalePipe(REF, { replicas: 2 }));
    expect(err.code).toBe('API_NOT_FOUND');
    expect(err.status).toBe(404);
    expect(err.message).toContain(
      `no such route: PATCH /v1/organizations/${ORG}/services/${SVC}/pipes/${PIPE}/scaling`,
    );
    expect(h.server.requests).toHaveLength(1);
  });

  it.each([
    ['an HTML page', text(200, '<html>maintenance</html>'), 'not JSON (text/html'],
    ['truncated JSON', text(200, '{"status":200,"requestId":"', 'application/json'), 'not JSON (application/json'],
    ['an empty body', text(200, '', 'application/json'), 'not JSON (empty body)'],
  ])('%s on a 200 is API_BAD_RESPONSE and is not retried', async (_name, responder, message) => {
    const h = await harness([responder]);
    const err = await failure(h.client.listServices(ORG));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.message).toContain('listServices: HTTP 200 answer is ' + message);
    expect(h.server.requests).toHaveLength(1);
  });

  it('a 200 whose result does not fit the schema names the operation and the field path', async () => {
    const bad = { ...pipe(), id: 42 };
    const h = await harness([ok(bad)]);
    const err = await failure(h.client.scalePipe(REF, {}));
    expect(err.code).toBe('API_BAD_RESPONSE');
    expect(err.message).toMatch(/^scalePipe: response does not fit the schema at result\.id: /);
    expect(err.requestId).toBe(REQ_ID);
  });

  it('names nested array paths too', async () => {
    const h = await harness([
      ok([
        { id: SVC, name: 'a' },
        { id: 'not-a-uuid', name: 'b' },
      ]),
    ]);
    const err = await failure(h.client.listServices(ORG));
    expect(err.message).toContain('at result[1].id');
  });

  it('a 502 with an HTML body is API_SERVER_ERROR and retried', async () => {
    const h = await harness([text(502, '<html>bad gateway</html>'), ok([])]);
    await expect(h.client.listServices(ORG)).resolves.toMatchObject({ result: [] });
    expect(h.events.retry).toEqual([{ operation: 'listServices', code: 'API_SERVER_ERROR', attempt: 1, delayMs: 125 }]);
  });
});

describe('ApiClient: platform errors', () => {
  it.each([
    [400, 'BAD_REQUEST: replicas must be between 1 and 10', 'API_BAD_REQUEST'],
    [401, 'UNAUTHORIZED: invalid API key', 'API_UNAUTHORIZED'],
    [403, 'FORBIDDEN: key belongs to another organization', 'API_FORBIDDEN'],
    [404, 'NOT_FOUND: Unknown pipe', 'API_NOT_FOUND'],
    [424, 'FAILED_DEPENDENCY: service is not running. Current state: idle', 'API_FAILED_DEPENDENCY'],
  ] as const)('%i carries the platform text and requestId, and is never retried', async (status, error, code) => {
    const h = await harness([platformError(status, error)]);
    const err = await failure(h.client.scalePipe(REF, { replicas: 11 }));
    expect(err).toMatchObject({
      code,
      status,
      platformError: error,
      requestId: REQ_ID,
      operation: 'scalePipe',
      attempts: 1,
    });
    expect(err.message).toBe(`scalePipe: ${error}`);
    expect(h.server.requests).toHaveLength(1);
    expect(h.events.request).toEqual([expect.objectContaining({ status, code, attempt: 1, requestId: REQ_ID })]);
  });
});

describe('ApiClient: retries', () => {
  const tooMany = (reset?: string): Responder =>
    json(
      429,
      { error: 'TOO_MANY_REQUESTS' },
      {
        'x-ratelimit-limit': '10',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-policy': '10;w=10;comment="fixed window"',
        ...(reset === undefined ? {} : { 'x-ratelimit-reset': reset }),
      },
    );

  it('a 429 waits X-RateLimit-Reset, then succeeds', async () => {
    const h = await harness([tooMany('3.42'), ok(pipe())]);
    await expect(h.client.scalePipe(REF, { replicas: 2 })).resolves.toMatchObject({ status: 200 });
    expect(h.sleeps).toEqual([3420]);
    expect(h.events.rateLimited).toEqual([{ operation: 'scalePipe', resetSeconds: 3.42 }]);
    expect(h.events.retry).toEqual([{ operation: 'scalePipe', code: 'API_RATE_LIMITED', attempt: 1, delayMs: 3420 }]);
  });

  it('a 429 without X-RateLimit-Reset waits one second', async () => {
    const h = await harness([tooMany(), ok([])]);
    await h.client.listServices(ORG);
    expect(h.sleeps).toEqual([1000]);
  });

  it('retry: false makes one attempt and throws the 429 with retryAfterSeconds', async () => {
    const h = await harness([tooMany('7.5'), ok(pipe())]);
    const err = await failure(h.client.scalePipe(REF, { replicas: 2 }, { retry: false }));
    expect(err).toMatchObject({
      code: 'API_RATE_LIMITED',
      status: 429,
      retryAfterSeconds: 7.5,
      platformError: 'TOO_MANY_REQUESTS',
      attempts: 1,
    });
    expect(h.server.requests).toHaveLength(1);
    expect(h.sleeps).toEqual([]);
  });

  it('retry: false on the client applies to every call', async () => {
    const h = await harness([platformError(500, 'INTERNAL_SERVER_ERROR: boom'), ok([])], { retry: false });
    expect((await failure(h.client.listServices(ORG))).code).toBe('API_SERVER_ERROR');
    expect(h.server.requests).toHaveLength(1);
  });

  it('5xx back off exponentially with full jitter and keep one Idempotency-Key', async () => {
    const h = await harness([
      platformError(500, 'INTERNAL_SERVER_ERROR: a'),
      platformError(503, 'SERVICE_UNAVAILABLE: b'),
      ok(pipe()),
    ]);
    await h.client.scalePipe(REF, { replicas: 4 });
    expect(h.sleeps).toEqual([125, 250]); // random 0.5 x 250 ms x 2^(attempt-1)
    const keys = h.server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(h.events.request.map((e) => [e.attempt, e.status, e.code])).toEqual([
      [1, 500, 'API_SERVER_ERROR'],
      [2, 503, 'API_SERVER_ERROR'],
      [3, 200, undefined],
    ]);
  });

  it("uses the caller's idempotency key when given", async () => {
    const h = await harness([platformError(500, 'INTERNAL_SERVER_ERROR: a'), ok(pipe())]);
    await h.client.scalePipe(REF, { replicas: 4 }, { idempotencyKey: 'change-17' });
    expect(h.server.requests.map((r) => r.headers['idempotency-key'])).toEqual(['change-17', 'change-17']);
  });

  it('a dropped connection is retried to success', async () => {
    const h = await harness([reset, ok(pipe())]);
    await expect(h.client.scalePipe(REF, { replicas: 2 })).resolves.toMatchObject({ status: 200 });
    expect(h.events.retry[0]?.code).toBe('API_NETWORK');
    expect(h.events.request[0]).toMatchObject({ status: null, code: 'API_NETWORK', attempt: 1 });
  });

  it('gives up after maxAttempts with the last error and the attempt count', async () => {
    const h = await harness([platformError(500, 'INTERNAL_SERVER_ERROR: down')], { retry: { maxAttempts: 3 } });
    const err = await failure(h.client.listServices(ORG));
    expect(err).toMatchObject({ code: 'API_SERVER_ERROR', attempts: 3, platformError: 'INTERNAL_SERVER_ERROR: down' });
    expect(h.server.requests).toHaveLength(3);
  });

  it('gives up when the next wait would pass maxElapsedMs', async () => {
    let t = 0;
    const h = await harness([tooMany('8')], {
      now: () => t,
      sleep: async (ms) => {
        t += ms;
      },
      retry: { maxElapsedMs: 20_000, maxAttempts: 10 },
    });
    const err = await failure(h.client.listServices(ORG));
    expect(err.code).toBe('API_RATE_LIMITED');
    expect(h.server.requests).toHaveLength(3); // waits 8 s twice; a third wait would end at 24 s
  });

  it('does not repeat a create after an ambiguous failure, but does after a 429', async () => {
    const body = { name: 'x', tiles: [] };
    const ref = { organizationId: ORG, serviceId: SVC };
    const h = await harness([platformError(500, 'INTERNAL_SERVER_ERROR: a'), ok({})]);
    expect((await failure(h.client.createDashboard(ref, body))).code).toBe('API_SERVER_ERROR');
    expect(h.server.requests).toHaveLength(1);
    await h.client.close();
    await h.server.close();

    const h2 = await harness([tooMany('0.5'), platformError(400, 'BAD_REQUEST: name is required')]);
    expect((await failure(h2.client.createDashboard(ref, body))).code).toBe('API_BAD_REQUEST');
    expect(h2.sleeps).toEqual([500]);
  });

  it('stops waiting when the caller aborts', async () => {
    const controller = new AbortController();
    const h = await harness([platformError(500, 'INTERNAL_SERVER_ERROR: a'), ok([])], {
      sleep: async () => {
        controller.abort(new Error('shutting down'));
      },
    });
    await expect(h.client.listServices(ORG, undefined, { signal: controller.signal })).rejects.toThrow('shutting down');
    expect(h.server.requests).toHaveLength(1);
  });
});

describe('ApiClient: cancellation', () => {
  it("an abort during a request rejects with the caller's reason, not an ApiError, and is not retried", async () => {
    const controller = new AbortController();
    const h = await harness([
      (_req) => {
        controller.abort(new Error('operator cancelled'));
      },
    ]);
    await expect(h.client.listServices(ORG, undefined, { signal: controller.signal })).rejects.toThrow(
      'operator cancelled',
    );
    expect(h.server.requests).toHaveLength(1);
    expect(h.events.request).toEqual([]);
  });

  it('leaves no listener on a long-lived caller signal', async () => {
    const controller = new AbortController();
    const h = await harness([platformError(500, 'INTERNAL_SERVER_ERROR: a'), ok([])]);
    for (let i = 0; i < 3; i++) await h.client.listServices(ORG, undefined, { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('ApiClient: timeouts', () => {
  it('slow headers are API_TIMEOUT, per attempt, and retried', async () => {
    const h = await harness([hang, ok([])], { timeoutMs: 150 });
    await expect(h.client.listServices(ORG)).resolves.toMatchObject({ result: [] });
    expect(h.events.request[0]).toMatchObject({ status: null, code: 'API_TIMEOUT' });
  });

  it('a body that stalls is API_TIMEOUT', async () => {
    const h = await harness([stallBody], { timeoutMs: 150, retry: false });
    const err = await failure(h.client.listServices(ORG));
    expect(err.code).toBe('API_TIMEOUT');
    expect(err.message).toBe('listServices: no complete answer within 150 ms');
  });

  it('a refused connection is API_NETWORK', async () => {
    server = await rawServer([ok([])]);
    const url = server.url;
    await server.close();
    server = undefined;
    client = new ApiClient({ baseUrl: url, keyId: 'key-1', keySecret: SECRET, retry: false });
    const err = await failure(client.listServices(ORG));
    expect(err.code).toBe('API_NETWORK');
    expect(err.message).toContain('ECONNREFUSED');
    // nothing was sent: the platform surely did not act on it
    expect({ reached: err.reached, outcomeUnknown: err.outcomeUnknown }).toEqual({
      reached: 'no',
      outcomeUnknown: false,
    });
  });
});

describe('ApiClient: the key secret never leaks', () => {
  const leaks = (x: unknown): boolean => {
    const s = `${inspect(x, { showHidden: true, depth: 20 })} ${JSON.stringify(x) ?? ''}`;
    return s.includes(SECRET) || s.includes(SECRET_B64);
  };

  it.each([
    ['a platform error', [platformError(401, 'UNAUTHORIZED: bad key')]],
    ['a gateway 404', [text(404, '<html/>')]],
    ['a bad response', [ok({ nope: true })]],
    ['a rate limit', [json(429, { error: 'TOO_MANY_REQUESTS' }, { 'x-ratelimit-reset': '1' })]],
    ['a dropped connection', [reset]],
    ['a timeout', [hang]],
  ] as const)('%s: not in the error, its cause, the events or the client', async (_n, script) => {
    const h = await harness([...script], { timeoutMs: 150, retry: { maxAttempts: 2 } });
    const err = await failure(h.client.scalePipe(REF, { replicas: 2 }));
    expect(leaks(err)).toBe(false);
    expect(leaks(err.cause)).toBe(false);
    expect(leaks(h.events)).toBe(false);
    expect(leaks(h.client)).toBe(false);
  });
});
