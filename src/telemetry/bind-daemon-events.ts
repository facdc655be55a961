// Daemon events -> metrics. The daemon only emits; this is the one place that turns its events
// into numbers, so a metric cannot drift from what actually happened.
import { SCALING_FIELDS, type ScalingValues } from '../api/index.js';
import type { DaemonEmitter } from '../daemon/events.js';
import { codeLabel, configName, reasonLabel } from './labels.js';
import type { Metrics } from './metrics.js';
import { subscribe, type DaemonListeners } from './subscribe.js';

export interface BindDaemonOptions {
  /** Epoch ms; the clock for pipescaler_last_evaluation_timestamp_seconds. */
  readonly now?: () => number;
  /** The pipes of the config in force: after a successful reload, the gauges of pipes no longer
   *  in it are dropped (else a removed pipe's last desire would keep an alert going). */
  readonly pipes?: () => readonly string[];
}

const RESULTS: ReadonlySet<string> = new Set(['applied', 'skipped', 'failed', 'dry_run', 'none']);
const DIRECTIONS: ReadonlySet<string> = new Set(['up', 'down', 'none']);

/** Subscribe the metrics to the daemon's events; returns the unsubscribe. */
export function bindDaemonEvents(emitter: DaemonEmitter, metrics: Metrics, options: BindDaemonOptions = {}): () => void {
  const now = options.now ?? Date.now;
  /** Active windows per pipe, so a window that ends drops to 0 instead of staying at 1. */
  const activeWindows = new Map<string, Set<string>>();
  /** Every window series per pipe, and every pipe with a gauge, for dropping removed pipes. */
  const windowSeries = new Map<string, Set<string>>();
  const gaugedPipes = new Set<string>();
  const parkedPipes = new Set<string>();

  const setValues = (gauge: Metrics['desired'], pipe: string, values: ScalingValues): void => {
    gaugedPipes.add(pipe);
    for (const field of SCALING_FIELDS) {
      const v = values[field];
      // A field the pipe does not take (or that the platform reported as unknown) has no series.
      if (typeof v === 'number' && Number.isFinite(v)) gauge.set({ pipe, field }, v);
      else gauge.remove({ pipe, field });
    }
  };

  const forget = (pipe: string): void => {
    setValues(metrics.desired, pipe, {});
    setValues(metrics.applied, pipe, {});
    for (const window of windowSeries.get(pipe) ?? []) metrics.windowActive.remove({ pipe, window });
    metrics.paused.remove({ pipe });
    metrics.parked.remove({ pipe });
    for (const known of [gaugedPipes, parkedPipes]) known.delete(pipe);
    activeWindows.delete(pipe);
    windowSeries.delete(pipe);
  };

  const listeners: DaemonListeners = {
    tick: ({ at }) => {
      metrics.ticks.inc();
      metrics.lastTick.set(at / 1000);
    },
    evaluation: ({ pipe, durationMs, lagMs, decision }) => {
      metrics.evaluations.inc({ pipe: configName(pipe), action: decision.action });
      metrics.evaluationDuration.observe(Math.max(0, durationMs) / 1000);
      metrics.tickLag.observe(Math.max(0, lagMs) / 1000);
      metrics.lastEvaluation.set(now() / 1000);
    },
    decision: ({ pipe, direction, result, reason }) => {
      // A skipped pipe (paused, stopped, endpoint not ready) wants nothing now: its old desire
      // must not keep the "not at desired scaling" alert going.
      if (result === 'skipped') setValues(metrics.desired, configName(pipe), {});
      metrics.decisions.inc({
        pipe: configName(pipe),
        direction: DIRECTIONS.has(direction) ? direction : 'none',
        result: RESULTS.has(result) ? result : 'none',
        reason: reasonLabel(reason),
      });
    },
    desired: ({ pipe, values }) => setValues(metrics.desired, configName(pipe), values),
    applied: ({ pipe, values }) => setValues(metrics.applied, configName(pipe), values),
    window: ({ pipe, windows }) => {
      const p = configName(pipe);
      const current = new Set(windows.map(configName));
      for (const w of activeWindows.get(p) ?? []) if (!current.has(w)) metrics.windowActive.set({ pipe: p, window: w }, 0);
      for (const w of current) metrics.windowActive.set({ pipe: p, window: w }, 1);
      activeWindows.set(p, current);
      gaugedPipes.add(p);
      const series = windowSeries.get(p) ?? new Set<string>();
      for (const w of current) series.add(w);
      windowSeries.set(p, series);
    },
    paused: ({ pipe, paused }) => {
      gaugedPipes.add(configName(pipe));
      metrics.paused.set({ pipe: configName(pipe) }, paused ? 1 : 0);
    },
    parked: ({ pipe }) => {
      const p = configName(pipe);
      parkedPipes.add(p);
      gaugedPipes.add(p);
      metrics.parked.set({ pipe: p }, 1);
    },
    'apply:start': ({ key, queueWaitMs }) => metrics.applyQueueWait.observe({ key: configName(key) }, Math.max(0, queueWaitMs) / 1000),
    'apply:retry': ({ pipe, code }) => metrics.applyRetries.inc({ pipe: configName(pipe), code: codeLabel(code) }),
    'rate-limited': ({ key }) => metrics.rateLimitPauses.inc({ key: configName(key) }),
    drift: ({ pipe }) => metrics.drift.inc({ pipe: configName(pipe) }),
    'config:reload': ({ result }) => {
      metrics.configReloads.inc({ result });
      metrics.configLastReloadSuccess.set(result === 'success' ? 1 : 0);
      if (result !== 'success') return;
      // A reload unparks every pipe (the daemon tries them again with the new keys).
      for (const p of parkedPipes) metrics.parked.set({ pipe: p }, 0);
      parkedPipes.clear();
      if (options.pipes === undefined) return;
      const kept = new Set(options.pipes().map(configName));
      for (const p of [...gaugedPipes]) if (!kept.has(p)) forget(p);
    },
    'redis:status': ({ ready }) => metrics.redisUp.set(ready ? 1 : 0),
    'api:contact': ({ at }) => metrics.apiLastContact.set(at / 1000),
  };

  return subscribe(emitter, listeners);
}
