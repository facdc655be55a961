// Daemon events -> metrics. The daemon only emits; this is the one place that turns its events
// into numbers, so a metric cannot drift from what actually happened.
import { SCALING_FIELDS, type ScalingValues } from '../api/index.js';
import { STATE_LOSS_CAUSES, type DaemonEmitter } from '../daemon/index.js';
import { VERDICTS } from '../policy/index.js';
import { GroupedFlag } from './grouped-flag.js';
import { codeLabel, configName, operationLabel, reasonLabel } from './labels.js';
import type { Metrics } from './metrics.js';
import { DETAILED, type PipeLabels } from './pipe-labels.js';
import { subscribe, type DaemonListeners } from './subscribe.js';

export interface BindDaemonOptions {
  /** Epoch ms; the clock for pipescaler_last_evaluation_timestamp_seconds. */
  readonly now?: () => number;
  /** The pipes of the config in force: after a successful reload, the gauges of pipes no longer
   *  in it are dropped (else a removed pipe's last desire would keep an alert going). */
  readonly pipes?: () => readonly string[];
  /** The API keys of the config in force: after a successful reload, the reconcile period of a
   *  key no longer in it (a key taken out of a pool) is dropped. */
  readonly keys?: () => readonly string[] | null;
  /** Which families are kept per pipe and which per policy or key (default: every one per pipe,
   *  policy `other`; the daemon passes the config's, pipe-labels.ts). */
  readonly labels?: PipeLabels;
}

export const DECISION_RESULTS = ['applied', 'skipped', 'failed', 'dry_run', 'none'] as const;
const RESULTS: ReadonlySet<string> = new Set(DECISION_RESULTS);
const DIRECTIONS: ReadonlySet<string> = new Set(['up', 'down', 'none', 'mixed']);

/** The families kept per policy (per pipe under detail): started over when detail is turned on or off. */
const POLICY_COUNTERS = [
  'evaluations',
  'decisions',
  'decisionResults',
  'applyRetries',
  'drift',
  'driftActions',
  'overrides',
  'freezeHeld',
  'windowVerdicts',
] as const satisfies readonly (keyof Metrics)[];

/** Subscribe the metrics to the daemon's events; returns the unsubscribe. */
export function bindDaemonEvents(
  emitter: DaemonEmitter,
  metrics: Metrics,
  options: BindDaemonOptions = {},
): () => void {
  const now = options.now ?? Date.now;
  const pl = options.labels ?? DETAILED;
  let detail = pl.detail();
  const windowActive = new GroupedFlag(metrics.windowActive, pl.byPolicy);
  const parked = new GroupedFlag(metrics.parked, pl.byKey);
  const backoff = new GroupedFlag(metrics.backoff, pl.byPolicy);
  /** Active windows per pipe, so a window that ends drops to 0 instead of staying at 1. */
  const activeWindows = new Map<string, Set<string>>();
  /** Every pipe with a per-pipe gauge, for dropping removed pipes. */
  const gaugedPipes = new Set<string>();
  /** Keys with a pipescaler_reconcile_period_seconds series. */
  const plannedKeys = new Set<string>();
  /** Label sets (serialized) whose counters exist from 0: a policy's, or a pipe's under detail. */
  const counted = new Set<string>();

  const countFromZero = (pipes: readonly string[]): void => {
    for (const p of pipes.map(configName)) {
      if (!gaugedPipes.has(p)) {
        gaugedPipes.add(p);
        metrics.pipeFailing.set({ pipe: p }, 0);
      }
      const g = pl.byPolicy(p);
      const id = JSON.stringify(g);
      if (counted.has(id)) continue;
      counted.add(id);
      for (const result of DECISION_RESULTS) metrics.decisionResults.inc({ ...g, result }, 0);
      metrics.drift.inc(g, 0);
      // one series each from the start, for the dashboard's operator panel: the first override,
      // change made by hand or freeze shows as a step from 0, not as a series appearing
      metrics.driftActions.inc({ ...g, action: 'revert' }, 0);
      metrics.overrides.inc({ ...g, action: 'set', source: 'operator' }, 0);
      metrics.freezeHeld.inc(g, 0);
      for (const verdict of VERDICTS) metrics.windowVerdicts.inc({ ...g, verdict }, 0);
    }
  };
  if (options.pipes !== undefined) countFromZero(options.pipes());

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
    for (const flag of [windowActive, parked, backoff]) flag.forget(pipe);
    metrics.paused.remove({ pipe });
    metrics.pipeFailing.remove({ pipe });
    // Counters keep their history (pipescaler_decision_results_total, pipescaler_drift_total).
    gaugedPipes.delete(pipe);
    activeWindows.delete(pipe);
  };

  /** telemetry.perPipeDetail turned on or off: the families kept per policy start over. */
  const regroup = (): void => {
    for (const name of POLICY_COUNTERS) metrics[name].reset();
    counted.clear();
  };

  const listeners: DaemonListeners = {
    tick: ({ at }) => {
      metrics.ticks.inc();
      metrics.lastTick.set(at / 1000);
    },
    evaluation: ({ pipe, durationMs, lagMs, decision }) => {
      metrics.evaluations.inc({ ...pl.byPolicy(configName(pipe)), action: decision.action });
      metrics.evaluationDuration.observe(Math.max(0, durationMs) / 1000);
      metrics.tickLag.observe(Math.max(0, lagMs) / 1000);
      metrics.lastEvaluation.set(now() / 1000);
    },
    decision: ({ pipe, direction, result, reason }) => {
      // A skipped pipe (paused, stopped, endpoint not ready) wants nothing now: its old desire
      // must not keep the "not at desired scaling" alert going.
      if (result === 'skipped') setValues(metrics.desired, configName(pipe), {});
      const p = configName(pipe);
      const r = RESULTS.has(result) ? result : 'none';
      const g = pl.byPolicy(p);
      metrics.decisions.inc({
        ...g,
        direction: DIRECTIONS.has(direction) ? direction : 'none',
        result: r,
        reason: reasonLabel(reason),
      });
      metrics.decisionResults.inc({ ...g, result: r });
      // A failure holds until a call for the pipe succeeds (an apply here, a read: read:recovered).
      if (r === 'failed') metrics.pipeFailing.set({ pipe: p }, 1);
      else if (r === 'applied') metrics.pipeFailing.set({ pipe: p }, 0);
    },
    desired: ({ pipe, values }) => setValues(metrics.desired, configName(pipe), values),
    applied: ({ pipe, values }) => setValues(metrics.applied, configName(pipe), values),
    window: ({ pipe, windows }) => {
      const p = configName(pipe);
      const current = new Set(windows.map(configName));
      for (const w of activeWindows.get(p) ?? []) if (!current.has(w)) windowActive.set(p, false, { window: w });
      for (const w of current) windowActive.set(p, true, { window: w });
      activeWindows.set(p, current);
      gaugedPipes.add(p);
    },
    paused: ({ pipe, paused }) => {
      gaugedPipes.add(configName(pipe));
      metrics.paused.set({ pipe: configName(pipe) }, paused ? 1 : 0);
    },
    parked: ({ pipe }) => {
      gaugedPipes.add(configName(pipe));
      parked.set(configName(pipe), true);
    },
    backoff: ({ pipe, backingOff }) => {
      gaugedPipes.add(configName(pipe));
      backoff.set(configName(pipe), backingOff);
    },
    'apply:start': ({ key, queueWaitMs }) =>
      metrics.applyQueueWait.observe({ key: configName(key) }, Math.max(0, queueWaitMs) / 1000),
    'apply:retry': ({ pipe, code, operation }) => {
      metrics.applyRetries.inc({ ...pl.byPolicy(configName(pipe)), code: codeLabel(code) });
      // The daemon's clients leave retries to BullMQ, so its retries are the API retries.
      if (operation !== undefined)
        metrics.apiRetries.inc({ operation: operationLabel(operation), code: codeLabel(code) });
    },
    'rate-limited': ({ key }) => metrics.rateLimitPauses.inc({ key: configName(key) }),
    'budget:plan': ({ key, reconcileMs }) => {
      // every key in force has its series from the start, so the alert on it has something to read
      // and increase() sees a key's first expired unit
      if (!plannedKeys.has(configName(key))) {
        metrics.apiKeyRejected.set({ key: configName(key) }, 0);
        metrics.budgetUnitsExpired.inc({ key: configName(key) }, 0);
      }
      plannedKeys.add(configName(key));
      metrics.reconcilePeriod.set({ key: configName(key) }, reconcileMs / 1000);
    },
    'budget:unit-expired': ({ key }) => metrics.budgetUnitsExpired.inc({ key: configName(key) }),
    'rate-limit:reset-invalid': ({ key }) => metrics.rateLimitResetInvalid.inc({ key: configName(key) }),
    'api:envelope-issue': ({ key }) => metrics.envelopeIssues.inc({ key: configName(key) }),
    'read:recovered': ({ pipe }) => metrics.pipeFailing.set({ pipe: configName(pipe) }, 0),
    drift: ({ pipe, onDrift }) => {
      const g = pl.byPolicy(configName(pipe));
      metrics.drift.inc(g);
      metrics.driftActions.inc({ ...g, action: onDrift ?? 'revert' });
    },
    override: ({ pipe, action, source }) => metrics.overrides.inc({ ...pl.byPolicy(configName(pipe)), action, source }),
    freeze: (f) => {
      if (f.action === 'held') metrics.freezeHeld.inc(pl.byPolicy(configName(f.pipe)));
    },
    verdict: ({ pipe, verdict, lateMs }) => {
      metrics.windowVerdicts.inc({ ...pl.byPolicy(configName(pipe)), verdict });
      if (verdict === 'met' || verdict === 'late') metrics.windowLateness.observe(Math.max(0, lateMs ?? 0) / 1000);
    },
    'state:invalid': () => metrics.stateInvalid.inc(),
    'config:reload': ({ result }) => {
      metrics.configReloads.inc({ result });
      metrics.configLastReloadSuccess.set(result === 'success' ? 1 : 0);
      if (result !== 'success') return;
      // A reload unparks every pipe (the daemon tries them again with the new keys).
      parked.setAll(false);
      const inForceKeys = options.keys?.() ?? null;
      if (inForceKeys !== null) {
        const keys = new Set(inForceKeys.map(configName));
        for (const k of plannedKeys) {
          if (keys.has(k)) continue;
          metrics.reconcilePeriod.remove({ key: k });
          metrics.apiKeyRejected.remove({ key: k });
          metrics.budgetUnitsExpired.remove({ key: k });
          plannedKeys.delete(k);
        }
      }
      if (options.pipes === undefined) return;
      const inForce = options.pipes();
      const kept = new Set(inForce.map(configName));
      for (const p of gaugedPipes) if (!kept.has(p)) forget(p);
      if (pl.detail() !== detail) {
        detail = pl.detail();
        regroup();
      }
      // pipes may have moved to another policy or key, or detail changed
      for (const flag of [windowActive, parked, backoff]) flag.refresh();
      countFromZero(inForce);
    },
    'redis:status': ({ ready }) => metrics.redisUp.set(ready ? 1 : 0),
    'redis:state': ({ lost, cause }) => {
      for (const c of STATE_LOSS_CAUSES) metrics.redisStateLost.set({ cause: c }, lost && cause === c ? 1 : 0);
      if (!lost || cause === undefined) return;
      metrics.redisStateLosses.inc({ cause });
      // The pauses Redis held are gone with it, and so is each pipe's record of having been paused
      // (pausedSeen), so no evaluation would ever say 'resumed': a gauge left at 1 would claim a
      // pause over a pipe that is scaled again. A pause the config declares is said again at the
      // pipe's next evaluation (its record starts over as not paused).
      if (cause === 'data_lost') metrics.paused.reset();
    },
    'api:contact': ({ at }) => metrics.apiLastContact.set(at / 1000),
    'api:check': ({ key, result }) => metrics.apiChecks.inc({ key: configName(key), result }),
    'api:key': ({ key, refused, status }) =>
      metrics.apiKeyRejected.set({ key: configName(key) }, refused && status === 401 ? 1 : 0),
  };

  // both series from the start, so an alert on them has something to read
  for (const c of STATE_LOSS_CAUSES) {
    metrics.redisStateLost.set({ cause: c }, 0);
    metrics.redisStateLosses.inc({ cause: c }, 0);
  }
  return subscribe(emitter, listeners);
}
