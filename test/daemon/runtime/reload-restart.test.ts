// Issue 14 item 7: a reload says what it changed, and one that changes what takes a restart (the
// Redis connection, the API's base URL, the telemetry server) is refused before anything is
// swapped: an error line, the reload-failure metric, and the last good config keeps scaling.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../../src/daemon/index.js';
import { bindAuditLog, bindDaemonEvents, createLogger, createMetrics, Registry } from '../../../src/telemetry/index.js';
import { DEMO, FAST_WORKERS, REDIS_URL, cleanupPrefix, collect, drained, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('reloadrestart');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-reloadrestart-'));
const T0 = Date.parse('2026-11-23T10:00:00Z');

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

interface Shape {
  baseUrl: string;
  prefix?: string;
  listen?: string;
  replicas?: number;
  pipes?: readonly string[];
}

function file(s: Shape): string {
  const pipes = (s.pipes ?? ['orders-events'])
    .map(
      (name) => `
  - name: ${name}
    organizationId: ${DEMO.org}
    serviceId: ${DEMO.analytics}
    pipeId: ${DEMO.pipes[name as keyof typeof DEMO.pipes]}
    policy: steady`,
    )
    .join('');
  return `
api:
  baseUrl: ${s.baseUrl}
  keyId: ${DEMO.keyId}
  keySecret: \${PS_TEST_SECRET}
  rateLimit: { requests: 1000, per: 1s }
redis:
  url: ${REDIS_URL}
  prefix: ${s.prefix ?? prefix}
telemetry:
  listen: ${s.listen ?? '127.0.0.1:9464'}
  logLevel: info
evaluate:
  reconcile: 24h
pipes:${pipes}
policies:
  steady:
    baseline: { replicas: ${s.replicas ?? 3}, replicaCpuMillicores: 500, replicaMemoryGb: 2 }
  spare:
    baseline: { concurrency: 2 }
`;
}

function captureLog() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', pretty: false, destination }) };
}

describe('a reload that needs a restart', () => {
  it('is refused loudly (error line, reload metric at 0), the running config stays; a reload says what it changed', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const path = join(dir, 'pipescaler.yaml');
    writeFileSync(path, file({ baseUrl: cloud.url }));
    const emitter = new DaemonEmitter();
    const registry = new Registry();
    const metrics = createMetrics(registry, { defaultMetrics: false });
    const { lines, logger } = captureLog();
    const unbind = [bindDaemonEvents(emitter, metrics), bindAuditLog(emitter, logger)];
    let clock = T0;
    // the connection is given (the test's), the prefix comes from the file, telemetry from the config
    const daemon = createDaemon({
      config: path,
      env: { PS_TEST_SECRET: DEMO.keySecret },
      redis,
      now: () => clock,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
      servesTelemetry: true,
    });
    const reloads = collect(emitter, 'config:reload');
    const replicas = () => cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas;
    const tick = async (at: number) => {
      clock = at;
      await daemon.tick(at);
      await drained([daemon]);
    };
    const lastReload = async () =>
      (await registry.getSingleMetric('pipescaler_config_last_reload_success')!.get()).values[0]!.value;
    try {
      await daemon.start();
      await tick(T0);
      expect(replicas()).toBe(3);

      // each setting that takes a restart, alone and together with a policy change: refused
      const refusals: [Shape, RegExp][] = [
        [
          { baseUrl: cloud.url, prefix: `${prefix}-other`, replicas: 5 },
          new RegExp(
            `^redis\\.prefix: changed from "${prefix}" to "${prefix}-other"; this takes a restart, so the reload is refused and the running config stays`,
          ),
        ],
        [
          { baseUrl: 'embedded', replicas: 5 },
          new RegExp(
            `^api\\.baseUrl: changed from "${cloud.url.replace(/[.]/g, '\\.')}" to "embedded"; this takes a restart`,
          ),
        ],
        [
          { baseUrl: cloud.url, listen: '127.0.0.1:9999', replicas: 5 },
          /^telemetry\.listen: changed from "127\.0\.0\.1:9464" to "127\.0\.0\.1:9999"; this takes a restart/,
        ],
      ];
      for (const [shape, error] of refusals) {
        writeFileSync(path, file(shape));
        expect(await daemon.reload()).toBe(false);
        expect(reloads.at(-1)!.result).toBe('failure');
        expect(reloads.at(-1)!.errors).toHaveLength(1);
        expect(reloads.at(-1)!.errors![0]).toMatch(error);
        expect(await lastReload()).toBe(0);
        const line = lines.at(-1)!;
        expect(line).toMatchObject({ level: 50, msg: 'config reload failed; the previous config stays in force' });
        expect(JSON.stringify(line.errors)).toContain('takes a restart');
      }
      expect(JSON.stringify(reloads)).not.toContain(DEMO.keySecret);
      // nothing was swapped: the policy change that came with them did not happen
      expect(daemon.config().redis.prefix).toBe(prefix);
      await tick(T0 + 60_000);
      expect(replicas()).toBe(3);

      // a good reload: what it changed, in the event and in the log line
      writeFileSync(path, file({ baseUrl: cloud.url, replicas: 4, pipes: ['orders-events', 'clickstream'] }));
      expect(await daemon.reload()).toBe(true);
      expect(await lastReload()).toBe(1);
      expect(reloads.at(-1)!.changes).toMatchObject({
        pipesAdded: ['clickstream'],
        pipesRemoved: [],
        policiesChanged: ['steady'],
      });
      expect(lines.at(-1)).toMatchObject({
        level: 30,
        msg: 'config reloaded: pipes added: clickstream; policies changed: steady',
        pipesAdded: ['clickstream'],
        policiesChanged: ['steady'],
      });
      await tick(T0 + 120_000);
      expect(replicas()).toBe(4);

      writeFileSync(path, file({ baseUrl: cloud.url, replicas: 4, pipes: ['clickstream'] }));
      expect(await daemon.reload()).toBe(true);
      expect(lines.at(-1)!.msg).toBe('config reloaded: pipes removed: orders-events');
      expect(await daemon.reload()).toBe(true);
      expect(lines.at(-1)!.msg).toBe('config reloaded: nothing changed');
    } finally {
      for (const u of unbind) u();
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  }, 120_000);
});
