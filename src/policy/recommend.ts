// `recommend`: the cheapest settings of a metric policy that keep its SLO on recorded load. Each
// candidate (a grid over targetPerReplica, the baseline's min, the scale-down stabilization and
// the windows' minimums) replays the recorded series through the daemon's own evaluation step
// (pipeTimeline, as `simulate` does); a change gives capacity `actuation` after it is made (a
// scale-down at once). Cost: replica-hours of capacity. SLO: minutes in which the load per replica
// of capacity exceeded the current config's targetPerReplica and its tolerance (what the policy
// itself accepts), at most `sloMinutes` (default: as many as the current config has). A candidate
// that costs more than the current config never wins. Pure.
import type { FieldTarget, PipeView, Policy, Target } from './types.js';
import { pipeTimeline } from './simulate.js';
import { pointBefore, type RecordedSeries } from './metric-series.js';

export interface CandidateSettings {
  readonly targetPerReplica: number;
  /** The baseline's replicas min. */
  readonly baselineMin: number;
  readonly stabilizationMs: number;
  /** The windows' replicas minimums, scaled by this (1: as configured). */
  readonly windowMinScale: number;
}

export interface CandidateResult {
  readonly settings: CandidateSettings;
  /** Replica-hours of capacity over the period, all the policy's recorded pipes together. */
  readonly capacityHours: number;
  /** Minutes over target, all pipes together. */
  readonly overMinutes: number;
  readonly current: boolean;
  /** Why it did not win: over the SLO, or dearer than the current config. Absent for the winner and the keepers. */
  readonly lost?: string;
}

export interface Recommendation {
  readonly policy: string;
  readonly sloMinutes: number;
  readonly current: CandidateResult;
  /** The cheapest candidate that keeps the SLO and costs no more than the current one (maybe the
   *  current); null when none does (the current config misses the SLO and nothing as cheap keeps it). */
  readonly best: CandidateResult | null;
  /** Every candidate, cheapest first. */
  readonly candidates: readonly CandidateResult[];
}

export interface RecommendOptions {
  readonly from: number;
  readonly to: number;
  readonly stepMs: number;
  /** Most minutes over target over the period; default the current config's own. */
  readonly sloMinutes?: number;
  /** A change gives capacity this long after it is made (default 5 min). */
  readonly actuationMs?: number;
}

/** A recorded pipe of the policy: its series and where its replay starts. */
export interface RecordedPipe {
  readonly name: string;
  readonly series: RecordedSeries;
  readonly view: PipeView;
}

const TARGET_SCALES = [0.75, 0.85, 1, 1.1, 1.2, 1.35, 1.5];
const STABILIZATIONS_MS = [0, 120_000, 300_000, 600_000, 900_000];
const WINDOW_MIN_SCALES = [1, 0.75, 0.5];

const minOf = (t: FieldTarget | undefined): number | undefined =>
  t === undefined ? undefined : 'value' in t ? t.value : t.min;

/** The grid around the policy's current settings (the current ones included, deduplicated). */
export function candidateGrid(policy: Policy): CandidateSettings[] {
  const per = policy.metric?.targetPer.replicas;
  if (per === undefined) throw new RangeError(`policy ${policy.name} has no metric with targetPerReplica`);
  const baseMin = minOf(policy.baseline.replicas) ?? 1;
  const stab = policy.behavior.scaleDown.stabilizationMs;
  const hasWindowMins = policy.windows.some((w) => (minOf(w.target.replicas) ?? 0) > 1);
  const mins = [...new Set([baseMin, Math.max(1, Math.floor(baseMin / 2)), 1])];
  const out: CandidateSettings[] = [];
  const seen = new Set<string>();
  for (const scale of TARGET_SCALES)
    for (const baselineMin of mins)
      for (const stabilizationMs of [...new Set([stab, ...STABILIZATIONS_MS])])
        for (const windowMinScale of hasWindowMins ? WINDOW_MIN_SCALES : [1]) {
          const s = {
            targetPerReplica: Math.round(per * scale * 1000) / 1000,
            baselineMin,
            stabilizationMs,
            windowMinScale,
          };
          // scales that round to the same window minimums are one candidate
          const windowMins = policy.windows.map((w) => {
            const m = minOf(w.target.replicas);
            return m === undefined ? null : Math.max(1, Math.round(m * windowMinScale));
          });
          const key = JSON.stringify([s.targetPerReplica, baselineMin, stabilizationMs, windowMins]);
          if (seen.has(key)) continue;
          seen.add(key);
          out.push(s);
        }
  return out;
}

function withMin(t: FieldTarget | undefined, min: (m: number) => number): FieldTarget | undefined {
  if (t === undefined || 'value' in t) return t;
  return { min: Math.min(t.max, Math.max(1, min(t.min))), max: t.max };
}

/** The policy with a candidate's settings. */
export function candidatePolicy(policy: Policy, s: CandidateSettings): Policy {
  const metric = policy.metric;
  if (!metric) return policy;
  const replicas = (target: Target, min: (m: number) => number): Target => {
    const r = withMin(target.replicas, min);
    return r === undefined ? target : { ...target, replicas: r };
  };
  return {
    ...policy,
    baseline: replicas(policy.baseline, () => s.baselineMin),
    windows: policy.windows.map((w) => ({
      ...w,
      target: replicas(w.target, (m) => Math.round(m * s.windowMinScale)),
    })),
    behavior: { ...policy.behavior, scaleDown: { ...policy.behavior.scaleDown, stabilizationMs: s.stabilizationMs } },
    metric: { ...metric, targetPer: { ...metric.targetPer, replicas: s.targetPerReplica } },
  };
}

/** Replays one candidate over every recorded pipe: its capacity-hours and minutes over `sloTarget`. */
function replay(
  policy: Policy,
  pipes: readonly RecordedPipe[],
  o: RecommendOptions,
  sloTarget: number,
): { capacityHours: number; overMinutes: number } {
  const actuation = o.actuationMs ?? 300_000;
  const ticks = Math.ceil((o.to - o.from) / o.stepMs);
  let capacityHours = 0;
  let overMs = 0;
  for (const pipe of pipes) {
    const { points } = pipe.series;
    // the recorded value at each tick, looked up once for every candidate's replay
    const values = valuesAt(points, o.from, o.stepMs, ticks);
    const metric = (now: number) => {
      const i = Math.floor((now - o.from) / o.stepMs);
      const v = values[i];
      return v === undefined || Number.isNaN(v) ? { error: 'no recorded value' } : { value: v, at: now };
    };
    const changes = pipeTimeline(policy, pipe.view, o.from, o.to, o.stepMs, metric);
    const applied = new Float64Array(ticks);
    let now = pipe.view.applied.replicas ?? 1;
    let c = 0;
    for (let i = 0; i < ticks; i++) {
      for (let ch = changes[c]; ch !== undefined && ch.at <= o.from + i * o.stepMs; ch = changes[++c])
        now = ch.scaling.replicas ?? now;
      applied[i] = now;
    }
    // a rise gives capacity `actuation` after it was made, a fall at once
    const lag = Math.round(actuation / o.stepMs);
    for (let i = 0; i < ticks; i++) {
      const capacity = Math.min(applied[i] ?? 0, applied[Math.max(0, i - lag)] ?? 0);
      capacityHours += (capacity * o.stepMs) / 3_600_000;
      const v = values[i];
      if (v !== undefined && v > capacity * sloTarget) overMs += o.stepMs;
    }
  }
  return { capacityHours, overMinutes: overMs / 60_000 };
}

/** The value at each tick: the newest point at or before it (NaN before the first). */
function valuesAt(points: RecordedSeries['points'], from: number, stepMs: number, ticks: number): Float64Array {
  const out = new Float64Array(ticks).fill(NaN);
  let i = pointBefore(points, from);
  for (let k = 0; k < ticks; k++) {
    const t = from + k * stepMs;
    while ((points[i + 1]?.[0] ?? Infinity) <= t) i++;
    const p = points[i];
    if (p !== undefined) out[k] = p[1];
  }
  return out;
}

/** The cheapest candidate that keeps the SLO, never dearer than the current config. */
export function recommend(policy: Policy, pipes: readonly RecordedPipe[], o: RecommendOptions): Recommendation {
  const grid = candidateGrid(policy);
  const per = policy.metric?.targetPer.replicas ?? 1;
  const sloTarget = per * (1 + (policy.metric?.tolerance ?? 0));
  const isCurrent = (s: CandidateSettings): boolean =>
    s.targetPerReplica === per &&
    s.baselineMin === (minOf(policy.baseline.replicas) ?? 1) &&
    s.stabilizationMs === policy.behavior.scaleDown.stabilizationMs &&
    s.windowMinScale === 1;
  const runs = grid.map((settings) => ({
    settings,
    current: isCurrent(settings),
    ...replay(candidatePolicy(policy, settings), pipes, o, sloTarget),
  }));
  const current = runs.find((r) => r.current) ?? runs[0];
  if (current === undefined) throw new RangeError('no candidate');
  const slo = o.sloMinutes ?? current.overMinutes;
  const judged: CandidateResult[] = runs
    .map((r): CandidateResult => {
      if (r.overMinutes > slo)
        return { ...r, lost: `${round(r.overMinutes)} min over target, more than the SLO's ${round(slo)}` };
      if (r.capacityHours > current.capacityHours + 1e-9)
        return {
          ...r,
          lost: `costs more than the current config (${round(r.capacityHours)} > ${round(current.capacityHours)} capacity-hours)`,
        };
      return r;
    })
    .sort((a, b) => a.capacityHours - b.capacityHours || Number(b.current) - Number(a.current));
  const best = judged.find((r) => r.lost === undefined) ?? null;
  // the current config loses only to a cheaper one, and is said to
  const candidates = judged.map((r) =>
    r === best || r.lost !== undefined
      ? r
      : {
          ...r,
          lost: r.current
            ? 'the recommended settings cost less'
            : `${round(r.capacityHours)} capacity-hours, more than the recommended`,
        },
  );
  return { policy: policy.name, sloMinutes: slo, current, best, candidates };
}

const round = (v: number): number => Math.round(v * 10) / 10;

/** The config lines to change for a candidate's settings, as `path: old -> new` (none: keep it). */
export function settingsDiff(policy: Policy, s: CandidateSettings): string[] {
  const base = `policies.${policy.name}`;
  const lines: string[] = [];
  const per = policy.metric?.targetPer.replicas;
  if (per !== undefined && per !== s.targetPerReplica)
    lines.push(`${base}.metric.targetPerReplica: ${per} -> ${round(s.targetPerReplica)}`);
  const baseMin = policy.baseline.replicas;
  const next = candidatePolicy(policy, s);
  if (baseMin !== undefined && !('value' in baseMin) && baseMin.min !== s.baselineMin)
    lines.push(`${base}.baseline.replicas.min: ${baseMin.min} -> ${minOf(next.baseline.replicas) ?? s.baselineMin}`);
  const stab = policy.behavior.scaleDown.stabilizationMs;
  if (stab !== s.stabilizationMs)
    lines.push(`${base}.behavior.scaleDown.stabilization: ${duration(stab)} -> ${duration(s.stabilizationMs)}`);
  policy.windows.forEach((w, i) => {
    const was = w.target.replicas;
    const now = next.windows[i]?.target.replicas;
    if (was && now && !('value' in was) && !('value' in now) && was.min !== now.min)
      lines.push(`${base}.windows[${w.name}].bounds.replicas.min: ${was.min} -> ${now.min}`);
  });
  return lines;
}

const duration = (ms: number): string => (ms === 0 ? '0' : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);
