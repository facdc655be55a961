// A fleet with nothing to do, against a REAL Prometheus loading rules.yml (expressions as shipped,
// `for:` scaled by 60 like api.checkEvery here: 1 min -> 1 s): the daemon never ticks, so its only
// calls are its keys' checks (one services list each). They keep it ready and its alerts quiet;
// when the platform stops answering, they alone bring PipescalerApiUnreachable for the key and
// PipescalerNotReady. rules.test.yml plays the same timeline at the default settings.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../src/daemon/index.js';
import { createLogger, startDaemonTelemetry, type DaemonTelemetry } from '../../src/telemetry/index.js';
import {
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  policy,
  testConfig,
  uniquePrefix,
  until,
  waitForEvent,
} from '../daemon/helpers.js';
import { PROMETHEUS_BIN, scaledRules, startPrometheus, type PromAlert, type PrometheusServer } from '../prometheus.js';
import { requireTool } from '../require-tool.js';

const hasPrometheus = requireTool(PROMETHEUS_BIN, 'prometheus');

describe.skipIf(!hasPrometheus)('a quiet fleet against a real Prometheus', () => {
  const prefix = uniquePrefix('quiet');
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const emitter = new DaemonEmitter();
  let cloud: EmbeddedCloud;
  let daemon: Daemon;
  let telemetry: DaemonTelemetry;
  let prom: PrometheusServer;
  let instance = '';

  const alerts = async (names: readonly string[]): Promise<PromAlert[]> =>
    (await prom.alerts()).filter((a) => names.includes(a.labels.alertname ?? '') && a.labels.instance === instance);

  beforeAll(async () => {
    cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes: [demoPipe('orders-events', 'steady')],
      policies: { steady: policy('steady', { replicas: 3 }) },
    });
    const config = { ...base, api: { ...base.api, checkEveryMs: 1_000 } };
    expect(await redis.ping()).toBe('PONG');
    telemetry = await startDaemonTelemetry({
      emitter,
      logger: createLogger({ level: 'silent' }),
      config: () => config,
      queues: () => daemon.queues(),
      listen: '127.0.0.1:0',
      redisReady: true,
    });
    instance = new URL(telemetry.url).host;
    prom = await startPrometheus({
      targets: [instance],
      rules: [scaledRules(readFileSync('config/prometheus/rules.yml', 'utf8')).text],
    });
    daemon = createDaemon({
      config,
      redis,
      prefix,
      emitter,
      schedule: false,
      watch: false,
      onClient: (client, keyName) => telemetry.bindClient(client.events, keyName),
    });
    await daemon.start();
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop({ timeoutMs: 2_000 });
    await telemetry?.close();
    await prom?.stop();
    await cloud?.close().catch(() => {});
    await cleanupPrefix(redis, prefix);
    redis.disconnect();
  });

  it('stays ready with no alert while only the checks call, and alerts on the key when the platform stops answering', async () => {
    await waitForEvent(emitter, 'api:check', (c) => c.result === 'ok', 20_000);
    await prom.waitFor(`pipescaler_ready{instance="${instance}"}`, (r) => r[0]?.value === 1, 30_000);
    await prom.waitFor(
      `increase(pipescaler_api_checks_total{instance="${instance}", key="default", result="ok"}[1m])`,
      (r) => (r[0]?.value ?? 0) >= 3,
      30_000,
    );
    expect(Object.values(cloud.stats().requests.scalePipe ?? {}).reduce((a, b) => a + b, 0)).toBe(0); // nothing but checks
    expect(await alerts(['PipescalerApiUnreachable', 'PipescalerNotReady'])).toEqual([]);

    await cloud.close();
    await waitForEvent(emitter, 'api:check', (c) => c.result === 'failed', 20_000);
    let seen: PromAlert[] = [];
    await until(
      async () => {
        seen = await alerts(['PipescalerApiUnreachable', 'PipescalerNotReady']);
        return (
          seen.some((a) => a.labels.alertname === 'PipescalerApiUnreachable' && a.labels.key === 'default') &&
          seen.some((a) => a.labels.alertname === 'PipescalerNotReady')
        );
      },
      60_000,
      'PipescalerApiUnreachable{key="default"} and PipescalerNotReady',
    ).catch((e: unknown) => {
      throw new Error(
        `${e instanceof Error ? e.message : String(e)}; active: ${JSON.stringify(seen.map((a) => [a.labels, a.state]))}`,
      );
    });
  }, 120_000);
});
