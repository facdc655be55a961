import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import {
  ALERT,
  basic,
  call,
  DASHBOARD,
  DEMO,
  demoCloud,
  expectError,
  op,
  ORG,
  PIPE,
  RPE,
  scalingPath,
  SVC,
} from './helpers.js';

let cloud: EmbeddedCloud;
beforeAll(async () => {
  cloud = await demoCloud();
});
afterAll(() => cloud.close());

const UNKNOWN_UUID = 'f0000000-0000-4000-8000-0000000000ff';
const UNKNOWN_OID = 'ffffffffffffffffffffffff';

describe('path ids', () => {
  it.each([
    ['service', 'scalePipe', { serviceId: UNKNOWN_UUID, pipeId: PIPE.orders }, 'NOT_FOUND: Unknown service'],
    ['pipe', 'scalePipe', { serviceId: SVC.analytics, pipeId: UNKNOWN_UUID }, 'NOT_FOUND: Unknown pipe'],
    [
      'pipe of another service',
      'scalePipe',
      { serviceId: SVC.staging, pipeId: PIPE.orders },
      'NOT_FOUND: Unknown pipe',
    ],
    [
      'endpoint',
      'getReversePrivateEndpoint',
      { serviceId: SVC.analytics, reversePrivateEndpointId: UNKNOWN_UUID },
      'NOT_FOUND: Unknown reverse private endpoint',
    ],
    [
      'endpoint of another service',
      'getReversePrivateEndpoint',
      { serviceId: SVC.analytics, reversePrivateEndpointId: RPE.provisioning },
      'NOT_FOUND: Unknown reverse private endpoint',
    ],
    [
      'dashboard',
      'getDashboard',
      { serviceId: SVC.analytics, dashboardId: UNKNOWN_OID },
      'NOT_FOUND: Unknown dashboard',
    ],
    ['alert', 'getAlert', { serviceId: SVC.analytics, alertId: UNKNOWN_OID }, 'NOT_FOUND: Unknown alert'],
    ['service of the stack', 'listSources', { serviceId: UNKNOWN_UUID }, 'NOT_FOUND: Unknown service'],
  ] as const)('an unknown %s is a 404', async (_n, name, params, text) => {
    expectError(await op(cloud, name, params, { body: name === 'scalePipe' ? {} : undefined }), 404, text);
  });

  it('an unknown organization (of a key whose organization has no entry) is a 404', async () => {
    const lost = 'f1000000-0000-4000-8000-000000000001';
    const c = await startCloud({
      fixtures: { ...DEMO, apiKeys: [{ keyId: 'lost', keySecret: 's', organizationId: lost }] },
      rateLimit: false,
    });
    try {
      expectError(
        await call(c, 'GET', `/v1/organizations/${lost}/services`, { auth: basic('lost', 's') }),
        404,
        'NOT_FOUND: Unknown organization',
      );
    } finally {
      await c.close();
    }
  });

  it.each([
    ['organizationId', `/v1/organizations/not-a-uuid/services`],
    ['serviceId', `/v1/organizations/${ORG}/services/123/pipes/${PIPE.orders}/scaling`],
    ['pipeId', `/v1/organizations/${ORG}/services/${SVC.analytics}/pipes/b1000000-0000-4000-8000-00000000000/scaling`],
    ['reversePrivateEndpointId', `/v1/organizations/${ORG}/services/${SVC.analytics}/pipesReversePrivateEndpoints/xyz`],
    ['dashboardId', `/v1/organizations/${ORG}/services/${SVC.analytics}/stack/dashboards/0d000000000000000000000g`],
    ['alertId', `/v1/organizations/${ORG}/services/${SVC.analytics}/stack/alerts/${PIPE.orders}`],
  ])('a malformed %s is a 400 naming it', async (name, path) => {
    const method = path.endsWith('/scaling') ? 'PATCH' : 'GET';
    expectError(
      await call(cloud, method, path, method === 'PATCH' ? { body: {} } : {}),
      400,
      new RegExp(`^BAD_REQUEST: Invalid ${name} `),
    );
  });

  it('ids are found whatever their case', async () => {
    const a = await op(cloud, 'getDashboard', {
      serviceId: SVC.analytics.toUpperCase(),
      dashboardId: DASHBOARD.toUpperCase(),
    });
    expect(a.status).toBe(200);
    expect((await op(cloud, 'getAlert', { serviceId: SVC.analytics, alertId: ALERT })).status).toBe(200);
  });
});

describe('routing and bodies', () => {
  it.each([
    ['GET', '/'],
    ['GET', '/v1'],
    ['GET', `/v1/organizations/${ORG}`],
    ['GET', `/v1/organizations/${ORG}/services/${SVC.analytics}/pipes`],
    ['POST', `/v1/organizations/${ORG}/services/${SVC.analytics}/pipes/${PIPE.orders}/scaling`],
    ['GET', `/v2/organizations/${ORG}/services`],
    ['GET', '/admin/stats'],
  ])('%s %s is not routed: 404 with a non-JSON body, no auth needed', async (method, path) => {
    const a = await call(cloud, method, path, { auth: null });
    expect(a.status).toBe(404);
    expect(a.headers['content-type']).toMatch(/^text\/html/);
    expect(a.text).toContain('404 Not Found');
    expect(a.json).toBeUndefined();
  });

  it('malformed JSON is a 400 in the envelope (after the existence check)', async () => {
    const path = `/v1/organizations/${ORG}/services/${SVC.analytics}/pipes/${PIPE.orders}/scaling`;
    expectError(
      await call(cloud, 'PATCH', path, { rawBody: '{"replicas": 2,' }),
      400,
      /^BAD_REQUEST: Malformed JSON body/,
    );
    const unknown = path.replace(PIPE.orders, 'b1000000-0000-4000-8000-0000000000ff');
    expectError(await call(cloud, 'PATCH', unknown, { rawBody: '{"replicas": 2,' }), 404, 'NOT_FOUND: Unknown pipe');
  });

  it('a body of another content type is a 415 in the envelope', async () => {
    const a = await op(cloud, 'scalePipe', scalingPath(PIPE.orders), {
      rawBody: 'replicas=2',
      contentType: 'application/x-www-form-urlencoded',
    });
    expectError(a, 415, /^UNSUPPORTED_MEDIA_TYPE: Content-Type must be application\/json/);
  });

  it('a body over 1 MB is a 413 in the envelope; just under passes to validation', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024), tiles: [] });
    const a = await op(cloud, 'createDashboard', { serviceId: SVC.analytics }, { rawBody: big });
    expectError(a, 413, /^PAYLOAD_TOO_LARGE: /);
    const under = JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 40), tiles: [] });
    expect(Buffer.byteLength(under)).toBeLessThan(1024 * 1024);
    expectError(
      await op(cloud, 'createDashboard', { serviceId: SVC.analytics }, { rawBody: under }),
      400,
      'BAD_REQUEST: name: must be at most 1024 characters',
    );
  });

  it('a request id comes fresh with every answer, also as a header', async () => {
    const a = await op(cloud, 'listSources', { serviceId: SVC.analytics });
    const b = await op(cloud, 'listSources', { serviceId: SVC.analytics });
    expect(a.json?.requestId).not.toBe(b.json?.requestId);
    expect(a.headers['x-request-id']).toBe(a.json?.requestId);
  });
});
