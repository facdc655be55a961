// A read answered with another pipe's id (through a proxy that rewrites the id, as a cache or a
// routing fault would) is a failed read for the daemon: nothing of it is stored as this pipe's
// state, the error says API_BAD_RESPONSE, and no change is sent on the strength of it.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, StateStore, type Daemon } from '../../src/daemon/index.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  until,
  policy,
  testConfig,
  uniquePrefix,
} from './helpers.js';
import { tamperProxy, type TamperProxy } from './tamper-proxy.js';

const prefix = uniquePrefix('answer-identity');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const ORDERS = DEMO.pipes['orders-events'];
const OTHER = DEMO.pipes.clickstream;

let cloud: EmbeddedCloud;
let proxy: TamperProxy;
let daemon: Daemon | undefined;

beforeEach(async () => {
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  proxy = await tamperProxy(cloud.url);
});
afterEach(async () => {
  await daemon?.stop({ timeoutMs: 2_000 });
  await proxy.close();
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});
afterAll(() => redis.disconnect());

describe("a read answer carrying another pipe's id", () => {
  it('is refused: no state stored for the pipe, the error is API_BAD_RESPONSE, no change sent', async () => {
    // every answer about orders-events comes back with clickstream's id and 9 replicas
    proxy.tamper = async (req, upstream) => {
      const a = await upstream();
      if (req.method !== 'PATCH' || !req.url.includes(ORDERS)) return a;
      const body = JSON.parse(a.text) as { result: Record<string, unknown> };
      body.result.id = OTHER;
      body.result.scaling = { ...(body.result.scaling as object), replicas: 9 };
      return { ...a, text: JSON.stringify(body) };
    };
    const config = testConfig({
      baseUrl: proxy.url,
      prefix,
      pipes: [demoPipe('orders-events', 'streams')],
      policies: { streams: policy('streams', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
      rateLimit: { requests: 1000, perMs: 2_000 },
    });
    daemon = createDaemon({
      config,
      redis,
      prefix,
      now: () => T0,
      emitter: new DaemonEmitter(),
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    await daemon.start();
    await daemon.tick(T0);
    // the refused read is retried after a back-off (a bad answer backs off like a 5xx), so the
    // queue does not drain: wait for the first refusal to be recorded
    const store = new StateStore(redis, prefix);
    await until(async () => (await store.read('orders-events')).lastError !== null, 20_000, 'the refused read');
    const rec = await store.read('orders-events');
    expect(rec.applied).not.toMatchObject({ replicas: 9 });
    expect(rec.state).toBeNull();
    expect(rec.lastError).toMatchObject({ code: 'API_BAD_RESPONSE' });
    expect(rec.lastError?.message).toContain(`about pipe ${OTHER}`);
    // it was read (an empty body), and nothing was sent on the strength of that answer
    const patches = proxy.seen.filter((r) => r.method === 'PATCH' && r.url.includes(ORDERS));
    expect(patches.length).toBeGreaterThan(0);
    expect(patches.filter((r) => r.body !== '' && r.body !== '{}')).toEqual([]);
  }, 30_000);
});
