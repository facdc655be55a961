// The metrics and log lines of change confirmation (src/daemon/lifecycle/confirmation.ts): how long each
// change took from sent to confirmed at target (by pipe kind, and the last value per pipe; a
// confirmation by a read that came late is counted apart, not as a sample), and
// which pipes have a change that did not come into force within evaluate.actuation.max
// (unconfirmed: one log line and one counted change per change of state; the gauge the alert
// PipescalerChangeUnconfirmed reads follows every evaluation of the shared state).
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DaemonEmitter } from '../daemon/index.js';
import { configName } from './labels.js';
import { LineGauge } from './line-gauge.js';
import type { TelemetryLogger } from './logger.js';
import { DETAILED, type PipeLabels } from './pipe-labels.js';
import { subscribe } from './subscribe.js';

/** From a change in force at its answer to the platform's minutes-long propagation, up to the
 *  default limit (10 min) and past it (a change confirmed late, by a reconcile read). */
export const ACTUATION_BUCKETS = [1, 5, 15, 30, 60, 90, 120, 180, 240, 300, 450, 600, 900, 1800, 3600];

export function createConfirmationMetrics(registry: Registry) {
  const registers = [registry];
  return {
    actuation: new Histogram({
      name: 'pipescaler_actuation_seconds',
      help: 'Actuation latency of confirmed changes: from the first send of a target to the answer (a read, or the change itself) that showed it in force',
      labelNames: ['kind'] as const,
      buckets: ACTUATION_BUCKETS,
      registers,
    }),
    samplesSkipped: new Counter({
      name: 'pipescaler_actuation_samples_skipped_total',
      help: 'Confirmed changes not counted as actuation samples (reason in_force_at_answer: the answer to the change showed it in force, no propagation measured; unconfirmed: it went past evaluate.actuation.max and was sent again; outcome_unknown: its outcome had been unknown)',
      labelNames: ['kind', 'reason'] as const,
      registers,
    }),
    lastActuation: new Gauge({
      name: 'pipescaler_pipe_actuation_seconds',
      help: "The pipe's last measured actuation latency (sent to confirmed at target); under telemetry.perPipeDetail only",
      labelNames: ['pipe'] as const,
      registers,
    }),
    unconfirmed: new LineGauge({
      name: 'pipescaler_pipe_unconfirmed',
      help: '1 while the pipe has a change not seen in force within evaluate.actuation.max (until a read shows it, a new target is sent, or a hand change replaces it)',
      labelNames: ['pipe'] as const,
      registers,
    }),
    unconfirmedChanges: new Counter({
      name: 'pipescaler_unconfirmed_changes_total',
      help: 'Changes that went unconfirmed: not seen in force within evaluate.actuation.max of their send, by policy (and pipe under telemetry.perPipeDetail)',
      labelNames: ['policy', 'pipe'] as const,
      registers,
    }),
  };
}

export type ConfirmationMetrics = ReturnType<typeof createConfirmationMetrics>;

/**
 * @param pipes the pipes of the config in force: after a successful reload, the series of pipes no
 *   longer in it are dropped (a removed pipe's unconfirmed change must not keep its alert going).
 */
export function bindConfirmationEvents(
  emitter: DaemonEmitter,
  m: ConfirmationMetrics,
  logger: TelemetryLogger,
  pipes?: () => readonly string[],
  labels: PipeLabels = DETAILED,
): () => void {
  let detail = labels.detail();
  /** Pipes with series: every evaluated pipe has its pipescaler_pipe_unconfirmed, 0 or 1. */
  const gauged = new Set<string>();
  const setUnconfirmed = (pipe: string, on: boolean): void => {
    gauged.add(pipe);
    m.unconfirmed.set({ pipe }, on ? 1 : 0);
  };
  return subscribe(emitter, {
    confirmed: ({ pipe, kind, values, actuationMs, sentAt, notSample }) => {
      const s = Math.max(0, actuationMs) / 1000;
      if (notSample !== undefined) {
        // a confirmation all the same; its latency is not the platform's propagation (a request's,
        // or a lost or unknown first send's)
        m.samplesSkipped.inc({ kind, reason: notSample });
        gauged.add(configName(pipe));
        logger.debug(
          {
            pipe,
            values,
            actuationSeconds: s,
            notSample,
          },
          'change confirmed at target: not an actuation sample',
        );
        return;
      }
      m.actuation.observe({ kind }, s);
      if (labels.detail()) m.lastActuation.set({ pipe: configName(pipe) }, s);
      gauged.add(configName(pipe));
      logger.debug(
        { pipe, values, actuationSeconds: s, sentAt: new Date(sentAt).toISOString() },
        'change confirmed at target',
      );
    },
    unconfirmed: ({ pipe, unconfirmed, reason, target, sentAt, resends }) => {
      const p = configName(pipe);
      setUnconfirmed(p, unconfirmed);
      const line = { pipe, target, reason, sentAt: new Date(sentAt).toISOString() };
      if (unconfirmed) {
        m.unconfirmedChanges.inc(labels.byPolicy(p));
        logger.warn(
          { ...line, resends },
          'change unconfirmed: not in force within evaluate.actuation.max of its send; sent once more, then left to reads',
        );
      } else logger.info(line, `change no longer unconfirmed (${reason})`);
    },
    'unconfirmed:seen': ({ pipe, unconfirmed }) => setUnconfirmed(configName(pipe), unconfirmed),
    'config:reload': ({ result }) => {
      if (result !== 'success') return;
      if (labels.detail() !== detail) {
        detail = labels.detail();
        m.unconfirmedChanges.reset();
        m.lastActuation.reset();
      }
      if (pipes === undefined) return;
      const kept = new Set(pipes().map(configName));
      for (const p of gauged) {
        if (kept.has(p)) continue;
        m.unconfirmed.remove({ pipe: p });
        m.lastActuation.remove({ pipe: p });
        gauged.delete(p);
      }
    },
  });
}
