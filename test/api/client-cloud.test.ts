// Every endpoint through the client against the embedded cloud over real HTTP: round trips that
// the response schemas validate, and each error path the platform has.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiClient,
  ApiError,
  ENDPOINTS,
  type ApiClientEvents,
  type ClientOptions,
  type ScalingRequest,
} from '../../src/api/index.js';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import {
  CLOUD_FIXTURES,
  DEMO_KEY,
  demoAlert,
  demoDashboard,
  ENDPOINT_READY,
  ORG,
  OTHER_KEY,
  OTHER_ORG,
  PIPES,
  scriptedRandom,
  SERVICES,
  SOURCES,
  UNKNOWN_OBJECT_ID,
  UNKNOWN_UUID,
  UUID_V4,
} from './demo.js';

const script = scriptedRandom();
let cloud: EmbeddedCloud;
let client: ApiClient;
const requests: ApiClientEvents['request'][] = [];
const sleeps: number[] = [];
const SVC = { organizationId: ORG, serviceId: SERVICES.analyticsProd };
const pipeRef = (pipeId: string, serviceId: string = SERVICES.analyticsProd) => ({
  organizationId: ORG,
  serviceId,
  pipeId,
});

function makeClient(url: string, over: Partial<ClientOptions> = {}): ApiClient {
  return new ApiClient({
    baseUrl: url,
    ...DEMO_KEY,
    timeoutMs: 5_000,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...over,
  });
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  const e = err as ApiError;
  // Every platform error body carries a requestId (the 429's and the gateway's 404 do not).
  if (e.platformError !== undefined && e.status !== 429) expect(e.requestId).toMatch(UUID_V4);
  return e;
}

beforeAll(async () => {
  cloud = await startCloud({ fixtures: CLOUD_FIXTURES, port: 0, rateLimit: false, random: script.random });
  client = makeClient(cloud.url);
  client.events.on('request', (e) => requests.push(e));
});
afterAll(async () => {
  await client.close();
  await cloud.close();
});
afterEach(() => {
  cloud.setFaults({});
  script.queue.length = 0;
  sleeps.length = 0;
});

describe('round trips through the client (every response validated by its schema)', () => {
  it('lists the services of the organization', async () => {
    const res = await client.listServices(ORG);
    expect(res.status).toBe(200);
    expect(res.requestId).toMatch(UUID_V4);
    expect(res.result.map((s) => s.name).sort()).toEqual(['analytics-prod', 'archive', 'ingest-staging']);
    expect(
      ENDPOINTS.listServices.response.safeParse({ status: 200, requestId: res.requestId, result: res.result }).success,
    ).toBe(true);
  });

  it('scales a stream pipe and reads it back with an empty body', async () => {
    const change: ScalingRequest = { replicas: 3, replicaCpuMillicores: 750, replicaMemoryGb: 3 };
    const { result } = await client.scalePipe(pipeRef(PIPES.ordersEvents), change);
    expect(result).toMatchObject({ id: PIPES.ordersEvents, name: 'orders-events', state: 'Running', scaling: change });
    const again = await client.scalePipe(pipeRef(PIPES.ordersEvents), {});
    expect(again.result.scaling).toMatchObject(change);
  });

  it('scales an object-storage pipe by concurrency, 0 included', async () => {
    const { result } = await client.scalePipe(pipeRef(PIPES.nightlyS3), { concurrency: 0 });
    expect(result.scaling.concurrency).toBe(0);
    expect(result.source.objectStorage).toBeTruthy();
  });

  it('reads a reverse private endpoint', async () => {
    const { result } = await client.getReversePrivateEndpoint({ ...SVC, reversePrivateEndpointId: ENDPOINT_READY });
    expect(result).toMatchObject({
      id: ENDPOINT_READY,
      type: 'MSK_MULTI_VPC',
      mskAuthentication: 'SASL_IAM',
      status: 'Ready',
    });
  });

  it('creates, lists, gets, replaces and deletes a dashboard', async () => {
    const created = (await client.createDashboard(SVC, demoDashboard())).result;
    expect(created).toMatchObject({ name: 'Pipes overview', tags: ['pipes'] });
    expect(created.tiles.map((t) => t.id)).toEqual(['lag', 'rows']);
    const ref = { ...SVC, dashboardId: created.id };
    expect((await client.listDashboards(SVC)).result.map((d) => d.id)).toContain(created.id);
    expect((await client.getDashboard(ref)).result).toEqual(created);
    const updated = (await client.updateDashboard(ref, { ...demoDashboard('Renamed'), tiles: [] })).result;
    expect(updated).toMatchObject({ id: created.id, name: 'Renamed', tiles: [] });
    const deleted = await client.deleteDashboard(ref);
    expect(deleted).toEqual({ status: 200, requestId: expect.stringMatching(UUID_V4) });
    expect((await failure(client.getDashboard(ref))).code).toBe('API_NOT_FOUND');
  });

  it('creates, lists, gets, replaces and deletes an alert on a dashboard tile', async () => {
    const dashboard = (await client.createDashboard(SVC, demoDashboard())).result;
    const created = (await client.createAlert(SVC, demoAlert(dashboard.id))).result;
    expect(created).toMatchObject({
      dashboardId: dashboard.id,
      tileId: 'lag',
      threshold: 1000,
      channel: { type: 'webhook' },
    });
    expect(['ALERT', 'OK', 'INSUFFICIENT_DATA', 'DISABLED', 'PENDING']).toContain(created.state);
    const ref = { ...SVC, alertId: created.id };
    expect((await client.listAlerts(SVC)).result.map((a) => a.id)).toContain(created.id);
    expect((await client.getAlert(ref)).result).toEqual(created);
    expect((await client.updateAlert(ref, demoAlert(dashboard.id, 5000))).result.threshold).toBe(5000);
    expect((await client.deleteAlert(ref)).status).toBe(200);
    expect((await failure(client.getAlert(ref))).code).toBe('API_NOT_FOUND');
  });

  it('lists the data sources', async () => {
    const { result } = await client.listSources(SVC);
    expect(result.map((s) => [s.id, s.name, s.kind])).toEqual([
      [SOURCES[0], 'Logs', 'log'],
      [SOURCES[1], 'Traces', 'trace'],
    ]);
  });

  it('saw only successful, validated answers so far', () => {
    const failures = requests.filter((r) => r.code !== undefined && r.code !== 'API_NOT_FOUND');
    expect(failures).toEqual([]);
  });
});

describe('the tag filter of the services list', () => {
  const names = async (filter: string[]) => (await client.listServices(ORG, filter)).result.map((s) => s.name).sort();

  it('requires every filter to match', async () => {
    expect(await names(['tag:Environment=Production', 'tag:isActive'])).toEqual(['analytics-prod']);
    expect(await names(['tag:team=data'])).toEqual(['analytics-prod', 'ingest-staging']);
  });
  it('matches a key alone whatever its value', async () => {
    expect(await names(['tag:tier'])).toEqual(['archive']);
  });
  it('answers an empty list when nothing matches', async () => {
    expect(await names(['tag:Environment=Nowhere'])).toEqual([]);
  });
  it.each(['Environment=Production', 'tag:', 'tag:bad key'])(
    "refuses the malformed filter %j with the platform's 400",
    async (f) => {
      const err = await failure(client.listServices(ORG, [f]));
      expect(err).toMatchObject({ code: 'API_BAD_REQUEST', status: 400, attempts: 1 });
      expect(err.platformError).toMatch(/^BAD_REQUEST: /);
    },
  );
});

describe('errors from the embedded cloud', () => {
  it('401 for a wrong secret and for an unknown key id', async () => {
    for (const creds of [
      { ...DEMO_KEY, keySecret: 'wrong' },
      { keyId: 'nobody', keySecret: 'x' },
    ]) {
      const c = makeClient(cloud.url, creds);
      const err = await failure(c.listServices(ORG));
      expect(err).toMatchObject({ code: 'API_UNAUTHORIZED', status: 401, attempts: 1 });
      expect(err.platformError).toMatch(/^UNAUTHORIZED: /);
      await c.close();
    }
  });

  it('403 for a key of another organization', async () => {
    const c = makeClient(cloud.url, OTHER_KEY);
    const err = await failure(c.scalePipe(pipeRef(PIPES.ordersEvents), { replicas: 2 }));
    expect(err).toMatchObject({ code: 'API_FORBIDDEN', status: 403 });
    expect(err.platformError).toMatch(/^FORBIDDEN: /);
    expect((await c.listServices(OTHER_ORG)).status).toBe(200);
    await c.close();
  });

  const outOfRange: [keyof ScalingRequest, number, string, string][] = [
    ['replicas', 0, 'replicas must be between 1 and 10', PIPES.ordersEvents],
    ['replicas', 11, 'replicas must be between 1 and 10', PIPES.ordersEvents],
    ['replicas', 2.5, 'replicas must be an integer', PIPES.ordersEvents],
    ['concurrency', -1, 'concurrency must be between 0 and 34', PIPES.nightlyS3],
    ['concurrency', 35, 'concurrency must be between 0 and 34', PIPES.nightlyS3],
    ['replicaCpuMillicores', 124, 'replicaCpuMillicores must be between 125 and 2000', PIPES.ordersEvents],
    ['replicaCpuMillicores', 2001, 'replicaCpuMillicores must be between 125 and 2000', PIPES.ordersEvents],
    ['replicaMemoryGb', 0.49, 'replicaMemoryGb must be between 0.5 and 8', PIPES.ordersEvents],
    ['replicaMemoryGb', 8.5, 'replicaMemoryGb must be between 0.5 and 8', PIPES.ordersEvents],
  ];
  it.each(outOfRange)('400 for %s = %s, passed through to the platform', async (field, value, text, pipeId) => {
    const err = await failure(client.scalePipe(pipeRef(pipeId), { [field]: value }));
    expect(err).toMatchObject({ code: 'API_BAD_REQUEST', status: 400, attempts: 1 });
    expect(err.platformError).toBe(`BAD_REQUEST: ${text}`);
  });

  it('400 for scaling a database pipe', async () => {
    const err = await failure(client.scalePipe(pipeRef(PIPES.usersCdc), { replicas: 2 }));
    expect(err.code).toBe('API_BAD_REQUEST');
    expect(err.platformError).toMatch(/^BAD_REQUEST: .*[Dd]atabase/);
  });

  it('424 for a pipe of an idle service', async () => {
    const err = await failure(client.scalePipe(pipeRef(PIPES.archiveEvents, SERVICES.archive), { replicas: 2 }));
    expect(err).toMatchObject({ code: 'API_FAILED_DEPENDENCY', status: 424 });
    expect(err.platformError).toMatch(/^FAILED_DEPENDENCY: .*idle/);
  });

  it('403 for an organization the key does not belong to, known or not', async () => {
    for (const org of [OTHER_ORG, UNKNOWN_UUID]) {
      const err = await failure(client.listServices(org));
      expect(err).toMatchObject({ code: 'API_FORBIDDEN', status: 403 });
    }
  });

  const unknown: [string, () => Promise<unknown>][] = [
    ['service', () => client.listSources({ organizationId: ORG, serviceId: UNKNOWN_UUID })],
    ['pipe', () => client.scalePipe(pipeRef(UNKNOWN_UUID), { replicas: 2 })],
    ['endpoint', () => client.getReversePrivateEndpoint({ ...SVC, reversePrivateEndpointId: UNKNOWN_UUID })],
    ['dashboard', () => client.getDashboard({ ...SVC, dashboardId: UNKNOWN_OBJECT_ID })],
    ['alert', () => client.deleteAlert({ ...SVC, alertId: UNKNOWN_OBJECT_ID })],
  ];
  it.each(unknown)('404 for an unknown %s', async (what, call) => {
    const err = await failure(call());
    expect(err).toMatchObject({ code: 'API_NOT_FOUND', status: 404, attempts: 1 });
    expect(err.platformError).toMatch(/^NOT_FOUND: /);
    expect(err.platformError?.toLowerCase()).toContain(what === 'endpoint' ? 'endpoint' : what);
  });

  it('an unrouted path is API_NOT_FOUND naming the route', async () => {
    const c = makeClient(`${cloud.url}/not-the-api`);
    const err = await failure(c.listServices(ORG));
    expect(err.code).toBe('API_NOT_FOUND');
    expect(err.message).toContain(`no such route: GET /not-the-api/v1/organizations/${ORG}/services`);
    await c.close();
  });

  it('a 500 and a 503 are retried to success', async () => {
    cloud.setFaults({ listSources: { error500: 0.3, error503: 0.3 } });
    script.queue.push(0.1, 0.5); // first draw: 500; second: 503; then no fault
    const retries: ApiClientEvents['retry'][] = [];
    const onRetry = (e: ApiClientEvents['retry']) => retries.push(e);
    client.events.on('retry', onRetry);
    const { result } = await client.listSources(SVC);
    client.events.off('retry', onRetry);
    expect(result).toHaveLength(2);
    expect(retries.map((r) => r.code)).toEqual(['API_SERVER_ERROR', 'API_SERVER_ERROR']);
    expect(sleeps).toEqual([125, 250]);
  });

  it('a connection reset is retried to success', async () => {
    cloud.setFaults({ scalePipe: { reset: 0.5 } });
    script.queue.push(0.1);
    const { result } = await client.scalePipe(pipeRef(PIPES.clickstream), { replicas: 2 });
    expect(result.scaling.replicas).toBe(2);
    expect(sleeps).toHaveLength(1);
  });

  it('latency beyond the per-attempt timeout is API_TIMEOUT', async () => {
    cloud.setFaults({ listSources: { latency: { probability: 1, minMs: 600, maxMs: 600 } } });
    const c = makeClient(cloud.url, { timeoutMs: 150 });
    const err = await failure(c.listSources(SVC, { retry: false }));
    expect(err).toMatchObject({ code: 'API_TIMEOUT', attempts: 1 });
    await c.close();
  });
});

describe('the rate limit of the embedded cloud', () => {
  let limited: EmbeddedCloud;
  let clock = Date.UTC(2026, 10, 22, 2, 0, 0);
  beforeAll(async () => {
    limited = await startCloud({
      fixtures: CLOUD_FIXTURES,
      port: 0,
      rateLimit: { requests: 2, perMs: 10_000 },
      now: () => clock,
    });
  });
  afterAll(async () => {
    await limited.close();
  });

  it('a 429 makes the client wait X-RateLimit-Reset, then it succeeds', async () => {
    const waits: number[] = [];
    const resets: number[] = [];
    const c = makeClient(limited.url, {
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
    });
    c.events.on('rateLimited', (e) => resets.push(e.resetSeconds));
    await c.listServices(ORG);
    await c.listServices(ORG);
    clock += 3_420;
    expect((await c.listServices(ORG)).status).toBe(200);
    expect(resets).toEqual([6.58]);
    expect(waits).toEqual([6580]);
    await c.close();
  });

  it('retry: false throws the 429 with retryAfterSeconds', async () => {
    clock += 10_000; // a fresh window
    const c = makeClient(limited.url);
    await c.listServices(ORG);
    await c.listServices(ORG);
    const err = await failure(c.listServices(ORG, undefined, { retry: false }));
    expect(err).toMatchObject({
      code: 'API_RATE_LIMITED',
      status: 429,
      platformError: 'TOO_MANY_REQUESTS',
      attempts: 1,
    });
    expect(err.retryAfterSeconds).toBeGreaterThan(0);
    expect(err.retryAfterSeconds).toBeLessThanOrEqual(10);
    await c.close();
  });
});
