// API client events -> metrics (and debug/warn log lines). The client emits on `client.events`
// (src/api/client-events.ts); anything with that `on`/`off` shape fits, one client per API key.
import type { ApiClientEvents } from '../api/index.js';
import { RETRIABLE_CODES } from '../api/internal.js';
import { DAEMON_OPERATIONS, ERROR_CODES, codeLabel, configName, operationLabel, statusLabel } from './labels.js';
import type { Metrics } from './metrics.js';
import type { TelemetryLogger } from './logger.js';

export interface ClientEventSource {
  on<K extends keyof ApiClientEvents>(event: K, listener: (payload: ApiClientEvents[K]) => void): unknown;
  off<K extends keyof ApiClientEvents>(event: K, listener: (payload: ApiClientEvents[K]) => void): unknown;
}

type Listeners = { [K in keyof ApiClientEvents]: (payload: ApiClientEvents[K]) => void };

function subscribe(events: ClientEventSource, listeners: Listeners): () => void {
  events.on('request', listeners.request);
  events.on('retry', listeners.retry);
  events.on('rateLimited', listeners.rateLimited);
  return () => {
    events.off('request', listeners.request);
    events.off('retry', listeners.retry);
    events.off('rateLimited', listeners.rateLimited);
  };
}

/** Failures that say the platform (or the way to it) does not work, not that a call was refused. */
const UNREACHABLE: ReadonlySet<string> = new Set([
  'API_SERVER_ERROR',
  'API_TIMEOUT',
  'API_NETWORK',
  'API_BAD_RESPONSE',
]);

export interface BindClientOptions {
  /** The config's name of the client's API key (label `key`); default "default". */
  readonly key?: string;
  /** Epoch ms; the clock for pipescaler_api_last_success_timestamp_seconds. */
  readonly now?: () => number;
}

/** Subscribe the API metrics to one client's events; returns the unsubscribe. */
export function bindClientEvents(
  events: ClientEventSource,
  metrics: Metrics,
  options: BindClientOptions = {},
): () => void {
  const key = configName(options.key ?? 'default');
  const now = options.now ?? Date.now;
  // Known label sets start at 0, so increase() and rate() see a key's first error.
  for (const operation of DAEMON_OPERATIONS) {
    for (const code of ERROR_CODES) metrics.apiErrors.inc({ key, operation, code }, 0);
    for (const code of RETRIABLE_CODES) metrics.apiRetries.inc({ operation, code }, 0);
  }
  metrics.rateLimitPauses.inc({ key }, 0);
  // Until the first answer, the key's clock starts with its client: "no success for N minutes"
  // then also covers a platform that was down before the daemon started.
  metrics.apiLastSuccess.set({ key }, now() / 1000);
  return subscribe(events, {
    request: ({ operation, status, code, durationMs }) => {
      const op = operationLabel(operation);
      metrics.apiRequestDuration.observe(
        { operation: op, status: statusLabel(status) },
        Math.max(0, durationMs) / 1000,
      );
      if (code !== undefined) {
        metrics.apiErrors.inc({ key, operation: op, code: codeLabel(code) });
        if (UNREACHABLE.has(code)) metrics.apiLastFailure.set({ key }, now() / 1000);
      } else if (status !== null && status >= 200 && status < 300) metrics.apiLastSuccess.set({ key }, now() / 1000);
    },
    retry: ({ operation, code }) =>
      metrics.apiRetries.inc({ operation: operationLabel(operation), code: codeLabel(code) }),
    rateLimited: ({ operation }) => metrics.apiRateLimited.inc({ operation: operationLabel(operation) }),
  });
}

/** One debug line per API attempt, a warning per retry and per 429. */
export function bindClientLog(events: ClientEventSource, logger: TelemetryLogger): () => void {
  return subscribe(events, {
    request: ({ operation, method, status, code, durationMs, attempt, requestId }) =>
      logger.debug({ operation, method, status, code, durationMs, attempt, requestId }, 'api request'),
    retry: ({ operation, code, attempt, delayMs }) =>
      logger.warn({ operation, code, attempt, delayMs }, 'api request retried'),
    rateLimited: ({ operation, resetSeconds }) => logger.warn({ operation, resetSeconds }, 'api rate limited (429)'),
  });
}
