// The metrics of notifications: deliveries per sink by result (delivered, retry, dead), and the
// dead letters, batches a sink refused through every attempt (PipescalerNotifySinkFailing in
// config/prometheus/rules.yml). Registered and bound apart from the core metrics, like the metric
// policies' own.
import { Counter, type Registry } from 'prom-client';
import type { DaemonEmitter } from '../daemon/index.js';
import { configName } from './labels.js';
import { subscribe } from './subscribe.js';

export function createNotifyMetrics(registry: Registry) {
  const registers = [registry];
  return {
    deliveries: new Counter({
      name: 'pipescaler_notify_deliveries_total',
      help: 'Notification delivery attempts by sink and result: delivered, retry (failed, tried again), dead (failed its last attempt)',
      labelNames: ['sink', 'result'] as const,
      registers,
    }),
    events: new Counter({
      name: 'pipescaler_notify_events_total',
      help: 'Outcomes delivered to a sink (a summary counts each outcome it carries)',
      labelNames: ['sink'] as const,
      registers,
    }),
    deadLetters: new Counter({
      name: 'pipescaler_notify_dead_letters_total',
      help: 'Notification batches given up on after their last attempt (kept in the notify queue failed set)',
      labelNames: ['sink'] as const,
      registers,
    }),
  };
}

export type NotifyMetrics = ReturnType<typeof createNotifyMetrics>;

/** `sinks`: the configured sinks, whose dead-letter series start at 0 (so increase() sees the first). */
export function bindNotifyEvents(emitter: DaemonEmitter, m: NotifyMetrics, sinks: () => readonly string[]): () => void {
  const zero = (): void => {
    for (const s of sinks()) m.deadLetters.inc({ sink: configName(s) }, 0);
  };
  zero();
  return subscribe(emitter, {
    'notify:delivery': ({ sink, result, events }) => {
      const s = configName(sink);
      m.deliveries.inc({ sink: s, result });
      if (result === 'delivered') m.events.inc({ sink: s }, events);
      if (result === 'dead') m.deadLetters.inc({ sink: s });
    },
    'config:reload': ({ result }) => {
      if (result === 'success') zero();
    },
  });
}
