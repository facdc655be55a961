// KeyChecks: a key with no 2xx for api.checkEvery checks in with one services list, charged to its
// read share (never sent without a unit of it), whose failure or success lands in the API metrics
// the outage alerts read; a busy key never checks. And the daemon runs them on its own.
import { performance } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiClient } from '../../../src/api/index.js';
import { startCloud, type EmbeddedCloud } from '../../../src/cloud/index.js';
import { KeyBudget } from '../../../src/daemon/lanes/budget.js';
import { type DaemonContext } from '../../../src/daemon/work/context.js';
import { createDaemon } from '../../../src/daemon/runtime/daemon.js';
import { DaemonEmitter } from '../../../src/daemon/model/events.js';
import { checkPollMs, DEFAULT_CHECK_EVERY_MS, KeyChecks } from '../../../src/daemon/lanes/key-checks.js';
import { parseConfig } from '../../../src/config/index.js';
import { bindDaemonEvents, checkContactWindowMs, createReadiness, failedChecks } from '../../../src/telemetry/index.js';
import { readPipeStatuses } from '../../../src/daemon/views/status.js';
import { formatStatusText } from '../../../src/cli/status-output.js';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import { bindClientEvents } from '../../../src/telemetry/bind-client-events.js';
import { createMetrics } from '../../../src/telemetry/metrics.js';
import type { Config } from '../../../src/config/types.js';
import {
  cleanupPrefix,
  collect,
  DEMO,
  demoPipe,
  policy,
  REDIS_URL,
  testConfig,
  uniquePrefix,
  waitForEvent,
} from '../helpers.js';
import { silentLogger } from '../../../src/daemon/model/logger.js';
import { type KeyLane } from '../../../src/daemon/lanes/lane.js';

const prefix = uniquePrefix('key-checks');
const redis = new Redis(REDIS_URL);
const store = new StateStore(redis, prefix);
const IDLE_SERVICE = 'a1000000-0000-4000-8000-000000000003';
const EVERY = 60_000;
let cloud: EmbeddedCloud;
let client: ApiClient;
let clock = 0;
let config: Config;
let budget: KeyBudget;
let queue: Queue;
const emitter = new DaemonEmitter();
const ctx = {
  store,
  emitter,
  logger: silentLogger,
  now: () => clock,
  config: () => config,
} as unknown as DaemonContext;
const lane = () => ({ keyName: 'default', keyId: DEMO.keyId, client, budget, queue }) as unknown as KeyLane;
const listed = () => Object.values(cloud.stats().requests.listServices ?? {}).reduce((a, b) => a + b, 0);
const checks = () => new KeyChecks({ ctx, lane: (k) => (k === 'default' ? lane() : undefined), clock: () => clock });

beforeAll(async () => {
  await redis.ping();
});
beforeEach(async () => {
  clock = Date.parse('2026-11-23T10:00:00Z');
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  client = new ApiClient({ baseUrl: cloud.url, keyId: DEMO.keyId, keySecret: DEMO.keySecret, retry: false });
  config = { ...testConfig({ baseUrl: cloud.url, prefix, pipes: [demoPipe('orders-events', 'p')], policies: {} }) };
  config = { ...config, api: { ...config.api, checkEveryMs: EVERY } };
  budget = new KeyBudget(redis, `${prefix}:budget:${Math.random()}`, { requests: 10, perMs: 10_000 });
  // a key whose last window ended long ago: known, so its next take opens a window (no probe)
  await redis.hset(budget.key, 'end', 0);
  queue = new Queue(`apply-${Math.random()}`, { connection: redis, prefix });
  // the marker a running daemon keeps (redis-guard.ts): the state the checks store their answers in
  await redis.set(store.keys.marker, JSON.stringify({ since: clock }));
});
afterEach(async () => {
  await queue.close();
  await client.close();
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});
afterAll(async () => {
  redis.disconnect();
});

describe('KeyChecks', () => {
  it('a quiet key checks in once per interval with one services list, charged to its read share', async () => {
    const kc = checks();
    kc.watch(client, 'default');
    const contacts = collect(emitter, 'api:contact');
    clock += EVERY - 1;
    expect(await kc.checkDue()).toEqual(new Map());
    clock += 1;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'ok']]));
    expect(listed()).toBe(1);
    expect(contacts).toHaveLength(1);
    // One unit of the key's window and one read credit (a share of 0.25 x 10 starts at 3.5).
    expect((await budget.view())?.left).toBe(9);
    const rc = Number(await redis.hget(budget.key, 'rc'));
    expect(rc).toBeGreaterThanOrEqual(2.5);
    expect(rc).toBeLessThan(2.6);
    // The answer refreshes the organization's service states, which changes wait on.
    expect((await store.snapshot('any', { organizationId: DEMO.org, serviceId: IDLE_SERVICE })).service?.state).toBe(
      'idle',
    );
    // Not again within the interval, whatever the poll rate.
    clock += EVERY / 2;
    expect(await kc.checkDue()).toEqual(new Map());
    clock += EVERY / 2;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'ok']]));
    expect(listed()).toBe(2);
  });

  it("an answer that comes after Redis lost the daemon's state is not stored in it", async () => {
    const stored = async () =>
      (await store.snapshot('any', { organizationId: DEMO.org, serviceId: IDLE_SERVICE })).service?.state;
    // Redis loses the state as the list goes out: emptied, then a tick's new marker
    const send = budget.send.bind(budget);
    budget.send = async (...args) => {
      const unit = await send(...args);
      await redis.del(store.keys.marker);
      await redis.set(store.keys.marker, JSON.stringify({ since: clock, lostAt: clock }));
      return unit;
    };
    const kc = checks();
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'ok']]));
    expect(listed()).toBe(1);
    expect(await stored()).toBeUndefined();
    // with the marker gone (no tick has noticed the loss yet), the next check stores nothing either
    budget.send = send;
    await redis.del(store.keys.marker);
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'ok']]));
    expect(await stored()).toBeUndefined();
    // once the state Redis holds is named again, its next check stores its answer
    await redis.set(store.keys.marker, JSON.stringify({ since: clock, lostAt: clock }));
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'ok']]));
    expect(await stored()).toBe('idle');
  });

  it('a key that got a 2xx of its own within the interval does not check', async () => {
    const kc = checks();
    kc.watch(client, 'default');
    clock += EVERY - 10_000;
    await client.scalePipe(
      { organizationId: DEMO.org, serviceId: DEMO.analytics, pipeId: DEMO.pipes['orders-events'] },
      {},
    );
    clock += 10_000;
    expect(await kc.checkDue()).toEqual(new Map());
    expect(listed()).toBe(0);
  });

  it('a key whose turns wait in its queue does not check: a change there must not find its unit taken', async () => {
    const kc = checks();
    await queue.add('change', { pipe: 'orders-events' }, { priority: 1 });
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map());
    expect(listed()).toBe(0);
    expect(await budget.view()).toBeNull();
    // The queue empty again (its turn answered or gone), the quiet key checks at the next look.
    await queue.obliterate({ force: true });
    expect(await kc.checkDue()).toEqual(new Map([['default', 'ok']]));
    expect(listed()).toBe(1);
  });

  it('with the read share spent it sends nothing: no request, so never a 429', async () => {
    // A unit left in the window but no read credit: reads wait, changes could go.
    await redis.hset(budget.key, 'end', Date.now() + 60_000, 'left', 5, 'rc', 0, 'rt', Date.now());
    const kc = checks();
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'no_budget']]));
    expect(listed()).toBe(0);
    expect((await budget.view())?.left).toBe(5);
  });

  it('a check whose unit expired before its write (the process busy after the mark) sends nothing and is counted', async () => {
    // the budget's monotonic clock jumps a minute right after the mark, as a stalled process sees it
    let jump = 0;
    budget = new KeyBudget(redis, budget.key, { requests: 10, perMs: 10_000 }, () => performance.now() + jump);
    const send = budget.send.bind(budget);
    budget.send = async (...args) => {
      const unit = await send(...args);
      jump = 60_000;
      return unit;
    };
    const expired = collect(emitter, 'budget:unit-expired');
    const kc = checks();
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'no_budget']]));
    expect(listed()).toBe(0);
    expect(expired).toEqual([{ key: 'default' }]);
  });

  it('during an outage each check fails and sets the last failure time the alerts compare with the last success', async () => {
    const metrics = createMetrics(new Registry(), { defaultMetrics: false });
    bindClientEvents(client.events, metrics, { key: 'default', now: () => clock });
    const successAt = clock;
    const kc = checks();
    kc.watch(client, 'default');
    await cloud.close();
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'failed']]));
    const value = async (name: string) =>
      (await metrics.registry.getSingleMetric(name)!.get()).values.find((v) => v.labels.key === 'default')?.value;
    expect(await value('pipescaler_api_last_failure_timestamp_seconds')).toBe(clock / 1000);
    expect(await value('pipescaler_api_last_success_timestamp_seconds')).toBe(successAt / 1000);
    // The next one comes an interval after this one, not at every poll.
    clock += EVERY / 2;
    expect(await kc.checkDue()).toEqual(new Map());
    cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  });

  it('a key the platform refuses the list (an organization it does not see) stops checking until the config changes', async () => {
    config = {
      ...config,
      pipes: [{ ...demoPipe('orders-events', 'p'), organizationId: '0d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a70' }],
    };
    const kc = checks();
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map([['default', 'failed']]));
    clock += EVERY;
    expect(await kc.checkDue()).toEqual(new Map());
    config = { ...config };
    expect(await kc.checkDue()).toEqual(new Map([['default', 'failed']]));
  });

  it('a daemon whose every key is refused the list keeps /readyz on the reconcile interval: no check answers within 2 x checkEvery', async () => {
    config = {
      ...config,
      pipes: [{ ...demoPipe('orders-events', 'p'), organizationId: '0d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a70' }],
    };
    const reconcileMs = 600_000;
    const readiness = createReadiness(emitter, {
      reconcileMs,
      graceMs: 60_000,
      contactWindowMs: () => checkContactWindowMs(EVERY),
      configLoaded: true,
      redisReady: true,
      now: () => clock,
    });
    try {
      const kc = checks();
      clock += EVERY;
      expect(await kc.checkDue()).toEqual(new Map([['default', 'failed']])); // refused: an answer, a contact
      // No more checks of the key: a quiet fleet's next answer is its pipes' reconcile read.
      clock += checkContactWindowMs(EVERY)! + 1;
      expect(await kc.checkDue()).toEqual(new Map());
      expect(readiness.report().api).toBe(true);
      clock += reconcileMs + 60_000 - checkContactWindowMs(EVERY)!;
      expect(readiness.report().api).toBe(false);
      // A reload asks again; a key that checks again brings the short window back.
      config = { ...config, pipes: [demoPipe('orders-events', 'p')] };
      expect(await kc.checkDue()).toEqual(new Map([['default', 'ok']]));
      clock += checkContactWindowMs(EVERY)! + 1;
      expect(readiness.report().api).toBe(false);
    } finally {
      readiness.close();
    }
  });

  it('checks nothing with api.checkEvery 0', async () => {
    config = { ...config, api: { ...config.api, checkEveryMs: 0 } };
    clock += 10 * EVERY;
    expect(await checks().checkDue()).toEqual(new Map());
    expect(listed()).toBe(0);
  });
});

describe('the daemon', () => {
  it('checks in for a key that has nothing to do, through its own lane and budget', async () => {
    const daemonPrefix = uniquePrefix('key-checks-daemon');
    const base = testConfig({
      baseUrl: cloud.url,
      prefix: daemonPrefix,
      pipes: [demoPipe('orders-events', 'p')],
      policies: { p: policy('p', { replicas: 2 }) },
    });
    const daemon = createDaemon({
      config: { ...base, api: { ...base.api, checkEveryMs: 300 } },
      redisUrl: REDIS_URL,
      prefix: daemonPrefix,
      schedule: false,
      watch: false,
    });
    try {
      await daemon.start();
      await expect(
        waitForEvent(daemon.emitter, 'api:check', (c) => c.key === 'default' && c.result === 'ok', 15_000),
      ).resolves.toBeDefined();
      expect(listed()).toBeGreaterThanOrEqual(1);
      const left = await redis.hget(redisKeys(daemonPrefix).budget(DEMO.keyId), 'left');
      expect(left === null ? null : Number(left)).toBeLessThan(1000);
    } finally {
      await daemon.stop();
      await cleanupPrefix(redis, daemonPrefix);
    }
  }, 30_000);
});

describe('a wrong or rotated key', () => {
  it('is said by the first check: the log, /readyz, status and the metric; a 2xx of the key ends it', async () => {
    const registry = new Registry();
    bindDaemonEvents(emitter, createMetrics(registry, { defaultMetrics: false }));
    const readiness = createReadiness(emitter, {
      reconcileMs: 600_000,
      configLoaded: true,
      redisReady: true,
      now: () => clock,
    });
    const lines: { level: string; msg: string }[] = [];
    const logger = {
      ...silentLogger,
      error: (_: unknown, msg: string) => lines.push({ level: 'error', msg }),
      info: (_: unknown, msg: string) => lines.push({ level: 'info', msg }),
    };
    const wrong = new ApiClient({ baseUrl: cloud.url, keyId: DEMO.keyId, keySecret: 'rotated-away', retry: false });
    let current = wrong;
    const kc = new KeyChecks({
      ctx: { ...ctx, logger },
      lane: () => ({ ...lane(), client: current }),
      clock: () => clock,
    });
    kc.watch(client, 'default');
    try {
      clock += EVERY;
      expect(await kc.checkDue()).toEqual(new Map([['default', 'failed']]));
      expect(lines).toEqual([
        {
          level: 'error',
          msg: expect.stringMatching(/^key default \(keyId [^)]+\): the platform refuses it \(401 API_UNAUTHORIZED\)/),
        },
      ]);
      expect(readiness.report().api).toBe(false);
      expect(failedChecks(readiness.report())).toEqual(['api', 'api_key_rejected:default']);
      expect(await registry.getSingleMetricAsString('pipescaler_api_key_rejected')).toContain(
        'pipescaler_api_key_rejected{key="default"} 1',
      );
      const statuses = await readPipeStatuses(store, config, clock);
      expect(statuses[0]!.keyRefused).toMatchObject({ status: 401, code: 'API_UNAUTHORIZED' });
      const text = formatStatusText(statuses, [], [], { wide: false, width: 100, now: clock });
      expect(text).toMatch(/key refused 401 API_UNAUTHORIZED/);
      expect(text).toMatch(/^key default: the platform refuses it \(401/m);
      // the next check says nothing new
      clock += EVERY;
      await kc.checkDue();
      expect(lines).toHaveLength(1);

      // the secret is fixed (a reload): its first 2xx ends it everywhere
      current = client;
      await client.listServices(DEMO.org);
      await vi.waitFor(() =>
        expect(lines.at(-1)).toEqual({
          level: 'info',
          msg: expect.stringMatching(/^API key default \(keyId [^)]+\) is answered again$/),
        }),
      );
      expect(failedChecks(readiness.report())).not.toContain('api_key_rejected:default');
      expect(await registry.getSingleMetricAsString('pipescaler_api_key_rejected')).toContain(
        'pipescaler_api_key_rejected{key="default"} 0',
      );
      await vi.waitFor(async () => expect((await readPipeStatuses(store, config, clock))[0]!.keyRefused).toBeNull());
    } finally {
      readiness.close();
      await wrong.close();
    }
  });
});

describe('the outage timeline of rules.yml and rules.test.yml', () => {
  it('assumes the defaults the code has: a check every 1 min polled every 5 s, a 30 s timeout, /readyz within 135 s, 15 s scrapes, for: 2m', () => {
    const config = parseConfig('pipes: []\n', { file: 'x.yaml', env: {} });
    expect(config.api.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS).toBe(60_000);
    expect(checkPollMs(DEFAULT_CHECK_EVERY_MS)).toBe(5_000);
    expect(config.api.timeoutMs).toBe(30_000);
    expect(checkContactWindowMs(DEFAULT_CHECK_EVERY_MS)).toBe(135_000);
    const prom = parse(readFileSync('config/prometheus/prometheus.yml', 'utf8')) as {
      global: { scrape_interval: string; evaluation_interval: string };
    };
    expect(prom.global).toMatchObject({ scrape_interval: '15s', evaluation_interval: '15s' });
    const rules = (
      parse(readFileSync('config/prometheus/rules.yml', 'utf8')) as {
        groups: { rules: { alert: string; for?: string }[] }[];
      }
    ).groups[0]!.rules;
    const forOf = (a: string) => rules.find((r) => r.alert === a)?.for;
    expect([forOf('PipescalerApiUnreachable'), forOf('PipescalerNotReady')]).toEqual(['2m', '2m']);
    // worst case (s): first failing check starts by 60 + 5, ends by + 30, scraped + 15, evaluated + 15, for 120
    expect(60 + 5 + 30 + 15 + 15 + 120).toBeLessThanOrEqual(300);
    expect(135 + 15 + 15 + 120).toBeLessThanOrEqual(300);
  });
});
