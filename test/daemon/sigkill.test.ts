// The built daemon is killed with SIGKILL while the cloud holds its scaling request: its job's
// lock expires (BullMQ's default 30 s in the child), another daemon's stalled check puts the job
// back, and the pipe converges. About 35 s of real time. Needs `npm run build` first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { applyQueueName, createDaemon, DaemonEmitter, StateStore, refOf } from '../../src/daemon/index.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  policy,
  testConfig,
  uniquePrefix,
  until,
  waitForEvent,
} from './helpers.js';

const prefix = uniquePrefix('sigkill');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-sigkill-'));

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('a daemon process killed mid-apply', () => {
  it('has its job recovered by another daemon, and the pipe converges', async () => {
    expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const config = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 24 * 3_600_000,
      pipes: [demoPipe('orders-events', 'four')],
      policies: { four: policy('four', { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
    });
    const path = join(dir, 'pipescaler.yaml');
    writeFileSync(
      path,
      `
api:
  baseUrl: ${cloud.url}
  keyId: ${DEMO.keyId}
  keySecret: \${PS_TEST_SECRET}
redis:
  url: ${REDIS_URL}
evaluate:
  cron: "* * * * * *"
  reconcile: 24h
telemetry:
  listen: 127.0.0.1:0
  logLevel: warn
pipes:
  - name: orders-events
    organizationId: ${DEMO.org}
    serviceId: ${DEMO.analytics}
    pipeId: ${DEMO.pipes['orders-events']}
    policy: four
policies:
  four:
    baseline: { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 }
`,
    );
    // Met before, so the child's first turn is the apply itself, which the cloud holds for 5 s.
    await new StateStore(redis, prefix).write('orders-events', {
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      lastReadAt: Date.now(),
      ref: refOf(config.pipes[0]!),
    });
    cloud.setFaults({ scalePipe: { latency: { probability: 1, minMs: 5_000, maxMs: 5_000 } } });
    const child = spawn(process.execPath, ['dist/cli/main.js', 'run', path], {
      env: { ...process.env, PS_TEST_SECRET: DEMO.keySecret, PIPESCALER_REDIS_PREFIX: prefix },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = once(child, 'exit');
    const lane = new Queue(applyQueueName(DEMO.keyId), { connection: redis, prefix });
    try {
      await until(
        async () => (await lane.getActiveCount()) === 1,
        20_000,
        `the child's apply to start (stderr: ${stderr})`,
      );
      child.kill('SIGKILL');
      const [, signal] = await exited;
      expect(signal).toBe('SIGKILL');
      cloud.setFaults({});

      const emitter = new DaemonEmitter();
      const rescuer = createDaemon({
        config,
        redis,
        prefix,
        emitter,
        schedule: false,
        watch: false,
        workerOptions: FAST_WORKERS,
      });
      const applied = waitForEvent(emitter, 'decision', (d) => d.result === 'applied', 45_000);
      await rescuer.start();
      try {
        expect(await applied).toMatchObject({ pipe: 'orders-events', after: { replicas: 4 } });
        expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(4);
        expect((await rescuer.status()).pipes[0]!.applied).toMatchObject({ replicas: 4 });
      } finally {
        await rescuer.stop({ timeoutMs: 2_000 });
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await lane.close();
      await cloud.close();
    }
  }, 70_000);
});
