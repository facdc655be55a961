// A daemon killed with SIGKILL right after a change's 200 is recorded in Redis still has the
// change's audit line on its stdout: the logger writes each line to the fd as it is logged, none
// waits in a buffer (src/telemetry/logger.ts). The child (audit-sigkill-child.ts) kills itself in
// the listener that runs right after the audit log's. A few seconds of real time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { StateStore, refOf } from '../../src/daemon/index.js';
import { DEMO, REDIS_URL, cleanupPrefix, demoPipe, uniquePrefix } from './helpers.js';

const prefix = uniquePrefix('audit-sigkill');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('a daemon killed right after recording a change', () => {
  it("has the change's audit line on its stdout", async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    // Met before, so the child's first turn is the change itself.
    await new StateStore(redis, prefix).write('orders-events', {
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      lastReadAt: Date.now(),
      ref: refOf(demoPipe('orders-events', 'four')),
    });
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/daemon/audit-sigkill-child.ts', cloud.url, prefix],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      const [, signal] = await once(child, 'exit');
      expect(signal, `the child killed itself (stderr: ${stderr})`).toBe('SIGKILL');
      // the change is recorded: the platform holds it, and so does the record
      expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(4);
      const rec = await new StateStore(redis, prefix).read('orders-events');
      expect(rec.applied).toMatchObject({ replicas: 4 });
      expect(rec.unsettled).toBeNull();
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const applied = lines.filter((l) => l.audit === true && l.result === 'applied');
      expect(applied, `stdout:\n${stdout}`).toHaveLength(1);
      expect(applied[0]).toMatchObject({ pipe: 'orders-events', after: { replicas: 4 }, msg: 'scaling applied' });
      expect(applied[0]!.idempotencyKey).toEqual(expect.any(String));
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await cloud.close();
    }
  }, 30_000);
});
