// Hot reload from the file: an edit is picked up (fs.watch, debounced), a broken file is refused
// with its errors while the last good config keeps running, and SIGHUP/SIGTERM go through the
// daemon's signal handling (emitted in-process, so the test worker itself is never signalled).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, handleSignals, silentLogger } from '../../../src/daemon/index.js';
import { DEMO, FAST_WORKERS, REDIS_URL, cleanupPrefix, drained, uniquePrefix, waitForEvent } from '../helpers.js';

const prefix = uniquePrefix('reload');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-reload-'));
const T0 = Date.parse('2026-11-23T10:00:00Z');

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

const yaml = (baseUrl: string, replicas: unknown) => `
api:
  baseUrl: ${baseUrl}
  keyId: ${DEMO.keyId}
  keySecret: \${PS_TEST_SECRET}
  rateLimit: { requests: 1000, per: 1s }
redis:
  url: ${REDIS_URL}
  prefix: ${prefix}
evaluate:
  reconcile: 24h
pipes:
  - name: orders-events
    organizationId: ${DEMO.org}
    serviceId: ${DEMO.analytics}
    pipeId: ${DEMO.pipes['orders-events']}
    policy: steady
policies:
  steady:
    baseline: { replicas: ${String(replicas)}, replicaCpuMillicores: 500, replicaMemoryGb: 2 }
`;

describe('reload', () => {
  it('follows file edits, refuses a broken file keeping the old policy, and handles SIGHUP and SIGTERM', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const path = join(dir, 'pipescaler.yaml');
    writeFileSync(path, yaml(cloud.url, 3));
    const emitter = new DaemonEmitter();
    let clock = T0;
    const daemon = createDaemon({
      config: path,
      env: { PS_TEST_SECRET: DEMO.keySecret },
      redis,
      prefix,
      now: () => clock,
      emitter,
      schedule: false,
      workerOptions: FAST_WORKERS,
    });
    const replicas = () => cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas;
    const tick = async (at: number) => {
      clock = at;
      await daemon.tick(at);
      await drained([daemon]);
    };
    await daemon.start();
    let exitCode: number | null = null;
    const exited = new Promise<void>((resolve) => {
      handleSignals(daemon, {
        timeoutMs: 2_000,
        logger: silentLogger,
        exit: (code) => {
          exitCode = code;
          resolve();
        },
      });
    });
    try {
      await tick(T0);
      expect(replicas()).toBe(3);

      let reload = waitForEvent(emitter, 'config:reload');
      writeFileSync(path, yaml(cloud.url, 99));
      const refused = await reload;
      expect(refused.result).toBe('failure');
      expect(refused.errors!.join('\n')).toMatch(/pipescaler\.yaml:\d+:\d+ .*replicas/);
      await tick(T0 + 60_000);
      expect(replicas()).toBe(3);
      expect(daemon.config().pipes[0]!.policy).toBe('steady');

      reload = waitForEvent(emitter, 'config:reload');
      writeFileSync(path, yaml(cloud.url, 5));
      expect((await reload).result).toBe('success');
      await tick(T0 + 120_000);
      expect(replicas()).toBe(5);

      // SIGHUP re-reads the file.
      reload = waitForEvent(emitter, 'config:reload');
      process.emit('SIGHUP');
      expect((await reload).result).toBe('success');
    } finally {
      process.emit('SIGTERM');
      await exited;
      await cloud.close();
    }
    expect(exitCode).toBe(0);
  }, 30_000);
});
