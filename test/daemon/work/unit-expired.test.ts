// A request whose unit of the key's budget expired before its first byte was written (the process
// busy between the budget's mark and the write: spend.ts UnitExpired) is not sent, its job goes back
// to the queue, and it is counted: pipescaler_budget_units_expired_total{key}, from 0 for every key
// in force. One daemon with its telemetry against the embedded cloud over HTTP, real Redis; the
// budget's monotonic clock is the one faked: it jumps a minute right after the first mark, as a
// process stalled there would see it.
import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyBudget } from '../../../src/daemon/lanes/budget.js';
import { DaemonEmitter } from '../../../src/daemon/index.js';
import { createLogger, startDaemonTelemetry } from '../../../src/telemetry/index.js';
import { collect, drained, policy, streamCloud, testConfig, testDaemon, testRedis } from '../helpers.js';

const { redis, prefix } = testRedis();
const T0 = Date.parse('2026-11-23T08:00:00Z');

afterEach(() => {
  vi.restoreAllMocks();
});

async function expiredCount(registry: Registry): Promise<number | undefined> {
  const metric = registry.getSingleMetric('pipescaler_budget_units_expired_total');
  const values = (await metric?.get())?.values ?? [];
  return values.find((v) => v.labels.key === 'default')?.value;
}

describe('a request whose budget unit expired before its write', () => {
  it('is not sent, goes again with a unit of its own, and is counted for its key', async () => {
    const clock = T0;
    const { cloud, pipes, keys } = await streamCloud(() => clock, ['p1'], 'steady');
    const base = testConfig({
      baseUrl: cloud.url,
      prefix: prefix('unit-expired'),
      pipes,
      keys,
      policies: { steady: policy('steady', { replicas: 2 }) },
    });
    // no key check (its unit could be the one that expires)
    const config = { ...base, api: { ...base.api, checkEveryMs: 0 } };
    const emitter = new DaemonEmitter();
    const registry = new Registry();
    const telemetry = await startDaemonTelemetry({
      emitter,
      logger: createLogger({ level: 'silent', pretty: false }),
      config: () => config,
      queues: () => [],
      registry,
    });
    const daemon = testDaemon({ config, redis, prefix: base.redis.prefix, emitter, now: () => clock });
    const expired = collect(emitter, 'budget:unit-expired');
    // The budget's clock: the process' own, a minute ahead from the first mark on.
    let jump = 0;
    vi.spyOn(KeyBudget.prototype, 'localNow').mockImplementation(() => performance.now() + jump);
    type Send = (this: KeyBudget, ...args: Parameters<KeyBudget['send']>) => ReturnType<KeyBudget['send']>;
    const send: Send = Reflect.get(KeyBudget.prototype, 'send');
    let marked = 0;
    vi.spyOn(KeyBudget.prototype, 'send').mockImplementation(async function (this: KeyBudget, ...args) {
      const unit = await send.apply(this, args);
      marked += unit.waitMs === 0 ? 1 : 0;
      jump = 60_000;
      return unit;
    });
    try {
      await daemon.start();
      expect(await expiredCount(registry)).toBe(0);
      await daemon.tick(T0);
      await drained([daemon]);
      expect(expired).toEqual([{ key: 'default' }]);
      expect(await expiredCount(registry)).toBe(1);
      // every unit marked reached the platform but the expired one; the pipe was read and scaled
      const count = (by: Record<string, number> = {}) => Object.values(by).reduce((a, b) => a + b, 0);
      const { requests } = cloud.stats();
      expect(count(requests.scalePipe)).toBeGreaterThanOrEqual(2);
      expect(Object.values(requests).reduce((n, by) => n + count(by), 0)).toBe(marked - 1);
      expect(cloud.store.pipe(pipes[0]!.pipeId)?.scaling.replicas).toBe(2);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await telemetry.close();
      await cloud.close();
    }
  });
});
