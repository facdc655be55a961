import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { call, DEMO, demoCloud, expectError, expectOk, op, PIPE, scalingPath, SVC } from './helpers.js';

let cloud: EmbeddedCloud | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

/** A random source that plays back the given draws, then 0.99 (no fault). */
const script =
  (...draws: number[]) =>
  () =>
    draws.shift() ?? 0.99;
const S = { serviceId: SVC.analytics };
const ADMIN = 'admin-token-for-tests';
const bearer = { authorization: `Bearer ${ADMIN}` };

describe('fault injection (deterministic with an injected random)', () => {
  it('picks one failure from stacked probabilities in the order reset, 500, 503, 429', async () => {
    // reset 0.1, 500 0.2, 503 0.3, 429 0.1: draws 0.05 -> reset, 0.15 -> 500, 0.35 -> 503, 0.65 -> 429, 0.75 -> none
    const random = script(0.05, 0.15, 0.35, 0.65, 0.75);
    cloud = await demoCloud({ random, rateLimit: { requests: 100, perMs: 10_000 } });
    cloud.setFaults({ default: { reset: 0.1, error500: 0.2, error503: 0.3, error429: 0.1 } });
    await expect(op(cloud, 'listSources', S)).rejects.toThrow(/socket|closed|other side/i);
    expectError(await op(cloud, 'listSources', S), 500, /^INTERNAL_SERVER_ERROR: /);
    expectError(await op(cloud, 'listSources', S), 503, /^SERVICE_UNAVAILABLE: /);
    const limited = await op(cloud, 'listSources', S);
    expect(limited.status).toBe(429);
    expect(limited.text).toBe('{"error":"TOO_MANY_REQUESTS"}');
    expect(limited.headers['x-ratelimit-policy']).toBe('100;w=10;comment="fixed window"');
    expect(limited.headers['x-ratelimit-reset']).toBeDefined();
    expectOk('listSources', await op(cloud, 'listSources', S));
    const stats = cloud.stats();
    expect(stats.faults).toEqual({ reset: 1, error500: 1, error503: 1, error429: 1 });
    expect(stats.rateLimited).toBe(1);
    // the injected 429 is no 429 of the limiter
    expect(stats.limited).toEqual({});
    expect(stats.limitedRequests).toEqual([]);
    expect(stats.requests.listSources).toEqual({ 200: 1, 429: 1, 500: 1, 503: 1 });
    cloud.resetStats();
    expect(cloud.stats()).toEqual({ requests: {}, rateLimited: 0, limited: {}, limitedRequests: [], faults: {} });
  });

  it('an operation rule replaces the default; other operations keep the default', async () => {
    cloud = await demoCloud({ random: () => 0 });
    cloud.setFaults({ default: { error500: 1 }, scalePipe: {} });
    expectOk('scalePipe', await op(cloud, 'scalePipe', scalingPath(PIPE.orders), { body: {} }));
    expectError(await op(cloud, 'listSources', S), 500, /INTERNAL_SERVER_ERROR/);
  });

  it('a rule naming pipes applies to requests for those pipes only', async () => {
    cloud = await demoCloud({ random: () => 0 });
    cloud.setFaults({ scalePipe: { error503: 1, pipes: [PIPE.orders.toUpperCase()] } });
    expectError(await op(cloud, 'scalePipe', scalingPath(PIPE.orders), { body: {} }), 503, /SERVICE_UNAVAILABLE/);
    expectOk('scalePipe', await op(cloud, 'scalePipe', scalingPath(PIPE.clickstream), { body: {} }));
    expect(cloud.stats().faults).toEqual({ error503: 1 });
  });

  it('adds latency within [minMs, maxMs] with its probability', async () => {
    cloud = await demoCloud({ random: script(0.1, 0.5, 0.9) });
    cloud.setFaults({ listSources: { latency: { probability: 0.5, minMs: 20, maxMs: 40 } } });
    const t0 = performance.now();
    expectOk('listSources', await op(cloud, 'listSources', S));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(29); // 20 + 0.5 * 20
    expectOk('listSources', await op(cloud, 'listSources', S)); // draw 0.9: no latency
    expect(cloud.stats().faults).toEqual({ latency: 1 });
  });

  it('faults come from the fixtures too, and a bad fault config is refused', async () => {
    cloud = await startCloud({
      fixtures: { ...DEMO, faults: { getAlert: { error503: 1 } } },
      rateLimit: false,
      random: () => 0.5,
    });
    expectError(await op(cloud, 'getAlert', { ...S, alertId: '0e0000000000000000000001' }), 503, /SERVICE_UNAVAILABLE/);
    expect(() => cloud!.setFaults({ default: { error500: 2 } })).toThrow(/default\.error500: must be at most 1/);
    expect(() => cloud!.setFaults({ nosuchOp: {} } as never)).toThrow(/nosuchOp/);
  });
});

describe('admin routes (outside /v1, Bearer admin token)', () => {
  it('are 404 (not routed) without an admin token configured', async () => {
    cloud = await demoCloud();
    const a = await call(cloud, 'GET', '/admin/stats', { auth: `Bearer ${ADMIN}` });
    expect(a.status).toBe(404);
    expect(a.json).toBeUndefined();
  });

  it('need the token: 401 without it or with a wrong one', async () => {
    cloud = await demoCloud({ adminToken: ADMIN });
    for (const auth of [
      null,
      'Bearer wrong',
      `Basic ${Buffer.from(`x:${ADMIN}`).toString('base64')}`,
      `Bearer ${ADMIN}x`,
    ]) {
      expectError(await call(cloud, 'GET', '/admin/stats', { auth }), 401, /^UNAUTHORIZED: /);
      expectError(
        await call(cloud, 'PUT', '/admin/faults', { auth, body: { default: { error500: 1 } } }),
        401,
        /^UNAUTHORIZED: /,
      );
    }
    expect((await op(cloud, 'listSources', S)).status).toBe(200);
  });

  it('set faults and the rate limit, read and reset stats', async () => {
    cloud = await demoCloud({ adminToken: ADMIN, random: () => 0 });
    const put = await call(cloud, 'PUT', '/admin/faults', {
      auth: bearer.authorization,
      body: { listSources: { error500: 1 } },
    });
    expect(put.status).toBe(200);
    expect(put.json?.result).toEqual({ listSources: { error500: 1 } });
    expect((await call(cloud, 'GET', '/admin/faults', { auth: bearer.authorization })).json?.result).toEqual({
      listSources: { error500: 1 },
    });
    expectError(await op(cloud, 'listSources', S), 500, /INTERNAL/);
    expectError(
      await call(cloud, 'PUT', '/admin/faults', {
        auth: bearer.authorization,
        body: { listSources: { error500: -1 } },
      }),
      400,
      'BAD_REQUEST: listSources.error500: must be at least 0',
    );

    expect(
      (
        await call(cloud, 'PUT', '/admin/rate-limit', {
          auth: bearer.authorization,
          body: { requests: 1, perMs: 60_000 },
        })
      ).status,
    ).toBe(200);
    await call(cloud, 'PUT', '/admin/faults', { auth: bearer.authorization, body: {} });
    expect((await op(cloud, 'listSources', S)).status).toBe(200);
    expect((await op(cloud, 'listSources', S)).status).toBe(429);
    expectError(
      await call(cloud, 'PUT', '/admin/rate-limit', { auth: bearer.authorization, body: { requests: 0, perMs: 1 } }),
      400,
      'BAD_REQUEST: requests: must be at least 1',
    );
    expect(
      (await call(cloud, 'PUT', '/admin/rate-limit', { auth: bearer.authorization, rawBody: 'false' })).json?.result,
    ).toBe(false);
    expect((await op(cloud, 'listSources', S)).status).toBe(200);

    const stats = await call(cloud, 'GET', '/admin/stats', { auth: bearer.authorization });
    expect(stats.json?.result).toEqual({
      requests: { listSources: { 200: 2, 429: 1, 500: 1 } },
      rateLimited: 1,
      limited: { 'pipescaler-demo-key': 1 },
      limitedRequests: [expect.objectContaining({ keyId: 'pipescaler-demo-key', method: 'GET' })],
      faults: { error500: 1 },
    });
    expect((await call(cloud, 'DELETE', '/admin/stats', { auth: bearer.authorization })).status).toBe(200);
    expect((await call(cloud, 'GET', '/admin/stats', { auth: bearer.authorization })).json?.result).toMatchObject({
      rateLimited: 0,
    });
  });

  it('takes the token from PIPESCALER_CLOUD_ADMIN_TOKEN', async () => {
    process.env.PIPESCALER_CLOUD_ADMIN_TOKEN = 'from-env';
    try {
      cloud = await demoCloud();
    } finally {
      delete process.env.PIPESCALER_CLOUD_ADMIN_TOKEN;
    }
    const res = await request(`${cloud.url}/admin/stats`, { headers: { authorization: 'Bearer from-env' } });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
  });
});
