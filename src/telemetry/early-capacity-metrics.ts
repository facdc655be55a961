// The metrics of capacity spent early and short at window starts (policy/early-capacity.ts), from
// each verdict the daemon gives: the seconds of each unit (Prometheus' base unit: a replica-minute
// is 60 replica-seconds) the step to the window's target held
// before its boundary (early) and lacked after it (short), counted per policy (the pipe label too
// under telemetry.perPipeDetail, pipe-labels.ts), and how long before its boundary each
// start's target was in force, one histogram for the fleet. At most 8 counter series per policy
// (two directions x four units), none per pipe by default.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { DaemonEmitter } from '../daemon/index.js';
import { CAPACITY_UNITS, isNoMinutes, type CapacityMinutes, type CapacityUnit } from '../policy/index.js';
import { configName } from './labels.js';
import { DETAILED, type PipeLabels } from './pipe-labels.js';
import { subscribe } from './subscribe.js';

/** The `unit` label of each unit: replica-, core-, GB- and concurrency-slot-minutes. */
export const UNIT_LABELS: Readonly<Record<CapacityUnit, string>> = {
  replicaMinutes: 'replica',
  coreMinutes: 'core',
  gbMinutes: 'gb',
  slotMinutes: 'slot',
};

/** From a change in force just before its boundary to a lead of hours (24 h: the longest). */
export const EARLY_BUCKETS = [0, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 43200, 86400];

export function createEarlyCapacityMetrics(registry: Registry) {
  const registers = [registry];
  const labelNames = ['policy', 'pipe', 'unit'] as const;
  return {
    early: new Counter({
      name: 'pipescaler_window_early_capacity_seconds_total',
      help: "Capacity in force before a window start needed it, by policy and unit (replica: replicas x seconds; core: replicas x cores per replica x seconds; gb: replicas x GB per replica x seconds; slot: concurrency x seconds): the step to the window's target, from the read that confirmed it to the boundary",
      labelNames,
      registers,
    }),
    short: new Counter({
      name: 'pipescaler_window_short_capacity_seconds_total',
      help: "Capacity a window start wanted and did not have, by policy and unit (as pipescaler_window_early_capacity_seconds_total): the step to the window's target, from the boundary to the read that confirmed it (to the verdict's deadline when none did)",
      labelNames,
      registers,
    }),
    earlySeconds: new Histogram({
      name: 'pipescaler_window_early_seconds',
      help: "How long before a window start the pipe was confirmed at the window's target, over starts met with a scale-up (a start whose target was in force already spends nothing early)",
      buckets: EARLY_BUCKETS,
      registers,
    }),
  };
}

export type EarlyCapacityMetrics = ReturnType<typeof createEarlyCapacityMetrics>;

/**
 * @param labels a pipe's labels (its policy, and its name too under telemetry.perPipeDetail:
 *   pipe-labels.ts); turned on or off at a reload, the counters start over.
 * @param pipes the pipes of the config in force: each one's policy (each pipe's, under detail)
 *   has its series from 0, so the first start counted shows as an increase.
 */
export function bindEarlyCapacityEvents(
  emitter: DaemonEmitter,
  m: EarlyCapacityMetrics,
  labels: PipeLabels = DETAILED,
  pipes: () => readonly string[] = () => [],
): () => void {
  let detail = labels.detail();
  /** Label sets (serialized) whose series exist from 0. */
  const started = new Set<string>();
  const startPolicies = (): void => {
    for (const pipe of pipes()) {
      const g = labels.byPolicy(configName(pipe));
      const id = JSON.stringify(g);
      if (started.has(id)) continue;
      started.add(id);
      for (const u of CAPACITY_UNITS) {
        m.early.inc({ ...g, unit: UNIT_LABELS[u] }, 0);
        m.short.inc({ ...g, unit: UNIT_LABELS[u] }, 0);
      }
    }
  };
  const count = (
    c: Counter<'policy' | 'pipe' | 'unit'>,
    labels: { policy: string; pipe?: string },
    v: CapacityMinutes,
  ) => {
    for (const u of CAPACITY_UNITS) if (v[u] > 0) c.inc({ ...labels, unit: UNIT_LABELS[u] }, v[u] * 60);
  };
  startPolicies();
  return subscribe(emitter, {
    'config:reload': ({ result }) => {
      if (result !== 'success') return;
      if (labels.detail() !== detail) {
        detail = labels.detail();
        m.early.reset();
        m.short.reset();
        started.clear();
      }
      startPolicies();
    },
    verdict: ({ pipe, verdict, early, short, boundary, confirmedAt }) => {
      if (early === undefined && short === undefined) return;
      const g = labels.byPolicy(configName(pipe));
      if (early) count(m.early, g, early);
      if (short) count(m.short, g, short);
      if (verdict === 'met' && early && !isNoMinutes(early) && confirmedAt !== undefined)
        m.earlySeconds.observe(Math.max(0, boundary - confirmedAt) / 1000);
    },
  });
}
