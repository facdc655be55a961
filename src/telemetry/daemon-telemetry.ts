// Everything the daemon needs from telemetry in one call: metrics and audit log bound to its
// emitter, readiness from its events, and the /metrics /healthz /readyz server with its queues'
// BullMQ metrics appended. The daemon then binds each API client it creates with bindClient().
import { Registry } from 'prom-client';
import { DEFAULT_CHECK_EVERY_MS, type DaemonEmitter } from '../daemon/index.js';
import { bindAuditLog } from './audit-log.js';
import { bindClientEvents, bindClientLog, type ClientEventSource } from './bind-client-events.js';
import { bindDaemonEvents } from './bind-daemon-events.js';
import { queueMetrics, type PrometheusExporter } from './exposition.js';
import { startTelemetry, type JsonRoute, type TelemetryServer } from './http-server.js';
import type { TelemetryLogger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { bindForecastEvents, createForecastMetrics } from './forecast-metrics.js';
import { bindConfirmationEvents, createConfirmationMetrics } from './confirmation-metrics.js';
import { bindEarlyCapacityEvents, createEarlyCapacityMetrics } from './early-capacity-metrics.js';
import { bindMetricPolicyEvents, createMetricPolicyMetrics } from './metric-policy-metrics.js';
import { bindNotifyEvents, createNotifyMetrics } from './notify-metrics.js';
import { checkContactWindowMs, createReadiness } from './readiness.js';
import type { TelemetryCredentials } from './http-auth.js';
import { createPipeLabels, type PipeView } from './pipe-labels.js';

/** The parts of the loaded config telemetry reads (src/config/types.ts Config fits). */
export interface TelemetryConfigView {
  /** Their policy and key group the families not kept per pipe (pipe-labels.ts). */
  readonly pipes: readonly PipeView[];
  readonly evaluate: { readonly reconcileMs: number };
  readonly telemetry: {
    readonly listen: string;
    readonly perPipeDetail?: boolean;
    readonly auth?: TelemetryCredentials;
  };
  /** The API keys in force (their reconcile periods are exported); absent: never dropped. */
  readonly api?: { readonly keys: Readonly<Record<string, unknown>>; readonly checkEveryMs?: number };
  /** The notification sinks (their dead-letter counters start at 0). */
  readonly notify?: { readonly sinks: readonly { readonly name: string }[] };
}

export interface DaemonTelemetryOptions {
  readonly emitter: DaemonEmitter;
  readonly logger: TelemetryLogger;
  /** The config in force, asked again after each reload. */
  readonly config: () => TelemetryConfigView;
  /** The daemon's BullMQ queues (evaluate and one apply queue per API key). */
  readonly queues: () => Iterable<PrometheusExporter>;
  /** Overrides config.telemetry.listen (e.g. from PIPESCALER_TELEMETRY_LISTEN). */
  readonly listen?: string;
  readonly version?: string;
  /** Whether Redis was already ready when this is called (later changes come as events). */
  readonly redisReady?: boolean;
  /** Slack past the reconcile interval for the API check of /readyz (default 60 s). */
  readonly graceMs?: number;
  readonly registry?: Registry;
  /** Read-only JSON routes served next to /metrics (/history). */
  readonly routes?: Readonly<Record<string, JsonRoute>>;
}

export interface DaemonTelemetry {
  readonly url: string;
  readonly registry: Registry;
  readonly metrics: Metrics;
  /** Subscribe one API client's events (metrics and log) under its key's config name; returns the unsubscribe. */
  bindClient(events: ClientEventSource, key?: string): () => void;
  /** Unsubscribe everything and stop the server. */
  close(): Promise<void>;
}

export async function startDaemonTelemetry(options: DaemonTelemetryOptions): Promise<DaemonTelemetry> {
  const { emitter, logger, config } = options;
  const registry = options.registry ?? new Registry();
  const metrics = createMetrics(registry, options.version === undefined ? {} : { version: options.version });
  const readiness = createReadiness(emitter, {
    reconcileMs: () => config().evaluate.reconcileMs,
    contactWindowMs: () => checkContactWindowMs(config().api?.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS),
    configLoaded: true,
    redisReady: options.redisReady ?? false,
    ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
  });
  const labels = createPipeLabels(
    () => config().pipes,
    () => config().telemetry.perPipeDetail === true,
  );
  // a pipe's conditions have a series while they hold, unless every pipe's are asked for
  metrics.pipeFailing.keepZeros = labels.detail;
  metrics.paused.keepZeros = labels.detail;
  const confirmation = createConfirmationMetrics(registry);
  confirmation.unconfirmed.keepZeros = labels.detail;
  const keysInForce = () => {
    const keys = config().api?.keys;
    return keys ? Object.keys(keys) : null;
  };
  const unbinds = [
    bindDaemonEvents(emitter, metrics, { pipes: () => config().pipes.map((p) => p.name), keys: keysInForce, labels }),
    bindAuditLog(emitter, logger),
    bindMetricPolicyEvents(emitter, createMetricPolicyMetrics(registry), labels),
    bindNotifyEvents(emitter, createNotifyMetrics(registry), () => (config().notify?.sinks ?? []).map((s) => s.name)),
    bindForecastEvents(emitter, createForecastMetrics(registry), logger, labels),
    bindConfirmationEvents(emitter, confirmation, logger, () => config().pipes.map((p) => p.name), labels),
    bindEarlyCapacityEvents(emitter, createEarlyCapacityMetrics(registry), labels, () =>
      config().pipes.map((p) => p.name),
    ),
    () => readiness.close(),
  ];
  const unbindAll = (): void => {
    for (const unbind of unbinds.splice(0)) unbind();
  };
  let server: TelemetryServer;
  try {
    server = await startTelemetry({
      listen: options.listen ?? config().telemetry.listen,
      registry,
      readiness: readiness.report,
      extraMetrics: queueMetrics(options.queues),
      auth: () => config().telemetry.auth,
      ...(options.routes ? { routes: options.routes } : {}),
    });
  } catch (err) {
    unbindAll();
    throw err;
  }
  logger.info(
    { url: server.url, auth: config().telemetry.auth?.type ?? 'none' },
    'telemetry listening (/metrics, /healthz, /readyz)',
  );
  return {
    url: server.url,
    registry,
    metrics,
    bindClient(events, key) {
      const off = [bindClientEvents(events, metrics, key === undefined ? {} : { key }), bindClientLog(events, logger)];
      const unbind = (): void => off.forEach((f) => f());
      unbinds.push(unbind);
      return unbind;
    },
    async close() {
      unbindAll();
      await server.close();
    },
  };
}
