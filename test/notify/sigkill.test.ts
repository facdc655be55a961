// A daemon process killed with SIGKILL while its notification is on the wire: the receiver held
// the request, the batch was never acknowledged, so after the job's lock lapses another daemon's
// stalled check hands it over and it is delivered, under the same event id and signature key.
// The history entry the killed replica wrote survives it. About 15 s of real time (the child's
// notify lock is the default 10 s). Needs `npm run build` first.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../src/cloud/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createDaemon, DaemonEmitter, StateStore } from '../../src/daemon/index.js';
import { HistoryStore } from '../../src/history/index.js';
import {
  EVENT_ID_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifySignature,
  type NotifyEvent,
} from '../../src/notify/index.js';
import { DEMO, FAST_WORKERS, REDIS_URL, cleanupPrefix, uniquePrefix, until } from '../daemon/helpers.js';
import { startReceiver } from './receiver.js';

const prefix = uniquePrefix('notify-sigkill');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-notify-sigkill-'));
const HOOK_SECRET = 'sigkill-hook-secret-0815';

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('a daemon process killed while it delivers a notification', () => {
  it('leaves the batch to another daemon, which delivers it under the same id: nothing lost', async () => {
    expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const receiver = await startReceiver();
    receiver.answer = (n) => (n === 0 ? 'hang' : 200);
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
  prefix: ${prefix}
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
notify:
  coalesce: 0s
  sinks:
    ops:
      type: webhook
      url: ${receiver.url}
      secret: \${PS_HOOK_SECRET}
      allowPrivateNetwork: true   # the test's receiver listens on 127.0.0.1
      events: [applied]
      timeout: 60s
      backoff: 100ms
`,
    );
    const env = { ...process.env, PS_TEST_SECRET: DEMO.keySecret, PS_HOOK_SECRET: HOOK_SECRET };
    // met before (the lifecycle reads it once more: the record names no ids); the sink wants the change
    await new StateStore(redis, prefix).write('orders-events', {
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      lastReadAt: Date.now(),
    });
    const child = spawn(process.execPath, ['dist/cli/main.js', 'run', path], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = once(child, 'exit');
    try {
      await until(() => receiver.received.length === 1, 30_000, `the child's delivery (stderr: ${stderr})`);
      child.kill('SIGKILL');
      const [, signal] = await exited;
      expect(signal).toBe('SIGKILL');

      // what the killed replica wrote to the history is there for every other one
      const history = await new HistoryStore(redis, prefix).read('orders-events');
      expect(history.entries).toContainEqual(
        expect.objectContaining({
          outcome: 'applied',
          reason: 'baseline',
          after: expect.objectContaining({ replicas: 4 }),
        }),
      );
      const applied = history.entries.find((e) => e.outcome === 'applied');

      const rescuer = createDaemon({
        config: loadConfig(path, env),
        redis,
        prefix,
        emitter: new DaemonEmitter(),
        schedule: false,
        watch: false,
        workerOptions: FAST_WORKERS,
      });
      await rescuer.start();
      try {
        await until(() => receiver.received.length === 2, 40_000, 'the rescuer to deliver the held batch');
      } finally {
        await rescuer.stop({ timeoutMs: 2_000 });
      }
      const [held, delivered] = receiver.received;
      expect(held!.answer).toBe('hang');
      expect(delivered!.answer).toBe(200);
      expect(delivered!.headers[EVENT_ID_HEADER]).toBe(held!.headers[EVENT_ID_HEADER]);
      expect(delivered!.body).toBe(held!.body);
      const event = JSON.parse(delivered!.body) as NotifyEvent;
      expect(event).toMatchObject({
        id: held!.headers[EVENT_ID_HEADER],
        type: 'applied',
        pipe: 'orders-events',
        requestId: applied?.requestId,
      });
      for (const r of receiver.received) {
        const ts = String(r.headers[TIMESTAMP_HEADER]);
        expect(verifySignature(HOOK_SECRET, ts, r.body, String(r.headers[SIGNATURE_HEADER]))).toBe(true);
      }
      expect(stderr).not.toContain(HOOK_SECRET);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await receiver.stop();
      await cloud.close();
    }
  }, 90_000);
});
