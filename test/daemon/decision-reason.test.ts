// One reason everywhere: a scale-down a pipe's bound forces is `pipe_bound` in the decisions
// metric, in the audit line and in the scaling history, from a real daemon against the embedded
// cloud over HTTP and the real Redis.
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { HistoryStore } from '../../src/history/index.js';
import { bindAuditLog, bindDaemonEvents, createLogger, createMetrics, Registry } from '../../src/telemetry/index.js';
import { parseScrape, sampleValue } from '../telemetry/exposition-parse.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  drained,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from './helpers.js';

const prefix = uniquePrefix('decision-reason');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('the reason of a bound-caused scale-down', () => {
  it('is pipe_bound in the metric, the audit line and the history', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    // the pipe runs 6; its policy wants 6, its bound allows 4: the bound brings it down
    cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas = 6;
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes: [{ ...demoPipe('orders-events', 'streams'), bounds: { replicas: { max: 4 } } }],
      policies: { streams: policy('streams', { replicas: 6 }) },
    });
    const emitter = new DaemonEmitter();
    const registry = new Registry();
    const unbindMetrics = bindDaemonEvents(emitter, createMetrics(registry, { defaultMetrics: false }));
    const lines: Record<string, unknown>[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n'))
          if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    const unbindAudit = bindAuditLog(emitter, createLogger({ level: 'info', pretty: false, destination }));
    const daemon = createDaemon({
      config,
      redis,
      prefix,
      now: () => T0,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    try {
      await daemon.start();
      await daemon.tick(T0);
      await drained([daemon]);
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(4);

      const metric = parseScrape(await registry.metrics());
      expect(
        sampleValue(metric, 'pipescaler_decisions_total', {
          pipe: 'orders-events',
          direction: 'down',
          result: 'applied',
          reason: 'pipe_bound',
        }),
      ).toBe(1);
      expect(metric.lines.filter((l) => /^pipescaler_decisions_total\{.*reason="window"/.test(l))).toEqual([]);

      await until(() => lines.some((l) => l.audit === true && l.result === 'applied'));
      const audit = lines.filter((l) => l.audit === true && l.result === 'applied');
      expect(audit).toEqual([
        expect.objectContaining({ pipe: 'orders-events', direction: 'down', reason: 'pipe_bound' }),
      ]);

      const history = new HistoryStore(redis, prefix);
      await until(async () => (await history.read('orders-events')).entries.some((e) => e.outcome === 'applied'));
      const applied = (await history.read('orders-events')).entries.filter((e) => e.outcome === 'applied');
      expect(applied).toEqual([
        expect.objectContaining({ reason: 'pipe_bound', after: expect.objectContaining({ replicas: 4 }) }),
      ]);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      unbindMetrics();
      unbindAudit();
      await cloud.close();
    }
  });
});
