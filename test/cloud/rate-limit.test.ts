import { afterEach, describe, expect, it } from 'vitest';
import { RateLimitBody } from '../../src/api/index.js';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { call, DEMO, demoCloud, expectError, expectOk, op, ORG, OTHER_AUTH, PIPE, SVC } from './helpers.js';

let cloud: EmbeddedCloud | undefined;
afterEach(async () => {
  await cloud?.close();
  cloud = undefined;
});

let clock = 0;
const now = () => clock;
const S = { serviceId: SVC.analytics };

describe('rate limit: fixed window per API key', () => {
  it('answers 429 with exactly {"error":"TOO_MANY_REQUESTS"} and the headers past 10 in 10 s, then resets', async () => {
    clock = 1_000_000;
    cloud = await startCloud({ fixtures: DEMO, now }); // the fixtures' 10 per 10s
    for (let i = 1; i <= 10; i++) {
      const a = await op(cloud, 'listSources', S);
      expectOk('listSources', a);
      expect(a.headers['x-ratelimit-limit']).toBe('10');
      expect(a.headers['x-ratelimit-remaining']).toBe(String(10 - i));
      expect(a.headers['x-ratelimit-policy']).toBe('10;w=10;comment="fixed window"');
      clock += 100;
    }
    clock = 1_000_000 + 6580;
    const limited = await op(cloud, 'listSources', S);
    expect(limited.status).toBe(429);
    expect(limited.text).toBe('{"error":"TOO_MANY_REQUESTS"}');
    expect(RateLimitBody.safeParse(limited.json).success).toBe(true);
    expect(limited.headers).toMatchObject({
      'x-ratelimit-limit': '10',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '3.42',
      'x-ratelimit-policy': '10;w=10;comment="fixed window"',
    });
    expect(limited.headers['retry-after']).toBeUndefined();
    // Another key has its own window.
    expect((await op(cloud, 'listServices', {}, { auth: OTHER_AUTH })).status).toBe(403);
    clock = 1_000_000 + 9999;
    expect((await op(cloud, 'listSources', S)).status).toBe(429);
    clock = 1_000_000 + 10_000;
    const fresh = await op(cloud, 'listSources', S);
    expectOk('listSources', fresh);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('9');
    expect(fresh.headers['x-ratelimit-reset']).toBe('10');
    expect(cloud.stats().rateLimited).toBe(2);
    expect(cloud.stats().requests.listSources).toEqual({ 200: 11, 429: 2 });
  });

  it('records each 429 of the limiter: key id, instant, window start, method, path and request id; not an injected one', async () => {
    clock = 5_000;
    cloud = await startCloud({ fixtures: DEMO, now, rateLimit: { requests: 2, perMs: 1_000 } });
    expectOk('listSources', await op(cloud, 'listSources', S));
    clock = 5_400;
    const scaling = `/v1/organizations/${ORG}/services/${SVC.analytics}/pipes/${PIPE.orders}/scaling`;
    expect((await call(cloud, 'PATCH', scaling, { body: {} })).status).toBe(200);
    clock = 5_900;
    const refused = await call(cloud, 'GET', `/v1/organizations/${ORG}/services?x=1`);
    expect(refused.status).toBe(429);
    // as the platform's: no request id on the wire, in the header or the body
    expect(refused.headers['x-request-id']).toBeUndefined();
    expect(refused.text).toBe('{"error":"TOO_MANY_REQUESTS"}');
    clock = 6_000; // a new window; an injected 429 is a fault, not the limiter's
    cloud.setFaults({ default: { error429: 1 } });
    expect((await op(cloud, 'listSources', S)).status).toBe(429);
    const stats = cloud.stats();
    expect(stats.limited).toEqual({ 'pipescaler-demo-key': 1 });
    expect(stats.faults).toEqual({ error429: 1 });
    expect(stats.limitedRequests).toEqual([
      {
        keyId: 'pipescaler-demo-key',
        at: 5_900,
        windowStart: 5_000,
        method: 'GET',
        path: `/v1/organizations/${ORG}/services`,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
    ]);
    cloud.resetStats();
    expect(cloud.stats().limitedRequests).toEqual([]);
  });

  it('counts only authenticated requests, and 401 comes before 429', async () => {
    clock = 0;
    cloud = await startCloud({ fixtures: DEMO, now, rateLimit: { requests: 1, perMs: 1000 } });
    for (let i = 0; i < 3; i++) expectError(await op(cloud, 'listSources', S, { auth: null }), 401, /^UNAUTHORIZED/);
    expect((await op(cloud, 'listSources', S)).status).toBe(200);
    expect((await op(cloud, 'listSources', S)).status).toBe(429);
    expectError(await op(cloud, 'listSources', S, { auth: null }), 401, /^UNAUTHORIZED/);
  });

  it('uses the configured numbers in the headers; setRateLimit changes it at run time; false disables it', async () => {
    clock = 0;
    cloud = await startCloud({ fixtures: { ...DEMO, rateLimit: { requests: 3, per: '2s' } }, now });
    const a = await op(cloud, 'listSources', S);
    expect(a.headers['x-ratelimit-policy']).toBe('3;w=2;comment="fixed window"');
    expect(a.headers['x-ratelimit-reset']).toBe('2');
    cloud.setRateLimit({ requests: 1, perMs: 500 });
    expect((await op(cloud, 'listSources', S)).status).toBe(200);
    const b = await op(cloud, 'listSources', S);
    expect(b.status).toBe(429);
    expect(b.headers['x-ratelimit-policy']).toBe('1;w=0.5;comment="fixed window"');
    cloud.setRateLimit(false);
    for (let i = 0; i < 20; i++) expect((await op(cloud, 'listSources', S)).status).toBe(200);
    expect(b.headers).toHaveProperty('x-ratelimit-limit');
    expect((await op(cloud, 'listSources', S)).headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('fixtures rateLimit: false turns it off; options override fixtures', async () => {
    cloud = await startCloud({ fixtures: { ...DEMO, rateLimit: false } });
    for (let i = 0; i < 15; i++) expect((await op(cloud, 'listSources', S)).status).toBe(200);
    await cloud.close();
    cloud = await demoCloud({ rateLimit: { requests: 2, perMs: 60_000 } });
    await op(cloud, 'listSources', S);
    await op(cloud, 'listSources', S);
    expect((await op(cloud, 'listSources', S)).status).toBe(429);
  });
});
