// The daemon's emitter carries every listener a `pipescaler run` subscribes (telemetry's modules,
// readiness, the outcome bridge, the CLI's own reload listener) and one more of whoever embeds or
// watches it, without Node's MaxListenersExceededWarning: `config:reload` alone has 10 of them, the
// default limit. A reload adds none. One daemon with its telemetry against the embedded cloud over
// HTTP, real Redis.
import { afterEach, describe, expect, it } from 'vitest';
import { DaemonEmitter, DAEMON_MAX_LISTENERS } from '../../../src/daemon/model/events.js';
import { createLogger, startDaemonTelemetry } from '../../../src/telemetry/index.js';
import { policy, streamCloud, testConfig, testDaemon, testRedis } from '../helpers.js';

const { redis, prefix } = testRedis();
const T0 = Date.parse('2026-11-23T08:00:00Z');
const warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

/** The warnings of a leak Node emitted (on the next tick of the listener that crossed the limit). */
async function leakWarnings(): Promise<Error[]> {
  await new Promise((r) => setImmediate(r));
  return warnings.filter((w) => w.name === 'MaxListenersExceededWarning');
}

describe("the daemon's emitter", () => {
  it('takes the listeners of a daemon as `pipescaler run` starts it, and one more, without a warning', async () => {
    process.on('warning', onWarning);
    const { cloud, pipes, keys } = await streamCloud(() => T0, ['p1'], 'steady');
    const config = testConfig({
      baseUrl: cloud.url,
      prefix: prefix('emitter-listeners'),
      pipes,
      keys,
      policies: { steady: policy('steady', { replicas: 2 }) },
    });
    const emitter = new DaemonEmitter();
    // the CLI's own (src/cli/commands/daemon.ts: the log level follows a reload)
    emitter.on('config:reload', () => {});
    const telemetry = await startDaemonTelemetry({
      emitter,
      logger: createLogger({ level: 'silent', pretty: false }),
      config: () => config,
      queues: () => [],
    });
    const daemon = testDaemon({ config, redis, prefix: config.redis.prefix, emitter, now: () => T0 });
    try {
      await daemon.start();
      const reloads = emitter.listenerCount('config:reload');
      expect(reloads).toBeGreaterThanOrEqual(10);
      // whoever watches the daemon (a test, a program that embeds it)
      emitter.on('config:reload', () => {});
      expect(await daemon.reload({ ...config, policies: { steady: policy('steady', { replicas: 3 }) } })).toBe(true);
      expect(emitter.listenerCount('config:reload')).toBe(reloads + 1);
      expect(await leakWarnings()).toEqual([]);
      // room left for a leak to be caught: a listener added per pipe, key or reload would cross it
      expect(DAEMON_MAX_LISTENERS).toBeLessThanOrEqual(5 * reloads);
      for (const event of emitter.eventNames()) expect(emitter.listenerCount(event)).toBeLessThan(DAEMON_MAX_LISTENERS);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await telemetry.close();
      await cloud.close();
    }
  });

  it('still warns of a leak: a listener added past its limit', async () => {
    process.on('warning', onWarning);
    const emitter = new DaemonEmitter();
    for (let i = 0; i <= DAEMON_MAX_LISTENERS; i++) emitter.on('tick', () => {});
    expect((await leakWarnings()).map((w) => w.message)).toEqual([expect.stringContaining('tick listeners')]);
  });
});
