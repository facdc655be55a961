// Scale-ups at target by their boundary when the platform takes time to carry a change out, time
// compressed 10x as the budget scenario (10 requests per 1 s, reconcile 60 s, a tick every 3 s):
// N pipes on one key; after a cold start (no propagation), eight boundaries, each flipping half
// the pipes up (to 4 replicas) and half down (to 1) at an instant T: propagation 3 s and 18 s at
// the cloud (30 s and 3 min on the platform), each once with the lead plan of the budget alone
// (evaluate.actuation.measured false: the plan before actuation was measured) and then three times
// with the actuation the daemon measured (its confirmations of the changes before: the kind's p95
// in Redis, evaluate.actuation.expected 0): first what the budget-alone boundary measured, then
// what each boundary with the measured plan did (PhaseLead). "At target" is read back from the cloud (what the platform holds
// at T), and the daemon's own confirmation (its `confirmed` event) is counted by T too. Each phase
// starts once the phase before's confirmation reads are over, so its boundary has the key's read
// share to itself. Runs in a fresh process.
import { setTimeout as sleep } from 'node:timers/promises';
import { generatedPipeIds, generateFixtures } from '../src/cloud/index.js';
import { createDaemon, DaemonEmitter, StateStore } from '../src/daemon/index.js';
import { p95 } from '../src/daemon/store/actuation-store.js';
import { readEstimates } from '../src/daemon/views/next-scale-up.js';
import { limitEarlyMs } from '../src/policy/early-capacity.js';
import { leadPlan, leadPlanSpan } from '../src/policy/lead-plan.js';
import type { OneOffWindow, PipeConfig, Policy } from '../src/policy/types.js';
import type { Config } from '../src/config/types.js';
import { cloudProcess } from './child.js';
import { countingProxy } from './counting-proxy.js';
import { NO_BEHAVIOR } from './daemon-harness.js';
import { benchPrefix, connect, deletePrefix, REDIS_URL } from './redis.js';

export interface ActuationOptions {
  pipes: number;
}

export interface PhaseRun {
  /** The cloud's propagation delay (compressed ms). */
  propagationMs: number;
  /** How long the phase before's confirmation reads went on after its last pipe was at target,
   *  and how many pipes still had one when the wait gave up (0: all done). */
  confirmationsWaitMs: number;
  confirmationsOpen: number;
  lead: PhaseLead;
  /** What the lead plan counted on (0: the budget alone; else the measured p95 of the pipes' kind). */
  expectedActuationMs: number;
  /** Scale-ups the daemon confirmed at target by T: its `confirmed` event for the phase's target,
   *  whose instant is the daemon's read that showed it (not the cloud's value). */
  upsConfirmedByT: number;
  /** Reads of a pipe from its change's send to the read that confirmed it, every change of the
   *  phase confirmed by the end of the watch. */
  confirmReads: number;
  /** Their most in any 10 s (ten of the key's windows) over what the key's rate allows there. */
  confirmReadPeakShare: number;
  /** The key's plan: its first scale-up's start before T. */
  planLeadMs: number;
  /** Capacity the scale-ups spent early, as the daemon's verdicts count it: each one confirmed at
   *  target by T, its replicas added times (T - its confirmation), replica-ms (compressed). */
  earlyReplicaMs: number;
  /** The same at the budget's limit (policy/early-capacity.ts limitEarlyMs): the ups going one
   *  change and one confirming read each at 0.9 of the key's rate, each adding as many replicas. */
  earlyLimitReplicaMs: number;
  /** How long after T the snapshot for "at T" came back (0: in time, the figure is exact). */
  snapshotLateMs: number;
  ups: number;
  /** Scale-ups the cloud holds at target at T. */
  upsAtT: number;
  /** How late the others reached target, each (ms after T, polled every 250 ms). */
  lateMs: number[];
  /** Scale-ups (or downs) not at target 10 minutes (compressed) after T: left out of the figures above. */
  notReached: number;
  downs: number;
  /** Scale-downs the cloud held before T (must be 0). */
  downsBeforeT: number;
  /** The last scale-down at target, after T. */
  downsDoneMs: number;
  /** Changes whose outcome was unknown (a timeout, a cut connection), and changes not in force
   *  within the limit (then sent again), from the reload to the end of the phase. */
  unsettled: number;
  unconfirmed: number;
  /** The phase's actuation samples (its confirmations that are samples), those of them whose read
   *  went after the propagation but was due before it (it waited past it behind the key's other
   *  requests: sampled at its due instant, below the propagation), and those at the firstRead floor. */
  samples: number;
  samplesWaitedPast: number;
  samplesAtFloor: number;
  /** Samples bracketed from below: a read before the one that showed the target did not show it
   *  (the propagation is longer than it). */
  samplesBracketed: number;
  /** Where the samples put the propagation's p95: the p95 of their lower ends (the last read that did
   *  not show the target; 0, the change's answer, when none) and of their reads' own instants. */
  bracketLowP95Ms: number;
  bracketHighP95Ms: number;
  /** Change PATCHes and reads through the proxy from the reload to the end of the phase. */
  changeRequests: number;
  reads: number;
  limited: number;
}

export interface ActuationRun {
  /** evaluate.actuation.firstRead of the boundaries (compressed). */
  firstReadMs: number;
  coldMs: number;
  cold429: number;
  phases: PhaseRun[];
}

const RATE = { requests: 10, perMs: 1_000 };
const TICK_MS = 3_000;
const RECONCILE_MS = 60_000;
const SHARE = 0.25;
const POLL_MS = 250;
const SNAPSHOT_BEFORE_MS = 1_000;
/** Before each phase, the phase before's confirmation reads end (every change confirmed, or
 *  its reads given up at the limit), at most this long: each boundary is measured on a key whose
 *  read share is its own, and a phase that counts the measured actuation has every sample. */
const CONFIRMATIONS_LIMIT_MS = 1_200_000;
const CONFIRMATIONS_POLL_MS = 1_000;
/** evaluate.actuation.firstRead: the platform's 15 s, compressed tenfold as the rest. */
const FIRST_READ_MS = 1_500;
/** Propagation at the cloud (compressed 10x: 30 s and 3 min on the platform), budget-only plan first. */
/**
 * How a phase's lead plan counts actuation: `budget`, not at all (evaluate.actuation.measured
 * false: the plan before actuation was measured); `first`, the actuation the daemon measured at the
 * budget-alone boundary before (whose plan reserved no confirmation read: they waited behind its
 * changes past the propagation, and their samples are their due instants, the firstRead floor);
 * `second`, what it measured at the `first` boundary (its estimate still below the propagation,
 * its reads 15 % apart outnumber the free slots and wait: its samples rise by a step or two);
 * `measured`, what it measured at the `second` (the estimate settled: the daemon in operation,
 * the goal's figure).
 */
export type PhaseLead = 'budget' | 'first' | 'second' | 'measured';

const PHASES: readonly { propagationMs: number; lead: PhaseLead }[] = [
  { propagationMs: 3_000, lead: 'budget' },
  { propagationMs: 3_000, lead: 'first' },
  { propagationMs: 3_000, lead: 'second' },
  { propagationMs: 3_000, lead: 'measured' },
  { propagationMs: 18_000, lead: 'budget' },
  { propagationMs: 18_000, lead: 'first' },
  { propagationMs: 18_000, lead: 'second' },
  { propagationMs: 18_000, lead: 'measured' },
];

export async function runOnce(o: ActuationOptions): Promise<ActuationRun> {
  const fixtures = generateFixtures({ streamPipes: o.pipes, rateLimit: false });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const cloud = await cloudProcess(fixtures, { requests: RATE.requests, perMs: RATE.perMs });
  /** Each pipe's reads through the proxy this phase (by lower-case pipe id). */
  const readsAt = new Map<string, number[]>();
  const proxy = await countingProxy(cloud.url, (pipeId, read) => {
    if (!read) return;
    const id = pipeId.toLowerCase();
    let list = readsAt.get(id);
    if (!list) readsAt.set(id, (list = []));
    list.push(Date.now());
  });
  const prefix = benchPrefix('actuation');
  const pipes: PipeConfig[] = Array.from({ length: o.pipes }, (_, i) => ({
    name: `pipe-${i + 1}`,
    ...generatedPipeIds(i + 1),
    policy: i % 2 === 0 ? 'a' : 'b',
    key: 'default',
    bounds: {},
  }));
  const ids = pipes.map((p) => p.pipeId);
  const policyOf = (baseline: number, window?: { at: number; replicas: number }): Omit<Policy, 'name'> => ({
    baseline: { replicas: { value: baseline } },
    windows: window
      ? [
          {
            kind: 'oneOff',
            name: 'boundary',
            priority: 0,
            from: window.at,
            to: window.at + 3_600_000,
            target: { replicas: { value: window.replicas } },
          } satisfies OneOffWindow,
        ]
      : [],
    behavior: NO_BEHAVIOR,
  });
  const base: Config = {
    api: {
      baseUrl: proxy.url,
      fixtures: '',
      timeoutMs: 30_000,
      keys: { default: { keyId, keySecret, rateLimit: RATE } },
    },
    redis: { url: REDIS_URL, prefix },
    evaluate: { cron: '*/3 * * * * *', reconcileMs: RECONCILE_MS, concurrency: 10, readShare: SHARE },
    telemetry: { listen: '127.0.0.1:0', logLevel: 'silent' },
    dryRun: false,
    pipes,
    policies: { a: { name: 'a', ...policyOf(2) }, b: { name: 'b', ...policyOf(2) } },
  };
  const redis = connect();
  const emitter = new DaemonEmitter();
  const confirmed = new Map<string, { sentAt: number; at: number; replicas: number | undefined }>();
  /** The phase's samples: each with the time from its send to the read that showed it. */
  const samples: { ms: number; lowMs: number | undefined; readMs: number }[] = [];
  /** Outcomes of the phase that a change's confirmation depends on: unknown, then past the limit. */
  const outcomes = { unsettled: 0, unconfirmed: 0 };
  emitter.on('outcome', (o) => {
    if (o.outcome === 'unsettled' || o.outcome === 'unconfirmed') outcomes[o.outcome]++;
  });
  emitter.on('confirmed', (c) => {
    if (c.notSample === undefined)
      samples.push({ ms: c.actuationMs, lowMs: c.actuationLowMs, readMs: c.confirmedAt - c.sentAt });
  });
  emitter.on('confirmed', (c) =>
    confirmed.set(c.pipe, { sentAt: c.sentAt, at: c.confirmedAt, replicas: c.values.replicas }),
  );
  const daemon = createDaemon({
    config: base,
    prefix,
    redis,
    emitter,
    now: () => Date.now(),
    schedule: false,
    watch: false,
  });
  await daemon.start();
  const stopTicking = new AbortController();
  const ticker = (async () => {
    while (!stopTicking.signal.aborted) {
      await daemon.tick(Math.floor(Date.now() / 1000) * 1000).catch(() => undefined);
      await sleep(TICK_MS - (Date.now() % TICK_MS));
    }
  })();
  const limited = async () => (await cloud.stats()).rateLimited;
  /** Wait until no pipe has a confirmation read to come (its record's `confirming` is gone or
   *  past its limit), at most `limitMs`: how long that took, and how many still had one. */
  const confirmationsDone = async (store: StateStore, limitMs: number): Promise<{ waitedMs: number; open: number }> => {
    const t0 = Date.now();
    for (;;) {
      const pipeline = redis.pipeline();
      for (const p of pipes) pipeline.hget(store.keys.pipe(p.name), 'confirming');
      const open = ((await pipeline.exec()) ?? []).filter(([err, v]) => {
        if (err || typeof v !== 'string') return false;
        const c = JSON.parse(v) as { dueAt?: number | null } | null;
        return c?.dueAt !== null && c?.dueAt !== undefined;
      }).length;
      const waitedMs = Date.now() - t0;
      if (open === 0 || waitedMs > limitMs) return { waitedMs, open };
      await sleep(CONFIRMATIONS_POLL_MS);
    }
  };
  /** Poll the cloud until every pipe holds its value, at most `limitMs`; each pipe's first instant
   *  seen there (NaN: not within the limit). */
  const watch = async (want: readonly number[], limitMs: number): Promise<number[]> => {
    const seen: number[] = want.map(() => NaN);
    const t0 = Date.now();
    for (;;) {
      const got = await cloud.replicas(ids);
      const t = Date.now();
      got.forEach((v, i) => {
        if (Number.isNaN(seen[i]) && v.replicas === want[i]) seen[i] = t;
      });
      if (seen.every((s) => !Number.isNaN(s)) || t - t0 > limitMs) return seen;
      await sleep(POLL_MS);
    }
  };
  try {
    // Cold start, no propagation: every pipe from 1 to 2.
    const c0 = Date.now();
    const cold = await watch(
      ids.map(() => 2),
      20 * (o.pipes / RATE.requests) * 1000,
    );
    if (cold.some(Number.isNaN)) throw new Error(`actuation bench: ${cold.filter(Number.isNaN).length} pipes not at 2`);
    const coldMs = Date.now() - c0;
    const cold429 = await limited();

    const phases: PhaseRun[] = [];
    let values = { a: 2, b: 2 };
    for (const [k, phase] of PHASES.entries()) {
      await cloud.setPropagation({ stream: phase.propagationMs });
      const next = k % 2 === 0 ? { a: 4, b: 1 } : { a: 1, b: 4 };
      // budget alone: evaluate.actuation.measured false (today's plan); measured: what the daemon's
      // confirmations of the phase before recorded (their last confirmation reads given time)
      const store = new StateStore(redis, prefix);
      const { waitedMs: confirmationsWaitMs, open: confirmationsOpen } = await confirmationsDone(
        store,
        CONFIRMATIONS_LIMIT_MS,
      );
      const counted = phase.lead !== 'budget';
      const measured = counted ? await readEstimates(redis, store.keys, base) : null;
      const expectedActuationMs = measured ? Math.max(0, ...[...measured.values()].map((e) => e.ms ?? 0)) : 0;
      // maxMs: the default 10 minutes, compressed tenfold as the rest (a change cut before the cloud
      // took it waits that long, unsettled, before it is sent again)
      const at = (T: number): Config => ({
        ...base,
        evaluate: {
          ...base.evaluate,
          // firstRead: the platform's 15 s, compressed tenfold as the rest
          actuation: counted
            ? { expectedMs: 0, maxMs: 60_000, minSamples: 20, firstReadMs: FIRST_READ_MS }
            : { expectedMs: 0, maxMs: 60_000, minSamples: 20, firstReadMs: FIRST_READ_MS, measured: false },
        },
        policies: {
          a: { name: 'a', ...policyOf(values.a, { at: T, replicas: next.a }) },
          b: { name: 'b', ...policyOf(values.b, { at: T, replicas: next.b }) },
        },
      });
      // T leaves the key's lead plan its lead, and a few ticks to take the new config.
      const probe = Math.ceil((Date.now() + 600_000) / 1000) * 1000;
      const span = leadPlanSpan(Date.now());
      const plan = leadPlan(at(probe), span.from, span.to, {
        actuationMs: () => (expectedActuationMs > 0 ? expectedActuationMs : undefined),
      });
      const planLeadMs =
        probe -
        Math.min(...pipes.map((p) => plan.slots.get(p.name)?.find((s) => s.boundary === probe)?.start ?? Infinity));
      const T = Math.ceil((Date.now() + planLeadMs + 5 * TICK_MS) / 1000) * 1000;
      await cloud.resetStats();
      proxy.reset();
      confirmed.clear();
      samples.length = 0;
      readsAt.clear();
      outcomes.unsettled = outcomes.unconfirmed = 0;
      await daemon.reload(at(T));
      // What the cloud holds at T, from a snapshot taken a second before it: its values and the
      // instants its pending changes take effect (a change asked for after the snapshot takes at
      // least the propagation, 3 s, so it cannot be in effect by T). Exact whatever this process's
      // timers lag, as long as the snapshot comes before T (snapshotLateMs says).
      await sleep(Math.max(0, T - SNAPSHOT_BEFORE_MS - Date.now()));
      const snapshot = await cloud.replicas(ids);
      const snapshotLateMs = Math.max(0, Date.now() - T);
      const atT = snapshot.map((s) => {
        let v = s.replicas;
        for (const c of s.pending) if (c.effectiveAt !== null && c.effectiveAt <= T) v = c.replicas;
        return v;
      });
      const want = pipes.map((p) => next[p.policy as 'a' | 'b']);
      const isUp = pipes.map((p) => next[p.policy as 'a' | 'b'] > values[p.policy as 'a' | 'b']);
      const seen = await watch(want, 600_000);
      const upIdx = ids.map((_, i) => i).filter((i) => isUp[i]);
      const downIdx = ids.map((_, i) => i).filter((i) => !isUp[i]);
      const count = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
      phases.push({
        propagationMs: phase.propagationMs,
        lead: phase.lead,
        expectedActuationMs,
        confirmationsWaitMs,
        confirmationsOpen,
        planLeadMs,
        snapshotLateMs,
        ups: upIdx.length,
        upsAtT: upIdx.filter((i) => atT[i] === want[i]).length,
        upsConfirmedByT: upIdx.filter((i) => {
          const c = confirmed.get(pipes[i]!.name);
          return c !== undefined && c.replicas === want[i] && c.at <= T;
        }).length,
        ...confirmReadFigures(pipes, confirmed, readsAt),
        ...earlyFigures(upIdx, pipes, confirmed, want, values, T),
        lateMs: upIdx.filter((i) => atT[i] !== want[i] && !Number.isNaN(seen[i])).map((i) => seen[i]! - T),
        notReached: seen.filter(Number.isNaN).length,
        downs: downIdx.length,
        downsBeforeT: downIdx.filter((i) => atT[i] === want[i]).length,
        downsDoneMs: Math.max(...downIdx.map((i) => seen[i]!).filter((t) => !Number.isNaN(t))) - T,
        unsettled: outcomes.unsettled,
        unconfirmed: outcomes.unconfirmed,
        samples: samples.length,
        samplesWaitedPast: samples.filter((x) => x.ms < phase.propagationMs && x.readMs >= phase.propagationMs).length,
        samplesAtFloor: samples.filter((x) => x.ms === FIRST_READ_MS).length,
        samplesBracketed: samples.filter((x) => x.lowMs !== undefined).length,
        bracketLowP95Ms: p95(samples.map((x) => x.lowMs ?? 0)) ?? 0,
        bracketHighP95Ms: p95(samples.map((x) => x.readMs)) ?? 0,
        changeRequests: count(proxy.counts.changes),
        reads: count(proxy.counts.reads),
        limited: await limited(),
      });
      values = next;
    }
    return { firstReadMs: FIRST_READ_MS, coldMs, cold429, phases };
  } finally {
    stopTicking.abort();
    await ticker;
    await daemon.stop({ timeoutMs: 10_000 });
    await proxy.close();
    await cloud.close();
    await deletePrefix(redis, prefix).finally(() => redis.quit());
  }
}

/** Capacity spent early by the phase's scale-ups, from the daemon's confirmations (what its
 *  verdicts count), and the least the budget allows for as many (limitEarlyMs). */
function earlyFigures(
  upIdx: readonly number[],
  pipes: readonly PipeConfig[],
  confirmed: ReadonlyMap<string, { at: number; replicas: number | undefined }>,
  want: readonly number[],
  before: { a: number; b: number },
  T: number,
): { earlyReplicaMs: number; earlyLimitReplicaMs: number } {
  let early = 0;
  let steps = 0;
  for (const i of upIdx) {
    const p = pipes[i]!;
    const step = want[i]! - before[p.policy as 'a' | 'b'];
    steps += step;
    const c = confirmed.get(p.name);
    if (c !== undefined && c.replicas === want[i] && c.at <= T) early += step * (T - c.at);
  }
  const n = upIdx.length;
  return { earlyReplicaMs: early, earlyLimitReplicaMs: n === 0 ? 0 : (steps / n) * limitEarlyMs(n, RATE) };
}

const CONFIRM_WINDOW_MS = 10 * RATE.perMs;

/** The phase's confirmation reads: each confirmed pipe's reads from its change's send to the read
 *  that confirmed it, and their peak in any CONFIRM_WINDOW_MS over the read share's allowance
 *  there: the credits it earns in that time, and the one window's worth plus one it may have saved
 *  before (budget.ts TAKE: the share holds on average, its credits capped at share x limit + 1). */
function confirmReadFigures(
  pipes: readonly PipeConfig[],
  confirmed: ReadonlyMap<string, { sentAt: number; at: number }>,
  readsAt: ReadonlyMap<string, readonly number[]>,
): { confirmReads: number; confirmReadPeakShare: number } {
  const at: number[] = [];
  for (const p of pipes) {
    const c = confirmed.get(p.name);
    if (!c) continue;
    // the proxy sees the answer a moment after the daemon stamps the read
    for (const t of readsAt.get(p.pipeId.toLowerCase()) ?? []) if (t > c.sentAt && t <= c.at + 100) at.push(t);
  }
  at.sort((a, b) => a - b);
  let peak = 0;
  let j = 0;
  for (const [i, t] of at.entries()) {
    while (t - at[j]! >= CONFIRM_WINDOW_MS) j++;
    peak = Math.max(peak, i - j + 1);
  }
  // confirmation reads take the slots the changes leave free: against the key's whole rate
  const allowed = (RATE.requests * CONFIRM_WINDOW_MS) / RATE.perMs;
  return { confirmReads: at.length, confirmReadPeakShare: peak / allowed };
}
