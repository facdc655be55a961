// runChaos(): one chaos run with real parts only. The embedded cloud runs here (faults on from the
// first request, its propagation as asked), behind a recording pass-through; a dedicated
// redis-server and N daemon replicas run as child processes. 300 ms after a boundary one replica
// is SIGKILLed and restarted 2 s later, later Redis is restarted once per `redisRestarts` entry
// (empty, or keeping its data). After the last boundary the run waits, bounded, until every pipe
// in the cloud holds its final desired scaling, stops the replicas with SIGTERM, reads the history
// they left in Redis and checks what happened (here, and checks/ on the records).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startCloud, type EmbeddedCloud, type LimitedRequest } from '../../src/cloud/index.js';
import { HistoryStore, type HistoryEntry } from '../../src/history/index.js';
import {
  auditRecords,
  checkFailures,
  historyVsAnswers,
  keyRequests,
  ownDrift,
  realLimited,
  recordedOnce,
  verdictsVsAnswers,
  CHECK_NAMES,
  type AuditRecord,
  type ChaosChecks,
  type CheckName,
  type RestartEvent,
} from './checks/index.js';
import { startObserver, type Limited, type Observer, type SentPatch, type SentRequest } from './observer.js';
import { freePort, RedisServer, Replicas, tail, type ReplicaRun } from './processes.js';
import { buildScenario, chaosFixtures, type ChaosParams, type ScenarioPipe } from './scenario.js';
import { countLogLevels, countPatches, realRateLimited, type ChaosSummary } from './summary.js';

export interface ChaosOptions {
  /** The repository root (dist/cli/main.js is run from here). */
  readonly cwd: string;
  /** Progress lines; default none. */
  readonly log?: (line: string) => void;
  /** Redis port; default a free one. */
  readonly redisPort?: number;
  /** The checks of checks/ a failure of fails the run (default all); the others are computed
   *  and printed only. */
  readonly held?: readonly CheckName[];
}

/** The raw records the checks read, for a closer look at a run (`--dump`). */
export interface ChaosRecords {
  readonly boundaries: readonly number[];
  readonly kill: { readonly at: number | null; readonly restartedAt: number | null };
  readonly redisRestarts: readonly RestartEvent[];
  readonly pipes: readonly { readonly name: string; readonly pipeId: string }[];
  /** Key id -> the config's key name. */
  readonly keyNames: Readonly<Record<string, string>>;
  readonly patches: readonly SentPatch[];
  /** Every 429 the observer passed on (real and injected). */
  readonly limited429: readonly Limited[];
  /** The cloud's real-limiter 429s per key id. */
  readonly cloudLimited: Readonly<Record<string, number>>;
  /** Each of them (the latest 1,000): key id, instant, its window's start, method, path, request id. */
  readonly cloudLimitedRequests: readonly LimitedRequest[];
  /** The requests of a refused key from a window before a real 429's window to a window after it
   *  (each with its replica and instant), to see which replica sent what then. */
  readonly requestsAround429: readonly SentRequest[];
  readonly audit: readonly AuditRecord[];
  /** Each pipe's history as the replicas left it in Redis at the end. */
  readonly history: Readonly<Record<string, readonly HistoryEntry[]>>;
}

export interface ChaosResult {
  readonly ok: boolean;
  /** Each failed check, one readable line. */
  readonly failures: readonly string[];
  readonly summary: ChaosSummary;
  /** Every scaling PATCH as sent (for a closer look at a run), and the run's boundaries and pipes. */
  readonly patches: readonly SentPatch[];
  readonly boundaries: readonly number[];
  readonly pipes: readonly ScenarioPipe[];
  /** Each replica run's output lines (pino JSON), e.g. to look at a failure closer. */
  readonly output: readonly { readonly label: string; readonly lines: readonly string[] }[];
  /** Epoch ms of the SIGKILL and of the Redis restarts (null / none when the run did not get there). */
  readonly events: { readonly killAt: number | null; readonly redisRestarts: readonly RestartEvent[] };
  readonly checks: ChaosChecks;
  readonly records: ChaosRecords;
}

/** How long the harness waits for a replica's graceful stop (the daemon's own grace is 15 s). */
const STOP_WAIT_MS = 25_000;
/** Every pipe must hold its final scaling this long before the run counts as converged. */
const STABLE_MS = 3_000;
const UNHANDLED = /unhandled ?(promise ?)?rejection|uncaught ?exception/i;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** A small seeded generator (mulberry32), so a run's fault dice can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Values within the platform's ranges that no segment of the schedule asks of that pipe. */
function unexpectedValues(patches: readonly SentPatch[], pipes: readonly ScenarioPipe[]): string[] {
  const byId = new Map(pipes.map((p) => [p.pipeId.toLowerCase(), p]));
  const out: string[] = [];
  for (const sent of patches) {
    const pipe = byId.get(sent.pipeId);
    for (const [f, v] of Object.entries(sent.body)) {
      if (v === null || v === undefined) continue;
      const ok = pipe?.expected[f as keyof ScenarioPipe['expected']];
      if (!ok?.includes(v as number))
        out.push(
          `${pipe?.name ?? sent.pipeId}: ${f} ${JSON.stringify(v)} (expected one of ${JSON.stringify(ok ?? [])})`,
        );
    }
  }
  return out;
}

/** The pipes whose scaling in the cloud is not (yet) their final one. */
function offTarget(cloud: EmbeddedCloud, pipes: readonly ScenarioPipe[]): ScenarioPipe[] {
  return pipes.filter((p) => {
    const stored = cloud.store.pipe(p.pipeId);
    return (
      !stored || !Object.entries(p.final).every(([f, v]) => stored.scaling[f as keyof typeof stored.scaling] === v)
    );
  });
}

const atFinal = (cloud: EmbeddedCloud, pipes: readonly ScenarioPipe[]) => pipes.length - offTarget(cloud, pipes).length;

function describeOff(cloud: EmbeddedCloud, pipes: readonly ScenarioPipe[]): string {
  return offTarget(cloud, pipes)
    .slice(0, 5)
    .map((p) => {
      const has = Object.fromEntries(
        Object.keys(p.final).map((f) => [f, cloud.store.pipe(p.pipeId)?.scaling[f as keyof typeof p.final]]),
      );
      return `${p.name} has ${JSON.stringify(has)}, wants ${JSON.stringify(p.final)}`;
    })
    .join('; ');
}

export async function runChaos(params: ChaosParams, opts: ChaosOptions): Promise<ChaosResult> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const failures: string[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'pipescaler-chaos-'));
  const redis = new RedisServer(opts.redisPort ?? (await freePort()), dir);
  let cloud: EmbeddedCloud | null = null;
  let observer: Observer | null = null;
  let replicas: Replicas | null = null;
  const crashes: ReplicaRun[] = [];
  let convergedAfter: number | null = null;
  let convergedPipes = 0;
  let cleanExits = 0;
  let stopped = 0;
  let pipeCount = params.pipes;
  let boundaries: readonly number[] = [];
  const events = { killAt: null as number | null, redisRestarts: [] as RestartEvent[] };
  let restartedAt: number | null = null;
  let pipes: readonly ScenarioPipe[] = [];
  const keyNames: Record<string, string> = {};
  const history = new Map<string, readonly HistoryEntry[]>();
  try {
    await redis.start();
    log(`redis-server on ${redis.url}`);
    const fixtures = chaosFixtures(params);
    cloud = await startCloud({
      fixtures,
      rateLimit: { requests: params.rateLimit.requests, perMs: params.rateLimit.perMs },
      random: seeded(params.seed),
    });
    cloud.setFaults({ default: params.faults });
    if (params.propagationMs > 0) cloud.setPropagation({ default: params.propagationMs });
    fixtures.apiKeys.forEach((k, i) => {
      keyNames[k.keyId] = i === 0 ? 'default' : `k${i + 1}`;
    });
    observer = await startObserver(cloud.url);
    const scenario = buildScenario(
      params,
      fixtures,
      { apiUrl: observer.url, redisUrl: redis.url, prefix: 'chaos' },
      Date.now(),
    );
    pipeCount = scenario.pipes.length;
    boundaries = scenario.boundaries;
    pipes = scenario.pipes;
    const configPath = join(dir, 'pipescaler.yaml');
    await writeFile(configPath, scenario.configYaml);
    log(
      `cloud ${cloud.url} behind ${observer.url}; ${pipeCount} pipes, first boundary in ${scenario.boundaries[0]! - Date.now()} ms`,
    );

    const reps = new Replicas({ cwd: opts.cwd, configPath, env: scenario.env, apiUrl: observer.url });
    replicas = reps;
    const watch = (run: ReplicaRun) => {
      run.child.on('exit', () => {
        if (!run.expected) {
          crashes.push(run);
          log(`replica ${run.label} crashed (${String(run.exit)}): ${tail(run)}`);
        }
      });
      return run;
    };
    const labels = Array.from({ length: Math.max(1, params.replicas) }, (_, i) => String.fromCharCode(97 + i));
    const started = labels.map((l) => watch(reps.spawn(l)));
    await Promise.all(started.map((r) => reps.started(r)));
    log(`replicas ${labels.join(', ')} started`);
    const a = started[0]!;

    const B = scenario.boundaries;
    const last = B.at(-1)!;
    // 300 ms after a boundary: the replica is in the middle of the boundary's changes
    const killAt = B[Math.floor(B.length * 0.35)]! + 300;
    const restarts = params.redisRestarts.map((kind, i, all) => {
      const share = all.length === 1 ? 0.65 : 0.5 + (0.3 * i) / (all.length - 1);
      return { kind, at: B[Math.min(B.length - 1, Math.floor(B.length * share))]! + 700 };
    });
    await sleep(killAt - Date.now());
    events.killAt = Date.now();
    await reps.kill(a);
    log(`SIGKILL replica a (${atFinal(cloud, scenario.pipes)}/${pipeCount} at final so far)`);
    await sleep(2_000);
    const a2 = watch(reps.spawn('a#2'));
    restartedAt = Date.now();
    await reps.started(a2);
    log('replica a restarted');
    for (const r of restarts) {
      await sleep(r.at - Date.now());
      const downAt = Date.now();
      await redis.restart(1_000, r.kind === 'keep');
      events.redisRestarts.push({ kind: r.kind, downAt, upAt: Date.now() });
      log(`redis restarted (${r.kind === 'keep' ? 'with its data' : 'empty'})`);
    }
    await sleep(last - Date.now());
    log(`last boundary passed; ${atFinal(cloud, scenario.pipes)}/${pipeCount} at final`);

    const deadline = last + params.convergeTimeoutMs;
    let since: number | null = null;
    let lastReport = Date.now();
    while (Date.now() < deadline) {
      convergedPipes = atFinal(cloud, scenario.pipes);
      if (convergedPipes === pipeCount) {
        since ??= Date.now();
        if (Date.now() - since >= STABLE_MS) break;
      } else {
        since = null;
      }
      if (Date.now() - lastReport > 5_000) {
        log(`converging: ${convergedPipes}/${pipeCount}`);
        lastReport = Date.now();
      }
      await sleep(250);
    }
    if (since !== null && convergedPipes === pipeCount) convergedAfter = since - last;
    else
      failures.push(
        `only ${convergedPipes}/${pipeCount} pipes at their final scaling ${params.convergeTimeoutMs} ms after the last boundary: ${describeOff(cloud, scenario.pipes)}`,
      );
    log(convergedAfter === null ? 'not converged' : `converged ${convergedAfter} ms after the last boundary`);

    const live = reps.runs.filter((r) => r.exit === null);
    stopped = live.length;
    const codes = await Promise.all(live.map((r) => reps.stop(r, STOP_WAIT_MS)));
    live.forEach((r, i) => {
      if (codes[i] === 0) cleanExits += 1;
      else
        failures.push(
          `replica ${r.label}: SIGTERM ended with ${codes[i] === null ? `no exit within ${STOP_WAIT_MS} ms` : `exit ${String(codes[i])}`}: ${tail(r)}`,
        );
    });
    // Nothing may move a pipe away while the replicas shut down.
    const after = atFinal(cloud, scenario.pipes);
    if (convergedAfter !== null && after !== pipeCount) {
      failures.push(
        `after the stop only ${after}/${pipeCount} pipes kept their final scaling: ${describeOff(cloud, scenario.pipes)}`,
      );
    }
    convergedPipes = Math.min(convergedPipes, after);
    // what the replicas left in the history (written before their exit)
    const client = new Redis(redis.url, { maxRetriesPerRequest: 2, lazyConnect: true });
    try {
      await client.connect();
      const store = new HistoryStore(client, 'chaos');
      for (const p of scenario.pipes) history.set(p.name, (await store.read(p.name)).entries);
    } finally {
      client.disconnect();
    }
  } catch (err) {
    failures.push(`harness: ${(err as Error).message}`);
  } finally {
    await replicas?.killAll();
    await observer?.close();
    await cloud?.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  }

  const runs = replicas?.runs ?? [];
  const unhandled = runs.flatMap((r) =>
    [...r.stderr, ...r.stdout].filter((l) => UNHANDLED.test(l)).map((l) => `${r.label}: ${l}`),
  );
  if (unhandled.length > 0) failures.push(`unhandled rejections/exceptions:\n  ${unhandled.slice(0, 5).join('\n  ')}`);
  for (const c of crashes) failures.push(`replica ${c.label} exited on its own (${String(c.exit)}): ${tail(c)}`);
  const violations = observer?.violations ?? [];
  if (violations.length > 0)
    failures.push(`values outside the platform ranges:\n  ${violations.slice(0, 5).join('\n  ')}`);
  const unexpected = unexpectedValues(observer?.patches ?? [], pipes);
  if (unexpected.length > 0)
    failures.push(`values the schedule never asked for:\n  ${unexpected.slice(0, 5).join('\n  ')}`);
  const patches = countPatches(observer?.patches ?? []);
  const refused = Object.entries(patches.failed).filter(([k]) => /^4\d\d$/.test(k) && k !== '429');
  if (refused.length > 0)
    failures.push(`the cloud refused scaling changes: ${refused.map(([k, n]) => `${k} x${n}`).join(', ')}`);

  const stats = cloud?.stats() ?? { requests: {}, rateLimited: 0, limited: {}, limitedRequests: [], faults: {} };
  const requests = observer?.requests ?? [];
  const around = new Set<SentRequest>();
  for (const r of stats.limitedRequests) {
    const w = params.rateLimit.perMs;
    for (const q of keyRequests(requests, r.keyId, r.windowStart - w, r.at + w)) around.add(q);
  }
  const audit = runs.flatMap((r) => auditRecords([...r.stdout, ...r.stderr], r.label));
  const refs = pipes.map((p) => ({ name: p.name, pipeId: p.pipeId }));
  const sent = observer?.patches ?? [];
  const checks: ChaosChecks = {
    limited: realLimited(stats.limited, keyNames, stats.limitedRequests, requests),
    // replica a is the one SIGKILLed (its restart runs as a#2)
    recorded: recordedOnce(sent, audit, refs, {
      kill: { replica: 'a', at: events.killAt },
      restarts: events.redisRestarts,
    }),
    history: historyVsAnswers(sent, history, refs, events.redisRestarts),
    verdicts: verdictsVsAnswers(sent, audit, refs, events.redisRestarts, {
      propagationMs: params.propagationMs,
      kill: { replica: 'a', at: events.killAt },
    }),
    drift: ownDrift(sent, audit, refs),
  };
  failures.push(...checkFailures(checks, opts.held ?? CHECK_NAMES));
  const summary: ChaosSummary = {
    params: {
      pipes: pipeCount,
      boundaries: params.boundaries,
      boundaryEveryMs: params.boundaryEveryMs,
      keys: params.keys,
      seed: params.seed,
      replicas: params.replicas,
      redisRestarts: params.redisRestarts,
      propagationMs: params.propagationMs,
    },
    faults: stats.faults,
    realRateLimited: realRateLimited(stats),
    patches,
    outOfRange: violations.length,
    unexpectedValues: unexpected.length,
    overlaps: observer?.overlaps() ?? 0,
    kills: replicas?.kills ?? 0,
    redisRestarts: redis.restarts,
    checks,
    replicaCrashes: crashes.length,
    unhandled: unhandled.length,
    logs: countLogLevels(runs.flatMap((r) => [...r.stdout, ...r.stderr])),
    cleanExits: { ok: cleanExits, of: stopped },
    converged: { pipes: convergedPipes, of: pipeCount, afterLastBoundaryMs: convergedAfter },
    totalMs: Date.now() - started,
  };
  return {
    ok: failures.length === 0,
    failures,
    summary,
    patches: observer?.patches ?? [],
    boundaries,
    pipes,
    output: runs.map((r) => ({ label: r.label, lines: [...r.stdout, ...r.stderr] })),
    events,
    checks,
    records: {
      boundaries,
      kill: { at: events.killAt, restartedAt },
      redisRestarts: events.redisRestarts,
      pipes: refs,
      keyNames,
      patches: sent,
      limited429: observer?.limited ?? [],
      cloudLimited: stats.limited,
      cloudLimitedRequests: stats.limitedRequests,
      requestsAround429: [...around].sort((a, b) => a.at - b.at),
      audit,
      history: Object.fromEntries(history),
    },
  };
}
