// The daemon end to end, in-process, against the embedded cloud over HTTP and the real Redis:
// first contact, apply, no PATCH when nothing changes, dry run, pause/resume, reload, parking,
// failures that come back at a later tick, drift.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadFixtures, startCloud, type EmbeddedCloud } from '../../../src/cloud/index.js';
import type { ApplyJob } from '../../../src/daemon/lanes/queues.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../../src/daemon/index.js';
import type { Config } from '../../../src/config/types.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  collect,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  waitForEvent,
  pipeOf,
} from '../helpers.js';

const prefix = uniquePrefix('daemon');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;

let cloud: EmbeddedCloud;
let daemon: Daemon;
let emitter: DaemonEmitter;
let clock = T0;

const scaling = (id: string) => cloud.store.pipe(id)!.scaling;
const patches = () => Object.values(cloud.stats().requests.scalePipe ?? {}).reduce((a, b) => a + b, 0);

function baseConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes: [demoPipe('orders-events', 'streams'), demoPipe('nightly-s3', 'objects')],
      policies: {
        streams: policy('streams', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
          oneOff('peak', T0 + 10 * MIN, T0 + 20 * MIN, { replicas: 6 }),
        ]),
        objects: policy('objects', { concurrency: 4 }),
      },
      reconcileMs: 24 * 60 * MIN,
    }),
    ...overrides,
  };
}

async function startDaemon(config: Config): Promise<void> {
  emitter = new DaemonEmitter();
  daemon = createDaemon({
    config,
    redis,
    prefix,
    now: () => clock,
    emitter,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  await daemon.start();
}

async function tickAt(at: number): Promise<void> {
  clock = at;
  await daemon.tick(at);
  await drained([daemon]);
}

beforeAll(async () => {
  await redis.ping();
});
afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});
beforeEach(async () => {
  cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  clock = T0;
});
afterEach(async () => {
  await daemon?.stop({ timeoutMs: 2_000 });
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});

describe('the daemon against the embedded cloud', () => {
  it('meets a new pipe with a read before its first change, and sends nothing when nothing changes', async () => {
    await startDaemon(baseConfig());
    const decisions = collect(emitter, 'decision');
    await tickAt(T0);
    expect(scaling(DEMO.pipes['orders-events'])).toMatchObject({
      replicas: 3,
      replicaCpuMillicores: 500,
      replicaMemoryGb: 2,
    });
    expect(scaling(DEMO.pipes['nightly-s3'])).toMatchObject({ concurrency: 4 });
    // A pipe never seen is read first (its state may take no scaling), then changed: two PATCHes
    // per pipe, the first one empty.
    expect(patches()).toBe(4);
    const applied = decisions.filter((d) => d.result === 'applied');
    expect(applied.map((d) => [d.pipe, d.after]).sort()).toEqual([
      ['nightly-s3', { concurrency: 4 }],
      ['orders-events', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }],
    ]);
    expect(applied.every((d) => typeof d.requestId === 'string')).toBe(true);

    const before = patches();
    await tickAt(T0 + MIN);
    await tickAt(T0 + 2 * MIN);
    expect(patches()).toBe(before);

    // The window opens: one PATCH with only the field that changes.
    await tickAt(T0 + 10 * MIN);
    expect(patches()).toBe(before + 1);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(6);
    const status = await daemon.status();
    const orders = status.pipes.find((p) => p.pipe === 'orders-events')!;
    expect(orders).toMatchObject({ kind: 'stream', state: 'Running', windows: ['peak'], desired: { replicas: 6 } });
    expect(orders.applied).toMatchObject({ replicas: 6 });
    // Workers keep BullMQ's metrics, so the queues' Prometheus text carries the totals.
    const text = (await Promise.all(daemon.queues().map((q) => q.exportPrometheusMetrics()))).join('\n');
    expect(text).toMatch(/bullmq_job_completed_total\{queue="apply-pipescaler-demo-key"[^}]*\} [1-9]/);
  });

  it('dry run decides and records but never sends a change', async () => {
    await startDaemon(baseConfig({ dryRun: true }));
    const decisions = collect(emitter, 'decision');
    await tickAt(T0);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(2);
    expect(
      decisions
        .filter((d) => d.result === 'dry_run')
        .map((d) => d.pipe)
        .sort(),
    ).toEqual(['nightly-s3', 'orders-events']);
    expect(decisions.some((d) => d.result === 'applied')).toBe(false);
    const status = await daemon.status();
    expect(status.pipes.find((p) => p.pipe === 'orders-events')!.lastDecision).toMatchObject({
      action: 'change',
      dryRun: true,
    });
  });

  it('pause and resume take effect at the next tick', async () => {
    await startDaemon(baseConfig());
    await tickAt(T0);
    await daemon.store.operator.setPause(pipeOf(daemon, 'orders-events'), { reason: 'maintenance' });
    const decisions = collect(emitter, 'decision');
    const pauses = collect(emitter, 'paused');
    await tickAt(T0 + 10 * MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
    expect(decisions.find((d) => d.pipe === 'orders-events')).toMatchObject({ result: 'skipped', reason: 'paused' });

    await daemon.store.operator.clearPause(pipeOf(daemon, 'orders-events'));
    await tickAt(T0 + 11 * MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(6);
    expect(pauses).toEqual([
      { pipe: 'orders-events', paused: true, reason: 'maintenance' },
      { pipe: 'orders-events', paused: false },
    ]);

    // The flag's key expires at `until` on Redis' clock, which is the real one: T0 + 60 min is in
    // the past once the real day passes it (this test broke at 11:00Z on 2026-11-23).
    await daemon.store.operator.setPause(null, { reason: 'freeze', until: Math.max(T0, Date.now()) + 60 * MIN });
    await tickAt(T0 + 20 * MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(6);
    expect((await daemon.status()).pipes[0]!.paused).toMatchObject({ reason: 'freeze', scope: 'all' });
  });

  it('a broken config is refused and the old policy keeps running; a good one takes over', async () => {
    await startDaemon(baseConfig());
    await tickAt(T0);
    const reloads = collect(emitter, 'config:reload');
    const broken = baseConfig();
    // reload() without argument re-reads the file; with no file it must refuse, keeping the config.
    expect(await daemon.reload()).toBe(false);
    expect(reloads.at(-1)).toMatchObject({ result: 'failure' });
    expect(daemon.config()).not.toBe(broken);
    await tickAt(T0 + MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);

    const next = baseConfig();
    const policies = {
      ...next.policies,
      streams: policy('streams', { replicas: 5, replicaCpuMillicores: 500, replicaMemoryGb: 2 }),
    };
    expect(await daemon.reload({ ...next, policies })).toBe(true);
    expect(reloads.at(-1)).toMatchObject({ result: 'success' });
    await tickAt(T0 + 2 * MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(5);
  });

  it('a key that keeps failing auth parks the pipe; a reload clears it', async () => {
    const config = baseConfig();
    await startDaemon({
      ...config,
      api: { ...config.api, keys: { default: { ...config.api.keys.default!, keySecret: 'wrong' } } },
    });
    const parked = collect(emitter, 'parked');
    for (let i = 0; i < 5; i++) await tickAt(T0 + i * MIN);
    expect(parked.map((p) => p.pipe).sort()).toEqual(['nightly-s3', 'orders-events']);
    expect(parked[0]).toMatchObject({ code: 'API_UNAUTHORIZED' });
    const calls = patches();
    await tickAt(T0 + 6 * MIN);
    expect(patches()).toBe(calls);
    const status = await daemon.status();
    expect(status.pipes[0]!.parked).toMatchObject({ code: 'API_UNAUTHORIZED' });

    expect(await daemon.reload(baseConfig())).toBe(true);
    await tickAt(T0 + 7 * MIN);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
    expect((await daemon.status()).pipes[0]!.parked).toBeNull();
  });

  it('a pipe of an idle service: the services list is read before a change, no PATCH is sent, and the list is read again a reconcile period later', async () => {
    const IDLE_SERVICE = 'a1000000-0000-4000-8000-000000000003';
    const config = baseConfig({ evaluate: { cron: '*/30 * * * * *', reconcileMs: 10 * MIN, concurrency: 4 } });
    await startDaemon({
      ...config,
      pipes: [
        {
          ...demoPipe('orders-events', 'streams'),
          name: 'archive-events',
          serviceId: IDLE_SERVICE,
          pipeId: 'b1000000-0000-4000-8000-000000000009',
        },
      ],
    });
    const lists = () => Object.values(cloud.stats().requests.listServices ?? {}).reduce((a, b) => a + b, 0);
    const decisions = collect(emitter, 'decision');
    await tickAt(T0);
    // The pipe is read (an empty PATCH); before its change the service's state is read (one list)
    // and the change waits: no change at all.
    expect(patches()).toBe(1);
    expect(lists()).toBe(1);
    await tickAt(T0 + MIN);
    await tickAt(T0 + 2 * MIN);
    expect(patches()).toBe(1);
    expect(lists()).toBe(1);
    expect(decisions).toEqual([
      expect.objectContaining({ pipe: 'archive-events', result: 'skipped', reason: 'service_not_running' }),
    ]);
    // A reconcile period later the pipe and the list are read again; the service still idles.
    await tickAt(T0 + 10 * MIN + 1_000);
    expect(lists()).toBe(2);
    expect(patches()).toBe(2);
    // Once the service runs, the next read of the list lets the change through.
    cloud.store.service(IDLE_SERVICE)!.service.state = 'running';
    await tickAt(T0 + 20 * MIN + 2_000);
    expect(lists()).toBe(3);
    expect(scaling('b1000000-0000-4000-8000-000000000009')).toMatchObject({ replicas: 3 });
  });

  it('a services list that fails (500) does not hold the change: it goes ahead, and the list is not asked again at every tick', async () => {
    cloud.setFaults({ listServices: { error500: 1 } });
    await startDaemon(baseConfig({ evaluate: { cron: '*/30 * * * * *', reconcileMs: 10 * MIN, concurrency: 4 } }));
    await tickAt(T0);
    expect(scaling(DEMO.pipes['orders-events'])).toMatchObject({ replicas: 3 });
    expect(cloud.stats().requests.listServices).toEqual({ 500: 1 });
    await tickAt(T0 + 5 * MIN);
    expect(cloud.stats().requests.listServices).toEqual({ 500: 1 });
  });

  it('a 424 all the same (the service went idle after its state was read) is recorded, holds every pipe of the service, and is not repeated each tick', async () => {
    // A reconcile period of 15 min: the state read at T0 is still trusted when the window opens.
    const config = baseConfig({ evaluate: { cron: '*/30 * * * * *', reconcileMs: 15 * MIN, concurrency: 4 } });
    await startDaemon(config);
    await tickAt(T0);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
    cloud.store.service(DEMO.analytics)!.service.state = 'idle';
    const first = patches();
    await tickAt(T0 + 10 * MIN); // the peak window opens: replicas 6 is refused
    expect(cloud.stats().requests.scalePipe?.[424]).toBe(1);
    await tickAt(T0 + 11 * MIN);
    await tickAt(T0 + 12 * MIN);
    expect(patches()).toBe(first + 1);
    const status = await daemon.status();
    const pipe = status.pipes[0]!; // orders-events
    expect(pipe.lastError).toMatchObject({ code: 'API_FAILED_DEPENDENCY' });
    expect(pipe.lastError!.message).toMatch(/Current state: idle/);
  });

  it('a pipe changed behind its back is seen in the answer of the next change (fields not sent) and set back (drift)', async () => {
    await startDaemon(baseConfig({ evaluate: { cron: '*/30 * * * * *', reconcileMs: 10 * MIN, concurrency: 4 } }));
    await tickAt(T0);
    scaling(DEMO.pipes['orders-events']).replicaCpuMillicores = 1000;
    const drifts = collect(emitter, 'drift');
    await tickAt(T0 + 5 * MIN);
    expect(drifts).toHaveLength(0);
    const before = patches();
    // The window opens: the change's answer is the read, and it shows the CPU nobody sent.
    await tickAt(T0 + 10 * MIN + 1_000);
    expect(drifts).toEqual([
      expect.objectContaining({
        pipe: 'orders-events',
        actual: expect.objectContaining({ replicaCpuMillicores: 1000 }),
      }),
    ]);
    expect(scaling(DEMO.pipes['orders-events'])).toMatchObject({ replicas: 6, replicaCpuMillicores: 500 });
    // The change, then the correction, and no read of its own (the third PATCH is nightly-s3's
    // reconcile read: it had no change to answer for it).
    expect(patches()).toBe(before + 3);
    expect((await daemon.status()).pipes[0]!.drifts).toBe(1);
  });
});

describe('server errors and shutdown', () => {
  it('retries a 5xx with backoff, spending an attempt, and converges; the job carries one Idempotency-Key', async () => {
    await startDaemon(baseConfig());
    await tickAt(T0);
    cloud.setFaults({ scalePipe: { error503: 1 } });
    const retry = waitForEvent(emitter, 'apply:retry');
    clock = T0 + 10 * MIN;
    await daemon.tick(clock);
    expect(await retry).toMatchObject({ pipe: 'orders-events', code: 'API_SERVER_ERROR', attempt: 1 });
    cloud.setFaults({});
    await drained([daemon]);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(6);
    const [lane] = daemon.queues().filter((q) => q.name.startsWith('apply-'));
    const jobs = (await lane!.getJobs(['completed'], 0, -1)).filter((j) => (j.data as ApplyJob).tickAt === clock);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.attemptsMade).toBe(2);
    expect((jobs[0]!.data as ApplyJob).idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('stop() lets an in-flight apply finish before closing', async () => {
    await startDaemon(baseConfig());
    await tickAt(T0);
    cloud.setFaults({ scalePipe: { latency: { probability: 1, minMs: 800, maxMs: 800 } } });
    const started = waitForEvent(emitter, 'apply:start');
    const decisions = collect(emitter, 'decision');
    clock = T0 + 10 * MIN;
    await daemon.tick(clock);
    await started;
    await daemon.stop({ timeoutMs: 5_000 });
    expect(decisions.filter((d) => d.result === 'applied').map((d) => d.pipe)).toEqual(['orders-events']);
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(6);
  });
});

describe('stale work', () => {
  it('an evaluation whose tick is long past (left by a daemon that was down) is dropped, not applied', async () => {
    await startDaemon(baseConfig());
    await tickAt(T0);
    const evaluations = collect(emitter, 'evaluation');
    const before = patches();
    clock = T0 + 30 * MIN;
    await daemon.tick(T0 + 10 * MIN); // the peak window's tick, run 20 minutes late
    await drained([daemon]);
    expect(evaluations).toHaveLength(0);
    expect(patches()).toBe(before);
    await tickAt(T0 + 30 * MIN); // the window is over: nothing to change
    expect(scaling(DEMO.pipes['orders-events']).replicas).toBe(3);
  });
});

describe("the live API's quirks", () => {
  it('quantity strings and the transient 0/null after a change neither re-send nor count as drift', async () => {
    await cloud.close();
    const fixtures = loadFixtures('config/cloud.yaml');
    cloud = await startCloud({
      fixtures: { ...fixtures, quirks: { quantityStrings: true, transientZeroMs: 60 * MIN } },
      port: 0,
      rateLimit: false,
    });
    await startDaemon(baseConfig({ evaluate: { cron: '*/30 * * * * *', reconcileMs: 5 * MIN, concurrency: 4 } }));
    const drifts = collect(emitter, 'drift');
    await tickAt(T0);
    const after = patches();
    await tickAt(T0 + MIN);
    await tickAt(T0 + 6 * MIN); // a reconcile read inside the transient window
    expect(patches()).toBe(after + 2); // one reconcile read per pipe, nothing re-sent
    expect(drifts).toHaveLength(0);
    const orders = (await daemon.status()).pipes.find((p) => p.pipe === 'orders-events')!;
    expect(orders.applied).toEqual({ replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 });
  });
});

describe('pipes behind reverse private endpoints', () => {
  it('reads each endpoint in a turn of its own, then scales only the pipe whose endpoint is Ready', async () => {
    const config = baseConfig();
    await startDaemon({
      ...config,
      pipes: [
        demoPipe('payments-msk', 'streams'),
        {
          ...demoPipe('payments-msk', 'streams'),
          name: 'audit-stream',
          serviceId: DEMO.staging,
          pipeId: 'b1000000-0000-4000-8000-000000000004',
        },
      ],
    });
    const decisions = collect(emitter, 'decision');
    // First contact is each pipe's read: its answer names the endpoints, which are read next,
    // one per turn, before any change.
    await tickAt(T0);
    expect(cloud.stats().requests.getReversePrivateEndpoint).toEqual({ 200: 2 });
    expect(scaling(DEMO.pipes['payments-msk']).replicas).toBe(3);
    // From then on a change waits for its endpoint: the window moves only the Ready one.
    await tickAt(T0 + 10 * MIN);
    expect(scaling(DEMO.pipes['payments-msk']).replicas).toBe(6);
    expect(scaling('b1000000-0000-4000-8000-000000000004').replicas).not.toBe(6);
    expect(decisions.find((d) => d.pipe === 'audit-stream' && d.result === 'skipped')).toMatchObject({
      reason: 'endpoint_not_ready',
    });
  });
});
