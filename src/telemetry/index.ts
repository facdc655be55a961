// Watching pipescaler work: metrics, logs and the /metrics /healthz /readyz endpoint, all driven
// by the daemon's and the API client's events.
export { createMetrics, API_DURATION_BUCKETS, type Metrics, type MetricsOptions } from './metrics.js';
export { bindDaemonEvents, type BindDaemonOptions } from './bind-daemon-events.js';
export { bindClientEvents, bindClientLog, type ClientEventSource } from './bind-client-events.js';
export { bindAuditLog } from './audit-log.js';
export { bindNotifyEvents, createNotifyMetrics, type NotifyMetrics } from './notify-metrics.js';
export {
  bindConfirmationEvents,
  createConfirmationMetrics,
  ACTUATION_BUCKETS,
  type ConfirmationMetrics,
} from './confirmation-metrics.js';
export {
  createLogger,
  createScrubber,
  secretForms,
  configSecrets,
  CENSOR,
  REDACT_PATHS,
  type LoggerOptions,
  type SecretBearingConfig,
  type TelemetryLogger,
} from './logger.js';
export {
  checkContactWindowMs,
  createReadiness,
  failedChecks,
  READINESS_CHECKS,
  type Readiness,
  type ReadinessOptions,
  type ReadinessReport,
} from './readiness.js';
export {
  startTelemetry,
  parseListen,
  DEFAULT_LISTEN,
  type JsonRoute,
  type TelemetryServer,
  type TelemetryServerOptions,
} from './http-server.js';
export { mergeExpositions, queueMetrics, type PrometheusExporter } from './exposition.js';
export { createPipeLabels, type PipeLabels, type PipeView } from './pipe-labels.js';
export { authorized, type TelemetryCredentials } from './http-auth.js';
export { sharedRender, type Rendered } from './shared-render.js';
export {
  startDaemonTelemetry,
  type DaemonTelemetry,
  type DaemonTelemetryOptions,
  type TelemetryConfigView,
} from './daemon-telemetry.js';
export { Registry } from 'prom-client';
