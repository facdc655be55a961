// The fleet: P pipes on K keys, three replicas on one Redis, one boundary moving every pipe up with
// a replica killed (SIGKILL) halfway through its lead and started again (bench/daemon-fleet.ts).
// Goals from issue 34: every key >= 99.9 % of its scale-ups confirmed at target by T, each key's
// lead within 1.15 x (2N / (0.9 r) + A), 0 429s; and what it cost: CPU and peak RSS per replica,
// Redis memory, requests. KEDA's reported convergence of a fleet stands beside the cold start.
import { inFreshProcess } from './child.js';
import type { FleetOptions, FleetRun, KeyFigures } from './daemon-fleet.js';
import type { Figure } from './stats.js';

const scenario = 'fleet';

/** KEDA users' report: kedacore/keda#6063 (2024-08), 700 < N < 1,250 ScaledObjects scaled 1 -> 2
 *  replicas by a cron scaler took about 2.5 h to converge (1,500 and 2,000 took 14-15 min). */
const KEDA = {
  seconds: 2.5 * 3_600,
  source: 'https://github.com/kedacore/keda/issues/6063',
} as const;

export async function fleet(o: FleetOptions): Promise<Figure[]> {
  const r = await inFreshProcess<FleetRun>(new URL('./daemon-fleet.ts', import.meta.url).href, o, 7_200_000);
  return fleetFigures(r);
}

/** When the boundary phase's 429s came (compressed s from T, 0.1 s apart grouped), and to what. */
function limitedWhen(r: FleetRun): string {
  if (r.limitedAt.length === 0) return '';
  const groups = new Map<string, { keys: Set<string>; reads: number; changes: number }>();
  for (const l of [...r.limitedAt].sort((a, b) => a.at - b.at)) {
    const at = (l.at / 1000).toFixed(1);
    const g = groups.get(at) ?? { keys: new Set<string>(), reads: 0, changes: 0 };
    g.keys.add(l.key);
    if (l.read) g.reads++;
    else g.changes++;
    groups.set(at, g);
  }
  const listed = [...groups].map(
    ([at, g]) => `${at} s: ${g.changes} changes, ${g.reads} reads on ${g.keys.size} key${g.keys.size === 1 ? '' : 's'}`,
  );
  return `; when (compressed s from T): ${listed.slice(0, 12).join('; ')}${listed.length > 12 ? `; and ${listed.length - 12} more instants` : ''}`;
}

/** `r` came through JSON from the run's process: a NaN in it (nothing measured) is null here,
 *  which the figures below print as '-'. */
export function fleetFigures(r: FleetRun): Figure[] {
  const o = r.options;
  const c = o.compression;
  const n = o.pipes;
  const platform = (ms: number): string => {
    const s = (ms * c) / 1000;
    return Math.abs(s) >= 120 ? `${(s / 60).toFixed(1)} min` : `${Math.round(s)} s`;
  };
  // each compression's figures are kept apart (run.ts replaces only the same compression's)
  const f = (metric: string, value: number, unit: string, goal?: string, pass?: boolean, note?: string): Figure => ({
    scenario,
    metric: `${c}x${o.kill ? '' : ', no kill'}: ${metric}`,
    value: Math.round(value * 1000) / 1000,
    unit,
    n,
    runs: [value],
    ...(goal !== undefined ? { goal, pass: pass ?? false } : {}),
    ...(note ? { note } : {}),
  });
  const setup = `${n.toLocaleString('en-US')} pipes on ${o.keys} keys, ${o.replicas} replicas on one Redis, ${c}x compressed (10 requests per ${10 / c} s per key at the cloud and in the daemon, ticks every ${30 / c} s, propagation ${30 / c} s: 30 s on the platform)`;
  const perKey = (fn: (k: KeyFigures) => string) => r.keys.map((k) => `${k.key} ${fn(k)}`).join(', ');
  const lowest = (fn: (k: KeyFigures) => number) => Math.min(...r.keys.map(fn));
  const highest = (fn: (k: KeyFigures) => number) => Math.max(...r.keys.map(fn));
  const confirmed = lowest((k) => k.confirmedByT / k.ups);
  const atT = lowest((k) => k.atT / k.ups);
  const leadRatio = highest((k) => k.planLeadMs / k.limitMs);
  const sentRatio = highest((k) => k.sentLeadMs / k.limitMs);
  const limited = r.keys.reduce((a, k) => a + k.limited, 0);
  const lateMax = highest((k) => k.lateMaxMs);
  const unconfirmed = r.keys.reduce((a, k) => a + k.unconfirmed, 0);
  const mb = (x: number | null) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(0) : '-');
  const s1 = (ms: number | null) => (typeof ms === 'number' && Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '-');
  const misses = r.keys
    .filter((k) => k.misses.length > 0)
    .map((k) => `${k.key} ${k.misses.map((m) => `(${s1(m.slot)}, ${s1(m.sent)}, ${s1(m.confirmed)})`).join(' ')}`)
    .join('; ');
  const kill =
    r.killAt === null
      ? 'no replica killed'
      : `replica a killed with SIGKILL ${platform(-r.killAt)} before T (${(-r.killAt / 1000).toFixed(1)} s), its new process started ${r.restartedAt === null ? 'never' : `${platform(-r.restartedAt)} before T`}`;
  const figures: Figure[] = [
    f(
      'scale-ups confirmed at target by T, the lowest key',
      confirmed,
      'share',
      '>= 0.999',
      confirmed >= 0.999,
      `${setup}; ${kill}; per key: ${perKey((k) => `${k.confirmedByT}/${k.ups}`)}; the daemon's confirmation (the read that showed 4 replicas, from the replicas' Redis); ${unconfirmed} not confirmed at the end; the plan counted on ${platform(r.actuationCountedMs)} of actuation (${o.measured ? 'the p95 the daemon measured at the cold start' : 'evaluate.actuation.expected, the propagation; measured: false'})`,
    ),
    f(
      'scale-ups at target at T (read back from the cloud), the lowest key',
      atT,
      'share',
      undefined,
      undefined,
      `per key: ${perKey((k) => `${k.atT}/${k.ups}`)}${r.snapshotLateMs > 0 ? `; the snapshot for T came ${r.snapshotLateMs} ms late` : ''}`,
    ),
    f(
      "plan's lead / (2N / (0.9 r) + A), the highest key",
      leadRatio,
      'ratio',
      '<= 1.15',
      leadRatio <= 1.15,
      `N = ${r.keys[0]?.ups} scale-ups a key at 10 requests per 10 s, A = ${platform(r.actuationCountedMs)}: bound ${platform(r.keys[0]?.limitMs ?? NaN)}; the plans' leads ${perKey((k) => platform(k.planLeadMs))}`,
    ),
    f(
      'first change sent before T / (2N / (0.9 r) + A), the highest key',
      sentRatio,
      'ratio',
      undefined,
      undefined,
      `what the replicas did: ${perKey((k) => platform(k.sentLeadMs))} (the first change PATCH of the boundary through the proxy)`,
    ),
    f(
      "first change sent after its slot's start, p95, the highest key",
      highest((k) => k.sentAfterSlotMs.p95),
      'ms',
      undefined,
      undefined,
      `compressed; p50/p95/max per key: ${perKey((k) => `${s1(k.sentAfterSlotMs.p50)}/${s1(k.sentAfterSlotMs.p95)}/${s1(k.sentAfterSlotMs.max)} s`)}; the replicas' evaluations (pipescaler_tick_lag_seconds from their /metrics): ${r.evaluations.map((e) => `${e.name} (${s1(e.from)} to ${s1(e.to)} s) ${Math.round(e.perS)} a second, mean lag from the tick ${s1(typeof e.meanLagS === 'number' ? e.meanLagS * 1000 : null)} s, mean evaluation ${mb(e.meanEvalMs)} ms`).join('; ')}`,
    ),
    f(
      'latest confirmation after T',
      lateMax,
      'ms',
      undefined,
      undefined,
      `compressed (${platform(lateMax)} on the platform's scale); 0: every scale-up confirmed by T${misses ? `; not confirmed by T (planned slot, first change sent, confirmed; compressed s from T): ${misses}` : ''}`,
    ),
    f(
      "429s at the cloud (the boundary's phase)",
      limited,
      '429',
      '0',
      limited === 0,
      `per key: ${perKey((k) => String(k.limited))}; the whole run, cold start included: ${r.totalLimited}${limitedWhen(r)}`,
    ),
    f(
      'change PATCHes / changes, the whole run',
      r.totalChanges / (2 * n),
      'ratio',
      undefined,
      undefined,
      `${r.totalChanges.toLocaleString('en-US')} change PATCHes and ${r.totalReads.toLocaleString('en-US')} reads for ${(2 * n).toLocaleString('en-US')} changes (cold start 1 -> 2, boundary 2 -> 4); the boundary's phase (reload to the end): ${perKey((k) => `${k.changes}+${k.reads}r`)}`,
    ),
  ];
  const heapNote = (label: string) => {
    const h = r.heaps.find((x) => x.label === label);
    if (!h || h.scrapes === 0) return `run with NODE_OPTIONS=${r.nodeOptions}; its /metrics never answered`;
    return `run with NODE_OPTIONS=${r.nodeOptions}; its /metrics (${h.scrapes} scrapes, one every 10 s) at its highest RSS: ${mb(h.rssMb)} MB resident, V8 heap ${mb(h.heapTotalMb)} MB (${mb(h.heapUsedMb)} MB in use), external ${mb(h.externalMb)} MB; the most heap in use at a scrape ${mb(h.maxHeapUsedMb)} MB`;
  };
  for (const p of r.replicas) {
    figures.push(
      f(
        `replica ${p.label}: CPU time`,
        p.cpuS,
        's',
        undefined,
        undefined,
        `user + system from /proc/<pid>/stat over its life${p.label === 'a' && r.killAt !== null ? ' (to its SIGKILL)' : ''}; the run took ${(r.wallMs / 1000).toFixed(0)} s on the wall clock`,
      ),
      f(
        `replica ${p.label}: peak RSS`,
        p.peakRssMb,
        'MB',
        undefined,
        undefined,
        `VmHWM from /proc/<pid>/status; ${heapNote(p.label)}`,
      ),
    );
  }
  figures.push(
    f(
      'Redis used_memory_peak',
      r.redisUsedMemoryPeakMb,
      'MB',
      undefined,
      undefined,
      `the replicas' redis-server alone; used_memory at the end ${r.redisUsedMemoryMb.toFixed(1)} MB; redis-server ${r.redis.cpuS.toFixed(1)} CPU s, VmHWM ${r.redis.peakRssMb.toFixed(0)} MB; the embedded cloud's process ${r.cloud.cpuS.toFixed(1)} CPU s, VmHWM ${r.cloud.peakRssMb.toFixed(0)} MB`,
    ),
    f(
      'cold start: every pipe confirmed at target (platform scale)',
      (r.coldMs * c) / 1000,
      's',
      undefined,
      undefined,
      `${n.toLocaleString('en-US')} pipes 1 -> 2 replicas from the replicas' start, ${(r.coldMs / 1000).toFixed(0)} s compressed; ${r.coldChanges.toLocaleString('en-US')} change PATCHes, ${r.coldReads.toLocaleString('en-US')} reads, ${r.coldLimited} 429s`,
    ),
    f(
      'KEDA, reported by its users: ~1,000 ScaledObjects 1 -> 2 replicas converged',
      KEDA.seconds,
      's',
      undefined,
      undefined,
      `a peer's reported figure, not measured here: ${KEDA.source} (700 < N < 1,250 ScaledObjects with a cron scaler took about 2.5 h; 1,500 and 2,000 took 14-15 min); Kubernetes deployments, no platform rate limit`,
    ),
    f(
      'time to run',
      r.wallMs / 1000,
      's',
      undefined,
      undefined,
      `wall clock, setup to stop; ${kill}; exits at the end (SIGTERM): ${r.exits.map(String).join(', ')}`,
    ),
  );
  return figures;
}
