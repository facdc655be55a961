// A daemon killed with SIGKILL right after a change's 200 is recorded in Redis still has the
// change's audit line on its stdout: the logger writes each line to the fd as it is logged, none
// waits in a buffer (src/telemetry/logger.ts). The child (audit-sigkill-child.ts) kills itself in
// the listener that runs right after the audit log's. Killed earlier, between the answer's write
// and its line, the record holds the line it owes (work/turn-change.ts, lifecycle/owed-line.ts), and the pipe's
// next turn on another daemon writes it, once. A few seconds of real time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { applyQueueName, DaemonEmitter, StateStore, refOf } from '../../src/daemon/index.js';
import { bindAuditLog, createLogger } from '../../src/telemetry/index.js';
import {
  DEMO,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  drained,
  policy,
  testConfig,
  testDaemon,
  uniquePrefix,
  waitForEvent,
} from './helpers.js';

const prefixes: string[] = [];
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
});

type Line = Record<string, unknown>;
const parse = (text: string): Line[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);

/** A child daemon (audit-sigkill-child.ts) that changes orders-events from 2 to 4 replicas and
 *  kills itself `when`: after its line (`line`) or before it (`record`). Its stdout's lines. */
async function killedChild(cloud: EmbeddedCloud, prefix: string, when: 'line' | 'record'): Promise<Line[]> {
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
    ['--import', 'tsx', 'test/daemon/audit-sigkill-child.ts', cloud.url, prefix, when],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  try {
    const [, signal] = await once(child, 'exit');
    expect(signal, `the child killed itself (stderr: ${stderr})`).toBe('SIGKILL');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  // the change is recorded: the platform holds it, and so does the record
  expect(cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas).toBe(4);
  const rec = await new StateStore(redis, prefix).read('orders-events');
  expect(rec.applied).toMatchObject({ replicas: 4 });
  expect(rec.unsettled).toBeNull();
  return parse(stdout);
}

const appliedLines = (lines: readonly Line[]) => lines.filter((l) => l.audit === true && l.result === 'applied');

describe('a daemon killed right after recording a change', () => {
  it("has the change's audit line on its stdout", async () => {
    const prefix = uniquePrefix('audit-sigkill');
    prefixes.push(prefix);
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    try {
      const lines = await killedChild(cloud, prefix, 'line');
      const applied = appliedLines(lines);
      expect(applied, JSON.stringify(lines.slice(-5))).toHaveLength(1);
      expect(applied[0]).toMatchObject({ pipe: 'orders-events', after: { replicas: 4 }, msg: 'scaling applied' });
      expect(applied[0]!.idempotencyKey).toEqual(expect.any(String));
      // killed in the line's own event, before its delete went out: the record still owes the line
      // (the one window left, docs/metrics.md#logs: a later turn writes it a second time)
      const { owed } = await new StateStore(redis, prefix).snapshot('orders-events');
      expect(owed.map((o) => o.line.idempotencyKey)).toEqual([applied[0]!.idempotencyKey]);
    } finally {
      await cloud.close();
    }
  }, 30_000);

  it("before its line: the line it owes is written once, by the pipe's next evaluation or turn on another daemon", async () => {
    const prefix = uniquePrefix('audit-owed');
    prefixes.push(prefix);
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const lane = new Queue(applyQueueName(DEMO.keyId), { connection: redis, prefix });
    try {
      const childLines = await killedChild(cloud, prefix, 'record');
      expect(appliedLines(childLines), 'the killed sender wrote no line').toHaveLength(0);
      // the change's Idempotency-Key, as its turn (still active, its process gone) sent it
      const [job] = await lane.getActive();
      const key = (job?.data as { idempotencyKey?: string } | undefined)?.idempotencyKey;
      expect(key).toEqual(expect.any(String));
      // the record owes its line
      const { owed } = await new StateStore(redis, prefix).snapshot('orders-events');
      expect(owed.map((o) => o.line)).toEqual([
        expect.objectContaining({
          kind: 'applied',
          idempotencyKey: key,
          after: expect.objectContaining({ replicas: 4 }),
        }),
      ]);

      // Another daemon, past the owed line's grace (api.timeout 5 s and 10 s): the pipe's next turn
      // is its next change, to 6 replicas, as in the chaos run where this was found.
      const lines: Line[] = [];
      const destination = new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(...parse(chunk.toString()));
          done();
        },
      });
      const emitter = new DaemonEmitter();
      bindAuditLog(emitter, createLogger({ level: 'info', pretty: false, destination }));
      const config = testConfig({
        baseUrl: cloud.url,
        prefix,
        reconcileMs: 24 * 3_600_000,
        pipes: [demoPipe('orders-events', 'six')],
        policies: { six: policy('six', { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
      });
      const now = () => Date.now() + 60_000;
      const next = testDaemon({ config, redis, prefix, now, emitter });
      const six = waitForEvent(emitter, 'decision', (d) => d.result === 'applied' && d.after.replicas === 6);
      await next.start();
      try {
        await next.tick(now());
        await six;
        await drained([next]);
      } finally {
        await next.stop({ timeoutMs: 2_000 });
      }
      const written = appliedLines(lines).filter((l) => l.idempotencyKey === key);
      expect(written, JSON.stringify(lines)).toHaveLength(1);
      expect(written[0]).toMatchObject({ pipe: 'orders-events', after: { replicas: 4 }, msg: 'scaling applied' });
      expect(written[0]!.answeredAt).toEqual(expect.any(String));
      expect(appliedLines(lines).filter((l) => (l.after as { replicas?: number }).replicas === 6)).toHaveLength(1);
      // and the record owes it no more
      const fields = await redis.hkeys(new StateStore(redis, prefix).keys.pipe('orders-events'));
      expect(fields.filter((f) => f.startsWith('owed:'))).toEqual([]);
    } finally {
      await lane.close();
      await cloud.close();
    }
  }, 60_000);
});
