// API client events -> metrics (and debug/warn log lines). The client emits on `client.events`
// (src/api/client-events.ts); anything with that `on`/`off` shape fits, one client per API key.
import type { ApiClientEvents } from '../api/index.js';
import { codeLabel, operationLabel, statusLabel } from './labels.js';
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

/** Subscribe the API metrics to one client's events; returns the unsubscribe. */
export function bindClientEvents(events: ClientEventSource, metrics: Metrics): () => void {
  return subscribe(events, {
    request: ({ operation, status, code, durationMs }) => {
      const op = operationLabel(operation);
      metrics.apiRequestDuration.observe({ operation: op, status: statusLabel(status) }, Math.max(0, durationMs) / 1000);
      if (code !== undefined) metrics.apiErrors.inc({ operation: op, code: codeLabel(code) });
    },
    retry: ({ operation, code }) => metrics.apiRetries.inc({ operation: operationLabel(operation), code: codeLabel(code) }),
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
    rateLimited: ({ operation, resetSeconds }) =>
      logger.warn({ operation, resetSeconds }, 'api rate limited (429)'),
  });
}
