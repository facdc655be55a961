// ServiceLists: one services list in flight per organization; the turns that wait for it spend no
// request; every service's state is stored, only while Redis holds the state the turn read; a failed
// list leaves the state unknown (null).
import { performance } from 'node:perf_hooks';
import { RateLimitError } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/api/index.js';
import { startCloud, type EmbeddedCloud } from '../../../src/cloud/index.js';
import { KeyBudget } from '../../../src/daemon/lanes/budget.js';
import { type DaemonContext } from '../../../src/daemon/work/context.js';
import { DaemonEmitter } from '../../../src/daemon/model/events.js';
import { ServiceLists } from '../../../src/daemon/work/service-lists.js';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import type { PipeConfig } from '../../../src/policy/types.js';
import { cleanupPrefix, collect, DEMO, demoPipe, REDIS_URL, uniquePrefix } from '../helpers.js';
import { stateOfMarker } from '../../../src/daemon/store/redis-guard.js';
import { silentLogger } from '../../../src/daemon/model/logger.js';
import { type KeyLane } from '../../../src/daemon/lanes/lane.js';
import { refuses } from '../../../src/daemon/lifecycle/service-state.js';

const prefix = uniquePrefix('service-lists');
const redis = new Redis(REDIS_URL);
const store = new StateStore(redis, prefix);
const NOW = Date.parse('2026-11-23T10:00:00Z');
const IDLE_SERVICE = 'a1000000-0000-4000-8000-000000000003';
let cloud: EmbeddedCloud;
let client: ApiClient;

const config = {
  evaluate: { reconcileMs: 600_000 },
  pipes: [demoPipe('orders-events', 'streams'), { ...demoPipe('nightly-s3', 'objects'), serviceId: DEMO.staging }],
};
const ctx = {
  store,
  emitter: new DaemonEmitter(),
  logger: silentLogger,
  now: () => NOW,
  config: () => config,
} as unknown as DaemonContext;
const budget = new KeyBudget(redis, `${prefix}:budget`, { requests: 1000, perMs: 1000 });
const lane = () => ({ keyName: 'default', keyId: DEMO.keyId, client, budget }) as unknown as KeyLane;
const listed = () => Object.values(cloud.stats().requests.listServices ?? {}).reduce((a, b) => a + b, 0);
const pipeOn = (serviceId: string): PipeConfig => ({ ...demoPipe('orders-events', 'streams'), serviceId });
/** The marker a daemon keeps (redis-guard.ts), and the state a turn's snapshot of it names. */
const MARKER = JSON.stringify({ since: NOW - 3_600_000 });
const STATE = stateOfMarker(MARKER);

beforeAll(async () => {
  await redis.ping();
});
beforeEach(async () => {
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  client = new ApiClient({ baseUrl: cloud.url, keyId: DEMO.keyId, keySecret: DEMO.keySecret, retry: false });
  // a key whose last window ended long ago: known, so its next take opens a window
  await redis.hset(budget.key, 'end', 0);
  await redis.set(store.keys.marker, MARKER);
});
afterEach(async () => {
  await client.close();
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});
afterAll(async () => {
  redis.disconnect();
});

describe('ServiceLists', () => {
  it('turns of one organization at once: one request, the others wait for it; every state is stored', async () => {
    const lists = new ServiceLists(ctx);
    const [a, b, c] = await Promise.all([
      lists.read(pipeOn(DEMO.analytics), lane(), STATE),
      lists.read(pipeOn(IDLE_SERVICE), lane(), STATE),
      lists.read(pipeOn(DEMO.staging), lane(), STATE),
    ]);
    expect(listed()).toBe(1);
    expect([a.requested, b.requested, c.requested]).toEqual([true, false, false]);
    expect(a.state).toBe('running');
    expect(b.state).toBe('idle');
    expect(refuses(b.state)).toBe(true);
    expect(refuses(a.state)).toBe(false);
    const { service } = await store.snapshot('any', {
      organizationId: DEMO.org,
      serviceId: IDLE_SERVICE.toUpperCase(),
    });
    expect(service).toEqual({ state: 'idle', at: NOW });
  });

  it('a list whose unit expired before its write (the process busy after the mark): not sent, counted, the turn waits its turn', async () => {
    // the budget's monotonic clock jumps a minute right after the mark, as a stalled process sees it
    let jump = 0;
    const late = new KeyBudget(redis, budget.key, { requests: 1000, perMs: 1000 }, () => performance.now() + jump);
    const send = late.send.bind(late);
    late.send = async (...args) => {
      const unit = await send(...args);
      jump = 60_000;
      return unit;
    };
    const expired = collect(ctx.emitter, 'budget:unit-expired');
    const queue = { rateLimit: async () => {}, toKey: (s: string) => `${prefix}:q:${s}` };
    const onLate = { ...lane(), budget: late, queue } as unknown as KeyLane;
    await expect(new ServiceLists(ctx).read(pipeOn(IDLE_SERVICE), onLate, STATE)).rejects.toBeInstanceOf(
      RateLimitError,
    );
    expect(listed()).toBe(0);
    expect(expired).toEqual([{ key: 'default' }]);
  });

  it('a list answered after Redis lost the state the turn read: for that turn only, not stored', async () => {
    // Redis loses the daemon's state as the list goes out: emptied, then a tick's new marker
    const after = JSON.stringify({ since: NOW, lostAt: NOW });
    const losing = new KeyBudget(redis, budget.key, { requests: 1000, perMs: 1000 });
    const send = losing.send.bind(losing);
    losing.send = async (...args) => {
      const unit = await send(...args);
      await redis.del(store.keys.marker);
      await redis.set(store.keys.marker, after);
      return unit;
    };
    const onLoss = { ...lane(), budget: losing } as unknown as KeyLane;
    const answered = await new ServiceLists(ctx).read(pipeOn(IDLE_SERVICE), onLoss, STATE);
    expect(answered).toEqual({ requested: true, state: 'idle' });
    expect(listed()).toBe(1);
    expect(await redis.exists(store.keys.services(DEMO.org))).toBe(0);
    // a turn of the state Redis holds now stores it
    await new ServiceLists(ctx).read(pipeOn(IDLE_SERVICE), lane(), stateOfMarker(after));
    expect((await store.service({ organizationId: DEMO.org, serviceId: IDLE_SERVICE }))?.state).toBe('idle');
  });

  it('a failed list (500) stores the service as unknown, which does not hold a change', async () => {
    cloud.setFaults({ listServices: { error500: 1 } });
    const got = await new ServiceLists(ctx).read(pipeOn(IDLE_SERVICE), lane(), STATE);
    expect(got).toEqual({ requested: true, state: null });
    expect(refuses(got.state)).toBe(false);
    expect((await store.snapshot('any', { organizationId: DEMO.org, serviceId: IDLE_SERVICE })).service).toEqual({
      state: null,
      at: NOW,
    });
    // Every configured service of the organization is unknown now, so none of them asks again.
    expect((await store.snapshot('any', { organizationId: DEMO.org, serviceId: DEMO.staging })).service).toEqual({
      state: null,
      at: NOW,
    });
  });
});
