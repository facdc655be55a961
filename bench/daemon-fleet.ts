// A fleet at a boundary: P pipes on K keys (one service per key), three daemon replicas
// (`node dist/cli/main.js run <config>`, as deployed) sharing one Redis (a redis-server of the
// run's own, so its memory is the fleet's alone), the embedded cloud carrying every change out
// after a propagation (30 s on the platform's scale), the platform's limit of 10 requests per 10 s
// per key, time compressed C-fold (10 by default: 10 requests per 1 s, a tick every 3 s,
// reconcile 60 s, firstRead 1.5 s, the actuation's limit 60 s, the propagation 3 s). A cold start
// (every pipe from 1 to 2 replicas) and, once its confirmations are over, one boundary T at which
// every pipe goes to 4; the replicas take the new config on SIGHUP. Halfway through the longest
// key's lead one replica is killed with SIGKILL and started again after 30 s (platform scale).
// What the figures need is read where the daemon keeps it: each pipe's confirmation (the read
// that showed its target, and its instant) from the replicas' Redis; the plan's lead per key from
// leadPlan() on the loaded config; what went over the wire from a counting proxy in front of the
// cloud; each process's CPU time and peak RSS from /proc, and each replica's V8 heap from its own
// /metrics, scraped every 10 s as Prometheus would. The replicas run with the NODE_OPTIONS of
// config/kubernetes/deployment.yaml (its heap cap). Runs in a fresh process (child.ts).
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { stringify } from 'yaml';
import { generateFixtures } from '../src/cloud/index.js';
import { parseConfig } from '../src/config/index.js';
import type { Config } from '../src/config/types.js';
import { readEstimates, StateStore } from '../src/daemon/index.js';
import { leadPlan, leadPlanSpan } from '../src/policy/lead-plan.js';
import { freePort, RedisServer, Replicas, shippedNodeOptions, type ReplicaRun } from './chaos/processes.js';
import { cloudProcess } from './child.js';
import { countingProxy } from './counting-proxy.js';

export interface FleetOptions {
  pipes: number;
  keys: number;
  replicas: number;
  /** Time compression: 10 runs the platform's 10 s window in 1 s. Must divide 30 (the tick). */
  compression: number;
  /** The lead plan counts the actuation the daemon measured (its samples of the cold start)
   *  instead of the configured expectation, the propagation. */
  measured: boolean;
  /** Kill a replica during the lead (SIGKILL) and start it again. */
  kill: boolean;
  /** A folder to keep each replica process's whole output in (replica-<label>.log), if any. */
  logs?: string;
  /** A folder for each replica's CPU profile (--cpu-prof; a SIGKILLed replica writes none), if any. */
  profile?: string;
}

/** Platform-scale settings, divided by the compression. */
const PLATFORM = {
  windowMs: 10_000,
  requests: 10,
  tickMs: 30_000,
  reconcileMs: 600_000,
  firstReadMs: 15_000,
  actuationMaxMs: 600_000,
  propagationMs: 30_000,
  /** api.timeout's default. */
  timeoutMs: 30_000,
  /** A killed replica's new pod is up this long after the kill. */
  restartMs: 30_000,
} as const;
const FROM = 2;
const TO = 4;
const SAMPLE_MS = 1_000;
const POLL_MS = 500;

export interface ProcessUse {
  readonly label: string;
  readonly pid: number;
  /** user + system CPU, seconds, at its last sample (a killed replica: just before the kill). */
  readonly cpuS: number;
  /** VmHWM, MB. */
  readonly peakRssMb: number;
}

/** A replica's memory as its own /metrics gives it (prom-client's process and Node.js metrics),
 *  MB: the scrape whose RSS was the highest, and the highest heap in use of any scrape. */
export interface HeapUse {
  readonly label: string;
  readonly scrapes: number;
  readonly rssMb: number;
  readonly heapTotalMb: number;
  readonly heapUsedMb: number;
  readonly externalMb: number;
  readonly maxHeapUsedMb: number;
}

export interface KeyFigures {
  readonly key: string;
  readonly ups: number;
  /** Confirmed at target by T: the pipe's record holds a confirmation of 4 replicas at or before T. */
  readonly confirmedByT: number;
  /** What the cloud held at T (its snapshot a second before, with the changes due by T). */
  readonly atT: number;
  /** The plan's lead for the key's boundary (leadPlan on the config the replicas loaded), ms. */
  readonly planLeadMs: number;
  /** T minus the key's first change PATCH of the boundary (what the replicas did), ms. */
  readonly sentLeadMs: number;
  /** The bound of issue 34 point 1 without its 1.15: 2N / (0.9 r) + A, ms (compressed). */
  readonly limitMs: number;
  readonly limited: number;
  readonly changes: number;
  readonly reads: number;
  /** Confirmations after T (late), and pipes not confirmed at 4 by the end of the watch. */
  readonly lateMaxMs: number;
  readonly unconfirmed: number;
  /** The first few scale-ups not confirmed by T: their planned slot, first change PATCH and
   *  confirmation, ms relative to T (compressed). */
  readonly misses: readonly { readonly slot: number; readonly sent: number; readonly confirmed: number }[];
  /** Each scale-up's first change PATCH after its slot's start (ms, compressed): p50, p95, max. */
  readonly sentAfterSlotMs: { readonly p50: number; readonly p95: number; readonly max: number };
}

export interface EvaluationPhase {
  readonly name: string;
  readonly from: number;
  readonly to: number;
  /** Evaluations a second, all replicas together. */
  readonly perS: number;
  /** Their mean wait from the tick to the evaluation, s (compressed). */
  readonly meanLagS: number;
  /** Their mean time to run (pipescaler_evaluation_duration_seconds), ms: with the evaluate
   *  workers' concurrency, what bounds the rate when the CPU is not. */
  readonly meanEvalMs: number;
}

/** Percentiles of a list of numbers (NaN when empty). */
function spread(xs: number[]): { p50: number; p95: number; max: number } {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  const at = (q: number) => (s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]!);
  return { p50: at(0.5), p95: at(0.95), max: s.length === 0 ? NaN : s[s.length - 1]! };
}

/** The evaluations of each phase, from the scrapes' cumulative tick-lag sums and counts. */
function evaluationPhases(
  lags: readonly { label: string; at: number; sumS: number; count: number; evalSumS: number; evalCount: number }[],
  phases: readonly { name: string; from: number; to: number }[],
): EvaluationPhase[] {
  const byLabel = new Map<string, (typeof lags)[number][]>();
  for (const l of lags) {
    const list = byLabel.get(l.label) ?? [];
    list.push(l);
    byLabel.set(l.label, list);
  }
  return phases.map((ph) => {
    let count = 0;
    let sumS = 0;
    let evalCount = 0;
    let evalSumS = 0;
    for (const list of byLabel.values())
      for (let i = 1; i < list.length; i++) {
        const a = list[i - 1]!;
        const b = list[i]!;
        if (b.at <= ph.from || b.at > ph.to) continue;
        count += b.count - a.count;
        sumS += b.sumS - a.sumS;
        evalCount += b.evalCount - a.evalCount;
        evalSumS += b.evalSumS - a.evalSumS;
      }
    return {
      ...ph,
      perS: (count * 1000) / Math.max(1, ph.to - ph.from),
      meanLagS: count > 0 ? sumS / count : NaN,
      meanEvalMs: evalCount > 0 ? (evalSumS * 1000) / evalCount : NaN,
    };
  });
}

export interface FleetRun {
  readonly options: FleetOptions;
  readonly actuationCountedMs: number;
  /** Cold start: from the replicas' start to every pipe confirmed at 2 (ms, compressed). */
  readonly coldMs: number;
  readonly coldChanges: number;
  readonly coldReads: number;
  readonly coldLimited: number;
  readonly keys: readonly KeyFigures[];
  /** Instants relative to T (ms, negative: before): the reload, the kill, the restart's "daemon started". */
  readonly reloadAt: number;
  readonly killAt: number | null;
  readonly restartedAt: number | null;
  readonly snapshotLateMs: number;
  /** The boundary phase's 429s: instant (ms from T), key, and whether a read or a change got it. */
  readonly limitedAt: readonly { readonly at: number; readonly key: string; readonly read: boolean }[];
  /** The replicas' evaluations (their /metrics' pipescaler_tick_lag_seconds) over the boundary's
   *  phases: from the reload to the kill, to the restart, to T (compressed ms from T). */
  readonly evaluations: readonly EvaluationPhase[];
  readonly totalChanges: number;
  readonly totalReads: number;
  readonly totalLimited: number;
  readonly replicas: readonly ProcessUse[];
  /** Per replica run, from its /metrics scraped every HEAP_SCRAPE_MS (as Prometheus would). */
  readonly heaps: readonly HeapUse[];
  /** The replicas' NODE_OPTIONS (the Kubernetes manifest's). */
  readonly nodeOptions: string;
  readonly cloud: ProcessUse;
  readonly redis: ProcessUse;
  readonly redisUsedMemoryPeakMb: number;
  readonly redisUsedMemoryMb: number;
  /** Replicas' exits at the end (SIGTERM): code each, null when it had to be killed. */
  readonly exits: readonly (number | string | null)[];
  readonly wallMs: number;
}

const CLK_TCK = 100;

function sampleProc(pid: number): { cpuS: number; hwmMb: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command's closing parenthesis: state is field 3, utime 14, stime 15
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cpuS = (Number(f[11]) + Number(f[12])) / CLK_TCK;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status);
    return { cpuS, hwmMb: hwm ? Number(hwm[1]) / 1024 : 0 };
  } catch {
    return null; // gone
  }
}

/** The last sample of each process watched, kept when it exits. */
class ProcSampler {
  private readonly last = new Map<number, { label: string; cpuS: number; hwmMb: number }>();
  private readonly timer: NodeJS.Timeout;
  private readonly watched = new Map<number, string>();

  constructor() {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  watch(pid: number, label: string): void {
    this.watched.set(pid, label);
    this.sample();
  }

  sample(): void {
    for (const [pid, label] of this.watched) {
      const s = sampleProc(pid);
      // a process being killed reads VmHWM 0 before it is gone: its last sample stands
      if (s && s.hwmMb > 0) this.last.set(pid, { label, ...s });
    }
  }

  use(pid: number, label: string): ProcessUse {
    const s = this.last.get(pid);
    return { label, pid, cpuS: s?.cpuS ?? NaN, peakRssMb: s?.hwmMb ?? NaN };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

const HEAP_SCRAPE_MS = 10_000;
const MB = 2 ** 20;

/** Each replica's /metrics every HEAP_SCRAPE_MS: its RSS and V8 heap, told apart. */
class HeapScraper {
  private readonly urls = new Map<string, string>();
  private readonly seen = new Map<
    string,
    { scrapes: number; at: Omit<HeapUse, 'label' | 'scrapes' | 'maxHeapUsedMb'>; maxHeapUsedMb: number }
  >();
  private readonly timer: NodeJS.Timeout;
  /** Each scrape's pipescaler_tick_lag_seconds sum and count (cumulative over the replica's life). */
  readonly lags: { label: string; at: number; sumS: number; count: number; evalSumS: number; evalCount: number }[] = [];

  constructor() {
    this.timer = setInterval(() => void this.scrapeAll(), HEAP_SCRAPE_MS);
  }

  /** The replica's telemetry URL from its "telemetry listening" line. */
  watch(run: ReplicaRun): void {
    for (const line of run.stdout) {
      if (!line.includes('telemetry listening')) continue;
      const url = (JSON.parse(line) as { url?: string }).url;
      if (url) this.urls.set(run.label, url);
    }
  }

  forget(label: string): void {
    this.urls.delete(label);
  }

  private async scrapeAll(): Promise<void> {
    await Promise.all([...this.urls].map(([label, url]) => this.scrape(label, url)));
  }

  private async scrape(label: string, url: string): Promise<void> {
    let text: string;
    try {
      const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(HEAP_SCRAPE_MS / 2) });
      text = await res.text();
    } catch {
      return; // killed, or too slow to answer: the next scrape
    }
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / MB;
    const at = {
      rssMb: value('process_resident_memory_bytes'),
      heapTotalMb: value('nodejs_heap_size_total_bytes'),
      heapUsedMb: value('nodejs_heap_size_used_bytes'),
      externalMb: value('nodejs_external_memory_bytes'),
    };
    if (Number.isNaN(at.rssMb)) return;
    const raw = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
    const lagSum = raw('pipescaler_tick_lag_seconds_sum');
    const lagCount = raw('pipescaler_tick_lag_seconds_count');
    const evalSumS = raw('pipescaler_evaluation_duration_seconds_sum');
    const evalCount = raw('pipescaler_evaluation_duration_seconds_count');
    if ([lagSum, lagCount, evalSumS, evalCount].every(Number.isFinite))
      this.lags.push({ label, at: Date.now(), sumS: lagSum, count: lagCount, evalSumS, evalCount });
    const s = this.seen.get(label);
    if (!s) this.seen.set(label, { scrapes: 1, at, maxHeapUsedMb: at.heapUsedMb });
    else {
      s.scrapes++;
      if (at.rssMb > s.at.rssMb) s.at = at;
      s.maxHeapUsedMb = Math.max(s.maxHeapUsedMb, at.heapUsedMb);
    }
  }

  use(label: string): HeapUse {
    const s = this.seen.get(label);
    return s
      ? { label, scrapes: s.scrapes, ...s.at, maxHeapUsedMb: s.maxHeapUsedMb }
      : { label, scrapes: 0, rssMb: NaN, heapTotalMb: NaN, heapUsedMb: NaN, externalMb: NaN, maxHeapUsedMb: NaN };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export async function runOnce(o: FleetOptions): Promise<FleetRun> {
  const t0 = Date.now();
  const c = o.compression;
  if (!Number.isInteger(PLATFORM.tickMs / c / 1000)) throw new Error(`fleet: compression ${c} must divide 30`);
  const ms = (platformMs: number) => Math.round(platformMs / c);
  const rate = { requests: PLATFORM.requests, perMs: ms(PLATFORM.windowMs) };
  const propagationMs = ms(PLATFORM.propagationMs);

  const fixtures = generateFixtures({
    streamPipes: o.pipes,
    keysPerOrganization: o.keys,
    servicesPerOrganization: o.keys,
    rateLimit: false,
  });
  fixtures.propagation = { stream: propagationMs };
  const org = fixtures.organizations![0]!;
  const services = org.services ?? [];
  const keyName = (k: number) => (k === 0 ? 'default' : `k${k + 1}`);
  const env: Record<string, string> = {};
  const keySpecs = fixtures.apiKeys.map((key, k) => {
    const id = k === 0 ? 'PIPESCALER_KEY_ID' : `FLEET_KEY_ID_${k + 1}`;
    const secret = k === 0 ? 'PIPESCALER_KEY_SECRET' : `FLEET_KEY_SECRET_${k + 1}`;
    env[id] = key.keyId;
    env[secret] = key.keySecret;
    return {
      keyId: `\${${id}}`,
      keySecret: `\${${secret}}`,
      rateLimit: { requests: rate.requests, per: `${rate.perMs}ms` },
    };
  });
  // service k holds the pipes of key k (generateFixtures spreads pipe i over service i % K)
  const pipes = services.flatMap((svc, k) =>
    (svc.pipes ?? []).map((p) => ({
      name: `p-${p.id.slice(-6)}`,
      organizationId: org.id,
      serviceId: svc.id,
      pipeId: p.id,
      policy: 'fleet',
      key: keyName(k),
    })),
  );
  const keyOfPipe = new Map(pipes.map((p) => [p.pipeId.toLowerCase(), p.key]));
  const keyNames = keySpecs.map((_, k) => keyName(k));

  const dir = await mkdtemp(join(tmpdir(), 'pipescaler-fleet-'));
  const configPath = join(dir, 'fleet.yaml');
  const sampler = new ProcSampler();
  const heaps = new HeapScraper();
  const redisServer = new RedisServer(await freePort(), dir);
  const cloud = await cloudProcess(fixtures, rate);
  sampler.watch(cloud.pid, 'cloud');
  /** Per pipe (lower-case id): the first change PATCH since the last reset. */
  const firstChange = new Map<string, number>();
  const perKey = new Map(keyNames.map((k) => [k, { changes: 0, reads: 0, limited: 0 }]));
  /** Each 429 since the last reset: its instant, key and kind. */
  const limitedAt: { at: number; key: string; read: boolean }[] = [];
  const proxy = await countingProxy(cloud.url, (pipeId, read, status) => {
    const id = pipeId.toLowerCase();
    const k = perKey.get(keyOfPipe.get(id) ?? '');
    if (k) {
      if (read) k.reads++;
      else k.changes++;
      if (status === 429) {
        k.limited++;
        limitedAt.push({ at: Date.now(), key: keyOfPipe.get(id) ?? '', read });
      }
    }
    if (!read && !firstChange.has(id)) firstChange.set(id, Date.now());
  });
  const prefix = 'pipescaler-fleet';
  const cwd = fileURLToPath(new URL('..', import.meta.url));
  const replicas = new Replicas({
    cwd,
    configPath,
    env,
    ...(o.profile ? { execArgv: ['--cpu-prof', `--cpu-prof-dir=${o.profile}`] } : {}),
  });
  let redis: Redis | undefined;
  const trimmed = new Set<ReplicaRun>();
  // the replicas' output is kept by Replicas; past its start only its tail is needed
  const trimmer = setInterval(() => {
    for (const r of trimmed) if (r.stdout.length > 500) r.stdout.splice(0, r.stdout.length - 200);
  }, 2_000);

  const configYaml = (window: number | null): string =>
    stringify(
      {
        api: {
          baseUrl: proxy.url,
          // compressed as the rest, at least 5 s (a loaded machine answers late): a change a killed
          // replica sent is settled by a read once its timeout has passed
          timeout: `${Math.max(5_000, ms(PLATFORM.timeoutMs))}ms`,
          ...keySpecs[0],
          ...(keySpecs.length > 1
            ? { keys: Object.fromEntries(keySpecs.slice(1).map((s, i) => [keyName(i + 1), s])) }
            : {}),
        },
        redis: { url: redisServer.url, prefix },
        evaluate: {
          cron: `*/${PLATFORM.tickMs / c / 1000} * * * * *`,
          reconcile: `${ms(PLATFORM.reconcileMs)}ms`,
          actuation: {
            expected: `${propagationMs}ms`,
            max: `${ms(PLATFORM.actuationMaxMs)}ms`,
            firstRead: `${ms(PLATFORM.firstReadMs)}ms`,
            ...(o.measured ? {} : { measured: false }),
          },
        },
        telemetry: { listen: '127.0.0.1:0', logLevel: 'info' },
        pipes: pipes.map(({ name, organizationId, serviceId, pipeId, policy, key }) => ({
          name,
          organizationId,
          serviceId,
          pipeId,
          policy,
          ...(key === 'default' ? {} : { key }),
        })),
        policies: {
          fleet: {
            baseline: { replicas: FROM },
            windows:
              window === null
                ? []
                : [
                    {
                      name: 'boundary',
                      from: new Date(window).toISOString(),
                      to: new Date(window + 86_400_000).toISOString(),
                      set: { replicas: TO },
                    },
                  ],
            behavior: {
              scaleUp: { cooldown: '0s', leadTime: 'auto' },
              scaleDown: { cooldown: '0s', stabilization: '0s' },
            },
          },
        },
      },
      { lineWidth: 0 },
    );
  const loaded = (window: number | null): Config => parseConfig(configYaml(window), { file: configPath, env });

  const spawnReplica = async (label: string): Promise<ReplicaRun> => {
    const run = replicas.spawn(label);
    if (o.logs) run.child.stdout?.pipe(createWriteStream(join(o.logs, `replica-${label}.log`)));
    sampler.watch(run.child.pid!, label);
    await replicas.started(run, 120_000);
    heaps.watch(run);
    trimmed.add(run);
    return run;
  };
  const ids = pipes.map((p) => p.pipeId);
  /** Every pipe confirmed at `replicas` with no confirmation read to come, at most `limitMs`. */
  const settled = async (store: StateStore, replicasWanted: number, limitMs: number): Promise<boolean> => {
    const until = Date.now() + limitMs;
    for (;;) {
      let open = 0;
      for (let i = 0; i < pipes.length; i += 1_000) {
        const pl = redis!.pipeline();
        for (const p of pipes.slice(i, i + 1_000)) pl.hmget(store.keys.pipe(p.name), 'confirmed', 'confirming');
        for (const [err, v] of (await pl.exec()) ?? []) {
          const [confirmed, confirming] = (err ? [null, null] : v) as [string | null, string | null];
          const conf = confirmed ? (JSON.parse(confirmed) as { values?: { replicas?: number } } | null) : null;
          const cing = confirming ? (JSON.parse(confirming) as { dueAt?: number | null } | null) : null;
          if (conf?.values?.replicas !== replicasWanted || (cing?.dueAt ?? null) !== null) open++;
        }
      }
      if (open === 0) return true;
      if (Date.now() > until) return false;
      await sleep(POLL_MS * 4);
    }
  };
  const count = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

  try {
    await redisServer.start();
    redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
    sampler.watch(redisPid, 'redis');
    const store = new StateStore(redis, prefix);

    // Cold start: every pipe from 1 to 2.
    await writeFile(configPath, configYaml(null));
    const coldAt = Date.now();
    const live: ReplicaRun[] = [];
    for (let r = 0; r < o.replicas; r++) live.push(await spawnReplica(String.fromCharCode(97 + r)));
    // a pipe takes a read, a change and a confirming read or two: about 4 N / r a key
    const coldLimit = (6 * (o.pipes / o.keys) * rate.perMs) / rate.requests + 60_000;
    if (!(await settled(store, FROM, coldLimit)))
      throw new Error(`fleet: the cold start did not settle in ${coldLimit} ms`);
    const coldMs = Date.now() - coldAt;
    const coldChanges = count(proxy.counts.changes);
    const coldReads = count(proxy.counts.reads);
    const coldLimited = (await cloud.stats()).rateLimited;

    // The boundary: the plan of the config the replicas will load, its longest key's lead.
    const estimates = o.measured ? await readEstimates(redis, store.keys, loaded(null)) : null;
    const actuationMs = estimates ? (p: { name: string }) => estimates.get(p.name)?.ms ?? undefined : undefined;
    const actuationCountedMs = estimates
      ? Math.max(0, ...[...estimates.values()].map((e) => e.ms ?? 0))
      : propagationMs;
    const planOf = (T: number) => {
      const span = leadPlanSpan(Date.now());
      return leadPlan(loaded(T), span.from, span.to, actuationMs ? { actuationMs } : {});
    };
    const probe = Math.ceil((Date.now() + 4 * 3_600_000) / 1000) * 1000;
    const leadProbe = Math.max(...[...planOf(probe).keys.values()].map((k) => k.leadMs));
    const tickMs = ms(PLATFORM.tickMs);
    const T = Math.ceil((Date.now() + leadProbe + 5 * tickMs) / 1000) * 1000;
    const plan = planOf(T);
    const planLead = new Map([...plan.keys.values()].map((k) => [k.key, k.boundary === T ? k.leadMs : NaN]));
    proxy.reset();
    firstChange.clear();
    limitedAt.length = 0;
    for (const k of perKey.values()) k.changes = k.reads = k.limited = 0;
    await cloud.resetStats();
    await writeFile(configPath, configYaml(T));
    const reloadAt = Date.now();
    for (const r of live) r.child.kill('SIGHUP');

    // SIGKILL halfway through the longest lead, the new pod up after PLATFORM.restartMs.
    const events: { killAt: number | null; restartedAt: number | null } = { killAt: null, restartedAt: null };
    const killer = o.kill
      ? (async () => {
          await sleep(Math.max(0, T - Math.max(...planLead.values()) / 2 - Date.now()));
          const victim = live[0]!;
          sampler.sample();
          events.killAt = Date.now();
          heaps.forget(victim.label);
          await replicas.kill(victim);
          await sleep(ms(PLATFORM.restartMs));
          const again = await spawnReplica(`${victim.label}#2`);
          live[0] = again;
          events.restartedAt = Date.now();
        })()
      : Promise.resolve();

    // What the cloud holds at T (as bench/daemon-actuation.ts: a snapshot a second before, with
    // the changes due by T).
    await sleep(Math.max(0, T - 1_000 - Date.now()));
    const snapshot = await cloud.replicas(ids);
    const snapshotLateMs = Math.max(0, Date.now() - T);
    const atT = snapshot.map((s) => {
      let v = s.replicas;
      for (const p of s.pending) if (p.effectiveAt !== null && p.effectiveAt <= T) v = p.replicas;
      return v;
    });
    await killer;
    // every pipe confirmed at 4 (or the actuation's limit twice over)
    await settled(store, TO, 2 * ms(PLATFORM.actuationMaxMs) + 5 * tickMs);
    const records = new Map<string, { values?: { replicas?: number }; at?: number } | null>();
    for (let i = 0; i < pipes.length; i += 1_000) {
      const pl = redis.pipeline();
      const chunk = pipes.slice(i, i + 1_000);
      for (const p of chunk) pl.hget(store.keys.pipe(p.name), 'confirmed');
      const got = (await pl.exec()) ?? [];
      chunk.forEach((p, j) => {
        const [err, v] = got[j] ?? [null, null];
        records.set(p.name, !err && typeof v === 'string' ? (JSON.parse(v) as { at?: number } | null) : null);
      });
    }
    sampler.sample();
    const stats = await cloud.stats();
    const keys: KeyFigures[] = keyNames.map((key) => {
      const mine = pipes.map((p, i) => ({ p, i })).filter(({ p }) => p.key === key);
      const conf = mine.map(({ p }) => records.get(p.name));
      const at4 = conf.filter((r) => r?.values?.replicas === TO);
      const wire = perKey.get(key)!;
      const first = Math.min(...mine.map(({ p }) => firstChange.get(p.pipeId.toLowerCase()) ?? Infinity));
      const ups = mine.length;
      return {
        key,
        ups,
        confirmedByT: at4.filter((r) => (r?.at ?? Infinity) <= T).length,
        atT: mine.filter(({ i }) => atT[i] === TO).length,
        planLeadMs: planLead.get(key) ?? NaN,
        sentLeadMs: T - first,
        sentAfterSlotMs: spread(
          mine.map(
            ({ p }) =>
              (firstChange.get(p.pipeId.toLowerCase()) ?? NaN) -
              (plan.slots.get(p.name)?.find((x) => x.boundary === T)?.start ?? NaN),
          ),
        ),
        limitMs: (2 * ups * rate.perMs) / (0.9 * rate.requests) + propagationMs,
        limited: wire.limited,
        changes: wire.changes,
        reads: wire.reads,
        lateMaxMs: Math.max(0, ...at4.map((r) => (r?.at ?? T) - T)),
        unconfirmed: ups - at4.length,
        misses: mine
          .filter(({ p }) => {
            const r = records.get(p.name);
            return r?.values?.replicas !== TO || (r.at ?? Infinity) > T;
          })
          .slice(0, 5)
          .map(({ p }) => ({
            slot: (plan.slots.get(p.name)?.find((x) => x.boundary === T)?.start ?? NaN) - T,
            sent: (firstChange.get(p.pipeId.toLowerCase()) ?? NaN) - T,
            confirmed: (records.get(p.name)?.at ?? NaN) - T,
          })),
      };
    });
    if (o.logs) {
      // every scale-up's planned slot, first change PATCH and confirmation (compressed ms from T)
      const rows = pipes.map((p) => ({
        pipe: p.name,
        key: p.key,
        slot: (plan.slots.get(p.name)?.find((x) => x.boundary === T)?.start ?? NaN) - T,
        sent: (firstChange.get(p.pipeId.toLowerCase()) ?? NaN) - T,
        confirmed: (records.get(p.name)?.at ?? NaN) - T,
      }));
      await writeFile(
        join(o.logs, 'fleet-pipes.json'),
        JSON.stringify({
          reloadAt: reloadAt - T,
          killAt: events.killAt === null ? null : events.killAt - T,
          restartedAt: events.restartedAt === null ? null : events.restartedAt - T,
          T,
          rows,
        }),
      );
    }
    const kAt = events.killAt ?? T;
    const rAt = events.restartedAt ?? kAt;
    const evaluations = evaluationPhases(heaps.lags, [
      { name: 'reload to kill', from: reloadAt, to: kAt },
      ...(events.killAt !== null ? [{ name: 'kill to restart', from: kAt, to: rAt }] : []),
      { name: events.killAt !== null ? 'restart to T' : 'reload to T', from: rAt, to: T },
    ]).map((e) => ({ ...e, from: e.from - T, to: e.to - T }));
    const info = await redis.info('memory');
    const mem = (field: string) => Number(new RegExp(`${field}:(\\d+)`).exec(info)?.[1] ?? NaN) / 2 ** 20;
    const use = (run: ReplicaRun) => sampler.use(run.child.pid!, run.label);
    const replicaUse = replicas.runs.map(use);
    const heapUse = replicas.runs.map((run) => heaps.use(run.label));
    const cloudUse = sampler.use(cloud.pid, 'cloud');
    const redisUse = sampler.use(redisPid, 'redis');
    const exits: (number | string | null)[] = [];
    for (const r of live) exits.push(await replicas.stop(r, 25_000));
    return {
      options: o,
      actuationCountedMs,
      coldMs,
      coldChanges,
      coldReads,
      coldLimited,
      keys,
      reloadAt: reloadAt - T,
      killAt: events.killAt === null ? null : events.killAt - T,
      restartedAt: events.restartedAt === null ? null : events.restartedAt - T,
      snapshotLateMs,
      limitedAt: limitedAt.map((l) => ({ ...l, at: l.at - T })),
      evaluations,
      totalChanges: coldChanges + count(proxy.counts.changes),
      totalReads: coldReads + count(proxy.counts.reads),
      totalLimited: coldLimited + stats.rateLimited,
      replicas: replicaUse,
      heaps: heapUse,
      nodeOptions: shippedNodeOptions(cwd),
      cloud: cloudUse,
      redis: redisUse,
      redisUsedMemoryPeakMb: mem('used_memory_peak'),
      redisUsedMemoryMb: mem('used_memory'),
      exits,
      wallMs: Date.now() - t0,
    };
  } finally {
    clearInterval(trimmer);
    sampler.stop();
    heaps.stop();
    await replicas.killAll();
    await proxy.close();
    await cloud.close();
    await redis?.quit().catch(() => undefined);
    await redisServer.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
