// The request budget of one key, time compressed 10x: 10 requests per 1 s at the cloud
// and in the daemon, reconcile 60 s, a tick every 3 s, the daemon's clock running with real time.
// cold start: N pipes whose baseline differs from what they run, until every one is at target;
// steady: a while with nothing to change, reads against the key's budget and how often each pipe
// is read; boundary: half the pipes scale up and half down at one instant T, placed so that the
// key's lead plan (leadTime auto) has its lead. Runs in a fresh process.
import { appendFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatedPipeIds, generateFixtures } from '../src/cloud/index.js';
import { createDaemon } from '../src/daemon/index.js';
import { reconcilePeriodMs } from '../src/policy/key-budget.js';
import { ACTUATION_DEFAULTS, leadPlan, leadPlanSpan } from '../src/policy/lead-plan.js';
import type { OneOffWindow, PipeConfig, Policy } from '../src/policy/types.js';
import type { Config } from '../src/config/types.js';
import { cloudProcess } from './child.js';
import { countingProxy, type ProxyTraceEntry } from './counting-proxy.js';
import { NO_BEHAVIOR } from './daemon-harness.js';
import { benchPrefix, connect, deletePrefix, REDIS_URL } from './redis.js';

export interface BudgetOptions {
  pipes: number;
  steadyMs: number;
  /** Only the two cold starts (first deploy, restart with Redis intact): about 6 minutes at 1,200 pipes. */
  coldOnly?: boolean;
  /** Print the key's queue and the evaluation lag every 10 s of the steady phase (stderr). */
  trace?: boolean;
}

export interface BudgetRun {
  coldMs: number;
  /** Scaling PATCHes (changes or reads) and services-list GETs during the cold start. */
  coldRequests: number;
  /** Of those PATCHes, told apart by body (a pass-through proxy): the changes, the reads of a pipe
   *  before its first change (what a first contact made a read would cost), and the reconcile reads
   *  of pipes whose change had answered already (the read share's, while no change waited). */
  coldChanges: number;
  coldContactReads: number;
  coldReconcileReads: number;
  coldListReads: number;
  cold429: number;
  /** Seconds of the cold start in which no request was answered (the budget's pacing, a stall). */
  coldIdleSeconds: number;
  /** Restart with Redis intact: the daemon stopped, the config changed every pipe's target, a new
   *  daemon on the same Redis; its time to all at target, and what it sent. */
  restartMs: number;
  restartChanges: number;
  restartReadsBeforeChange: number;
  restart429: number;
  steadyMs: number;
  steadyReads: number;
  steady429: number;
  /** The longest time a pipe went unread in the steady phase: between two reads, or from its last
   *  read to the phase's end. */
  steadyMaxGapMs: number;
  /** The latest first read of a pipe after the phase began. */
  steadyFirstReadMs: number;
  steadyPeriodMs: number;
  steadyMinReads: number;
  /** What the key's lead plan starts the boundary's first scale-up at, before T. */
  planLeadMs: number;
  /** The first scale-up answered, before T (positive: that long before). */
  firstUpBeforeTMs: number;
  upsAtT: number;
  /** The last scale-up answered, relative to T (negative: before T). */
  upsDoneMs: number;
  downsBeforeT: number;
  /** The last scale-down answered, after T. */
  downsDoneMs: number;
  boundary429: number;
  boundaryRequests: number;
}

const RATE = { requests: 10, perMs: 1_000 };
const TICK_MS = 3_000;
const RECONCILE_MS = 60_000;
const SHARE = 0.25;

/**
 * With BUDGET_TRACE=<file>, every request through the proxy is written to that file (JSON lines:
 * the phase, when the proxy received it and had its answer, the cloud's window headers), to see
 * where a cold start's time goes.
 */
function traceTo(phase: () => string | null): ((e: ProxyTraceEntry) => void) | undefined {
  const file = process.env.BUDGET_TRACE;
  if (!file) return undefined;
  writeFileSync(file, '');
  return (e) => appendFileSync(file, `${JSON.stringify({ phase: phase(), ...e })}\n`);
}

export async function runOnce(o: BudgetOptions): Promise<BudgetRun> {
  const fixtures = generateFixtures({ streamPipes: o.pipes, rateLimit: false });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const cloud = await cloudProcess(fixtures, { requests: RATE.requests, perMs: RATE.perMs });
  // The daemon talks to the cloud through a pass-through proxy that tells a read (an empty PATCH)
  // from a change: the cloud's stats count both as scalePipe.
  let phase: 'cold' | 'restart' | null = 'cold';
  const changedIds = new Set<string>();
  const coldCounts = { changes: 0, contactReads: 0, reconcileReads: 0 };
  const restartCounts = { changes: 0, readsBeforeChange: 0 };
  const proxy = await countingProxy(
    cloud.url,
    (pipeId, read) => {
      if (phase === 'restart') {
        if (!read) restartCounts.changes += 1;
        else if (!changedIds.has(pipeId)) restartCounts.readsBeforeChange += 1;
        if (!read) changedIds.add(pipeId);
        return;
      }
      if (phase !== 'cold') return;
      if (!read) {
        coldCounts.changes += 1;
        changedIds.add(pipeId);
      } else if (changedIds.has(pipeId)) coldCounts.reconcileReads += 1;
      else coldCounts.contactReads += 1;
    },
    undefined,
    traceTo(() => phase),
  );
  const prefix = benchPrefix('budget');
  // Boundary T is set once cold start and steady are over; the window is placed then (reload).
  const up: Policy = { name: 'up', baseline: { replicas: { value: 2 } }, windows: [], behavior: NO_BEHAVIOR };
  const down: Policy = { name: 'down', baseline: { replicas: { value: 2 } }, windows: [], behavior: NO_BEHAVIOR };
  const pipes: PipeConfig[] = Array.from({ length: o.pipes }, (_, i) => ({
    name: `pipe-${i + 1}`,
    ...generatedPipeIds(i + 1),
    policy: i % 2 === 0 ? 'up' : 'down',
    key: 'default',
    bounds: {},
  }));
  const config: Config = {
    api: {
      baseUrl: proxy.url,
      fixtures: '',
      timeoutMs: 30_000,
      keys: { default: { keyId, keySecret, rateLimit: RATE } },
    },
    redis: { url: REDIS_URL, prefix },
    evaluate: {
      cron: '*/3 * * * * *',
      reconcileMs: RECONCILE_MS,
      concurrency: 10,
      readShare: SHARE,
      // the key's budget alone: the lead plan counts no actuation (as the bench's own plan for T
      // does); the actuation scenario measures the plan that counts the measured one
      actuation: { ...ACTUATION_DEFAULTS, measured: false },
    },
    telemetry: { listen: '127.0.0.1:0', logLevel: 'silent' },
    dryRun: false,
    pipes,
    policies: { up, down },
  };
  const redis = connect();
  const start = (c: Config) =>
    createDaemon({ config: c, prefix, redis, now: () => Date.now(), schedule: false, watch: false });
  let daemon = start(config);
  // Every answer about a pipe (a change's or a read's), with its time: what it runs and when we learnt it.
  const answers = new Map<string, { at: number; replicas: number }[]>();
  const listen = (d: typeof daemon) =>
    d.emitter.on('applied', (e) => {
      const list = answers.get(e.pipe) ?? [];
      list.push({ at: Date.now(), replicas: e.values.replicas ?? 0 });
      answers.set(e.pipe, list);
    });
  listen(daemon);
  const now = (p: string) => answers.get(p)?.at(-1)?.replicas;
  await daemon.start();
  let stopTicking = new AbortController();
  const tick = async () => {
    const stop = stopTicking.signal;
    while (!stop.aborted) {
      await daemon.tick(Math.floor(Date.now() / 1000) * 1000).catch(() => undefined);
      // ends at once when stopped: a restart does not wait out the tick it will not make
      await sleep(TICK_MS - (Date.now() % TICK_MS), undefined, { signal: stop }).catch(() => undefined);
    }
  };
  let ticker = tick();
  // The reads of a key whose reads go round never stop; waiting for the changes' turns is enough.
  const drainedQueues = async () => {
    for (let i = 0; i < 600; i++) {
      const counts = await Promise.all(
        daemon
          .queues()
          .filter((q) => q.name !== 'evaluate')
          .map((q) => q.getJobCounts('waiting', 'prioritized', 'active', 'delayed')),
      );
      const busy = counts.reduce((n, c) => n + Object.values(c).reduce((a, b) => a + b, 0), 0);
      if (busy === 0) return;
      await sleep(100);
    }
  };
  const total = async () => {
    const s = await cloud.stats();
    const count = (op: string) => Object.values(s.requests[op] ?? {}).reduce((a, b) => a + b, 0);
    return { requests: count('scalePipe'), lists: count('listServices'), limited: s.rateLimited };
  };
  const waitFor = async (check: () => boolean, limitMs: number) => {
    const t0 = Date.now();
    while (!check()) {
      if (Date.now() - t0 > limitMs) throw new Error('budget bench: timed out');
      await sleep(50);
    }
    return Date.now() - t0;
  };
  try {
    // Cold start: every pipe from 1 to 2.
    const c0 = Date.now();
    await waitFor(() => pipes.every((p) => now(p.name) === 2), 20 * (o.pipes / RATE.requests) * 1000);
    const coldMs = Date.now() - c0;
    phase = null;
    const coldTotal = await total();
    const seconds = new Set<number>();
    for (const list of answers.values()) for (const a of list) seconds.add(Math.floor((a.at - c0) / 1000));
    const coldIdleSeconds = Math.ceil(coldMs / 1000) - seconds.size;

    // Restart with Redis intact: the daemon stops; while it is down the config raises every pipe's
    // target to 3; a new daemon starts on the same Redis and knows every pipe: no read before a change.
    const restarted = async (c: Config) => {
      stopTicking.abort();
      await ticker;
      await daemon.stop({ timeoutMs: 10_000 });
      // Counted from here: the stopped daemon's last reads (its reads go round) are not the new one's.
      phase = 'restart';
      daemon = start(c);
      listen(daemon);
      await daemon.start();
      stopTicking = new AbortController();
      ticker = tick();
    };
    const three = (x: Policy): Policy => ({ ...x, baseline: { replicas: { value: 3 } } });
    await drainedQueues();
    await cloud.resetStats();
    changedIds.clear();
    const r0 = Date.now();
    await restarted({ ...config, policies: { up: three(up), down: three(down) } });
    await waitFor(() => pipes.every((p) => now(p.name) === 3), 20 * (o.pipes / RATE.requests) * 1000);
    const restartMs = Date.now() - r0;
    phase = null;
    const restartTotal = await total();
    // Back to 2 for the steady phase, by a reload (not measured).
    await daemon.reload(config);
    await waitFor(() => pipes.every((p) => now(p.name) === 2), 20 * (o.pipes / RATE.requests) * 1000);
    await drainedQueues();
    await cloud.resetStats();
    const restart = {
      restartMs,
      restartChanges: restartCounts.changes,
      restartReadsBeforeChange: restartCounts.readsBeforeChange,
      restart429: restartTotal.limited,
    };
    if (o.coldOnly)
      return {
        ...emptyRun(),
        coldMs,
        coldRequests: coldTotal.requests,
        coldListReads: coldTotal.lists,
        cold429: coldTotal.limited,
        coldIdleSeconds,
        coldChanges: coldCounts.changes,
        coldContactReads: coldCounts.contactReads,
        coldReconcileReads: coldCounts.reconcileReads,
        ...restart,
      };

    // Steady: nothing to change, so every request at the cloud is a reconcile read. Each pipe's
    // reads are the values its lastReadAt (the answer's instant) takes, polled every second.
    const s0 = Date.now();
    const reads = new Map<string, number[]>(pipes.map((p) => [p.name, []]));
    const poll = async () => {
      const multi = redis.multi();
      for (const p of pipes) multi.hget(daemon.store.keys.pipe(p.name), 'lastReadAt');
      const got = (await multi.exec()) ?? [];
      pipes.forEach((p, i) => {
        const raw = got[i]?.[1];
        const at = Number(typeof raw === 'string' ? JSON.parse(raw) : NaN);
        const list = reads.get(p.name)!;
        if (Number.isFinite(at) && at !== list.at(-1)) list.push(at);
      });
    };
    let lag = 0;
    const onEvaluation = (e: { lagMs: number }) => {
      lag = Math.max(lag, e.lagMs);
    };
    daemon.emitter.on('evaluation', onEvaluation);
    let traced = s0;
    while (Date.now() - s0 < o.steadyMs) {
      await poll();
      if (o.trace && Date.now() - traced >= 10_000) {
        traced = Date.now();
        const counts = await Promise.all(
          daemon.queues().map((q) => q.getJobCounts('waiting', 'prioritized', 'active', 'delayed')),
        );
        const done = [...reads.values()].reduce((a, l) => a + Math.max(0, l.length - 1), 0);
        process.stderr.write(
          `steady +${Math.round((traced - s0) / 1000)} s: reads ${done} (${(done / ((traced - s0) / 1000)).toFixed(2)}/s), queues ${JSON.stringify(counts)}, evaluation lag ${lag} ms\n`,
        );
        lag = 0;
      }
      await sleep(1_000);
    }
    daemon.emitter.off('evaluation', onEvaluation);
    await poll();
    const s1 = Date.now();
    const steady = await total();
    const steadyPeriodMs = reconcilePeriodMs(o.pipes, RECONCILE_MS, SHARE, RATE);
    let steadyMaxGapMs = 0;
    let steadyFirstReadMs = 0;
    let steadyMinReads = Infinity;
    for (const p of pipes) {
      // between two reads in the steady phase, and from the last one to its end; the first read
      // after the cold start (whose changes all came within two minutes) is reported apart
      const [, ...rest] = reads.get(p.name)!;
      steadyMinReads = Math.min(steadyMinReads, rest.length);
      steadyFirstReadMs = Math.max(steadyFirstReadMs, (rest[0] ?? s1) - s0);
      for (let i = 1; i <= rest.length; i++) steadyMaxGapMs = Math.max(steadyMaxGapMs, (rest[i] ?? s1) - rest[i - 1]!);
    }
    await cloud.resetStats();

    // Boundary: at T the up pipes go to 4, the down pipes to 1. T leaves the key's lead plan its
    // lead (and a few ticks to take the new config).
    const w = (at: number, target: number): OneOffWindow => ({
      kind: 'oneOff',
      name: 'boundary',
      priority: 0,
      from: at,
      to: at + 3_600_000,
      target: { replicas: { value: target } },
    });
    const at = (T: number): Config => ({
      ...config,
      policies: { up: { ...up, windows: [w(T, 4)] }, down: { ...down, windows: [w(T, 1)] } },
    });
    const probe = Math.ceil((Date.now() + 600_000) / 1000) * 1000;
    const span = leadPlanSpan(Date.now());
    const plan = leadPlan(at(probe), span.from, span.to);
    const planLeadMs =
      probe -
      Math.min(...pipes.map((p) => plan.slots.get(p.name)?.find((s) => s.boundary === probe)?.start ?? Infinity));
    const T = Math.ceil((Date.now() + planLeadMs + 5 * TICK_MS) / 1000) * 1000;
    const b0 = Date.now();
    await daemon.reload(at(T));
    const ups = pipes.filter((p) => p.policy === 'up').map((p) => p.name);
    const downs = pipes.filter((p) => p.policy === 'down').map((p) => p.name);
    const reached = (p: string, v: number) => answers.get(p)?.find((a) => a.at >= b0 && a.replicas === v)?.at;
    await waitFor(() => ups.every((p) => reached(p, 4) !== undefined) && Date.now() >= T, 1_200_000);
    const upTimes = ups.map((p) => reached(p, 4)!);
    await waitFor(() => downs.every((p) => reached(p, 1) !== undefined), 1_200_000);
    const downTimes = downs.map((p) => reached(p, 1)!);
    const boundary = await total();
    return {
      coldMs,
      coldRequests: coldTotal.requests,
      coldListReads: coldTotal.lists,
      cold429: coldTotal.limited,
      coldIdleSeconds,
      coldChanges: coldCounts.changes,
      coldContactReads: coldCounts.contactReads,
      coldReconcileReads: coldCounts.reconcileReads,
      ...restart,
      steadyMs: s1 - s0,
      steadyReads: steady.requests,
      steady429: steady.limited,
      steadyMaxGapMs,
      steadyFirstReadMs,
      steadyPeriodMs,
      steadyMinReads: steadyMinReads === Infinity ? 0 : steadyMinReads,
      planLeadMs,
      firstUpBeforeTMs: T - Math.min(...upTimes),
      upsAtT: upTimes.filter((t) => t <= T).length,
      upsDoneMs: Math.max(...upTimes) - T,
      downsBeforeT: downTimes.filter((t) => t < T).length,
      downsDoneMs: Math.max(...downTimes) - T,
      boundary429: boundary.limited,
      boundaryRequests: boundary.requests,
    };
  } finally {
    stopTicking.abort();
    await ticker;
    await daemon.stop({ timeoutMs: 10_000 });
    await proxy.close();
    await cloud.close();
    await deletePrefix(redis, prefix).finally(() => redis.quit());
  }
}

function emptyRun(): BudgetRun {
  return {
    coldMs: 0,
    coldRequests: 0,
    coldChanges: 0,
    coldContactReads: 0,
    coldReconcileReads: 0,
    coldListReads: 0,
    cold429: 0,
    coldIdleSeconds: 0,
    restartMs: 0,
    restartChanges: 0,
    restartReadsBeforeChange: 0,
    restart429: 0,
    steadyMs: 0,
    steadyReads: 0,
    steady429: 0,
    steadyMaxGapMs: 0,
    steadyFirstReadMs: 0,
    steadyPeriodMs: 0,
    steadyMinReads: 0,
    planLeadMs: 0,
    firstUpBeforeTMs: 0,
    upsAtT: 0,
    upsDoneMs: 0,
    downsBeforeT: 0,
    downsDoneMs: 0,
    boundary429: 0,
    boundaryRequests: 0,
  };
}
