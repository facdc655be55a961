// A representative run fed through the bindings: ticks and evaluations, decisions of every result,
// windows opening and closing, a pause, a parked pipe, retries, 429s, drift (reverted and held),
// overrides, a freeze and both kinds of reload, plus the API client's attempts (2xx, 4xx, 5xx, timeouts). `marker` goes wherever a
// careless implementation could leak it (error messages, reasons, config errors).
import { EventEmitter } from 'node:events';
import type { DaemonEmitter } from '../../src/daemon/model/events.js';
import type { Decision } from '../../src/policy/types.js';

const decision = (over: Partial<Decision> = {}): Decision => ({
  action: 'change',
  direction: 'up',
  windows: ['business-hours'],
  recommendation: { replicas: 6 },
  desired: { replicas: 6 },
  changes: { replicas: 6 },
  reasons: [{ code: 'window', field: 'replicas', message: 'business-hours (Europe/Berlin) sets replicas 6' }],
  ...over,
});

export function emitDaemonRun(
  emitter: DaemonEmitter,
  marker = 'no-marker',
  t0 = Date.UTC(2026, 10, 23, 8, 0, 0),
): void {
  emitter.emit('config:reload', { result: 'success' });
  emitter.emit('redis:status', { ready: true });
  emitter.emit('api:contact', { at: t0 });
  emitter.emit('tick', { at: t0, pipes: 3 });
  for (const [pipe, lagMs] of [
    ['orders-events', 120],
    ['nightly-s3', 340],
    ['users-cdc', 15],
  ] as const) {
    emitter.emit('evaluation', {
      pipe,
      policy: 'weekday-business-hours',
      tickAt: t0,
      durationMs: 4,
      lagMs,
      decision: decision(),
    });
  }
  emitter.emit('window', { pipe: 'orders-events', windows: ['business-hours'] });
  emitter.emit('desired', {
    pipe: 'orders-events',
    values: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
  });
  emitter.emit('applied', {
    pipe: 'orders-events',
    values: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
  });
  emitter.emit('desired', { pipe: 'nightly-s3', values: { concurrency: 4 } });
  emitter.emit('applied', { pipe: 'nightly-s3', values: { concurrency: 2 } });
  emitter.emit('apply:start', { pipe: 'orders-events', key: 'default', queueWaitMs: 250 });
  emitter.emit('apply:retry', { pipe: 'orders-events', code: 'API_SERVER_ERROR', attempt: 1, delayMs: 500 });
  emitter.emit('rate-limited', { key: 'default', resetMs: 3420 });
  emitter.emit('decision', {
    pipe: 'orders-events',
    direction: 'up',
    result: 'applied',
    reason: 'window',
    windows: ['business-hours'],
    before: { replicas: 2 },
    after: { replicas: 6 },
    reasons: decision().reasons,
    requestId: '7f1c9a52-5b1e-4c7e-9d0a-2f1b3c4d5e6f',
  });
  emitter.emit('applied', {
    pipe: 'orders-events',
    values: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
  });
  emitter.emit('decision', {
    pipe: 'nightly-s3',
    direction: 'up',
    result: 'failed',
    reason: 'API_BAD_REQUEST',
    windows: [],
    before: { concurrency: 2 },
    after: { concurrency: 4 },
    reasons: [{ code: 'baseline', message: `platform said: BAD_REQUEST: rejected key ${marker}` }],
    requestId: '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a',
  });
  emitter.emit('decision', {
    pipe: 'users-cdc',
    direction: 'none',
    result: 'skipped',
    reason: 'kind',
    windows: [],
    before: {},
    after: {},
    reasons: [{ code: 'kind', message: 'database pipes take no scaling' }],
  });
  // A reason that is not a known code (free text with the secret) must not become a label value.
  emitter.emit('decision', {
    pipe: 'orders-events',
    direction: 'down',
    result: 'dry_run',
    reason: `failed with ${marker}`,
    windows: [],
    before: { replicas: 6 },
    after: { replicas: 2 },
    reasons: [{ code: 'baseline', message: 'outside every window' }],
  });
  emitter.emit('drift', { pipe: 'orders-events', expected: { replicas: 6 }, actual: { replicas: 3 } });
  // an operator's override, one kept by hand (onDrift: hold), and a freeze holding a scale-down
  const override = { id: 'o-1', values: { replicas: 8 }, until: t0 + 7_200_000, reason: `incident; ${marker}` };
  emitter.emit('override', { pipe: 'orders-events', action: 'set', source: 'operator', ...override });
  emitter.emit('override', { pipe: 'orders-events', action: 'expired', source: 'operator', ...override });
  emitter.emit('drift', { pipe: 'users-cdc', expected: { replicas: 2 }, actual: { replicas: 4 }, onDrift: 'hold' });
  emitter.emit('override', {
    pipe: 'users-cdc',
    action: 'set',
    source: 'manual',
    id: 'm-1',
    values: { replicas: 4 },
    until: t0 + 3_600_000,
    reason: 'manual',
  });
  emitter.emit('freeze', {
    pipe: 'orders-events',
    action: 'held',
    freezes: ['release'],
    held: { replicas: 2 },
    until: t0 + 3_600_000,
  });
  emitter.emit('freeze', { pipe: 'orders-events', action: 'released', freezes: ['release'] });
  // a window start's verdicts: met, late by 2 minutes, missed
  const start = { boundary: t0, windows: ['business-hours'], target: { replicas: 6 }, deadline: t0 + 600_000 };
  emitter.emit('verdict', { pipe: 'orders-events', ...start, verdict: 'met', at: t0, lateMs: 0, confirmedAt: t0 - 1 });
  emitter.emit('verdict', {
    pipe: 'users-cdc',
    ...start,
    verdict: 'late',
    at: t0 + 130_000,
    lateMs: 120_000,
    confirmedAt: t0 + 120_000,
  });
  emitter.emit('verdict', {
    pipe: 'nightly-s3',
    ...start,
    verdict: 'missed',
    at: t0 + 600_000,
    reason: 'not_confirmed',
  });
  // a change confirmed at target 95 s after its send; another not in force within its limit
  emitter.emit('confirmed', {
    pipe: 'orders-events',
    kind: 'stream',
    values: { replicas: 6 },
    sentAt: t0,
    confirmedAt: t0 + 95_000,
    actuationMs: 95_000,
  });
  emitter.emit('unconfirmed:seen', { pipe: 'orders-events', unconfirmed: false });
  emitter.emit('unconfirmed', {
    pipe: 'clickstream',
    kind: 'stream',
    unconfirmed: true,
    reason: 'limit',
    target: { replicas: 4 },
    sentAt: t0,
    at: t0 + 600_000,
    resends: 0,
  });
  emitter.emit('paused', { pipe: 'nightly-s3', paused: true, reason: `operator; ${marker}`, until: t0 + 3_600_000 });
  emitter.emit('parked', {
    pipe: 'payments-msk',
    code: 'API_UNAUTHORIZED',
    message: `401 for Authorization: Basic ${marker}`,
  });
  emitter.emit('api:key', { key: 'default', refused: true, status: 401, code: 'API_UNAUTHORIZED' });
  emitter.emit('config:reload', {
    result: 'failure',
    errors: [`api.keySecret (line 18): "${marker}" is written literally`],
  });
  emitter.emit('window', { pipe: 'orders-events', windows: [] });
  emitter.emit('tick', { at: t0 + 30_000, pipes: 3 });
  emitter.emit('evaluation', {
    pipe: 'orders-events',
    policy: 'weekday-business-hours',
    tickAt: t0 + 30_000,
    durationMs: 3,
    lagMs: 90,
    decision: decision({ action: 'none', direction: 'none', changes: {} }),
  });
  emitter.emit('api:contact', { at: t0 + 30_000 });
}

/** The API client's events, as src/api/client.ts emits them on `client.events`. */
export function emitClientRun(events: EventEmitter): void {
  events.emit('request', {
    operation: 'scalePipe',
    method: 'PATCH',
    status: 200,
    durationMs: 42,
    attempt: 1,
    requestId: '7f1c9a52-5b1e-4c7e-9d0a-2f1b3c4d5e6f',
  });
  events.emit('request', {
    operation: 'scalePipe',
    method: 'PATCH',
    status: 500,
    code: 'API_SERVER_ERROR',
    durationMs: 85,
    attempt: 1,
  });
  events.emit('retry', { operation: 'scalePipe', code: 'API_SERVER_ERROR', attempt: 1, delayMs: 500 });
  events.emit('request', {
    operation: 'scalePipe',
    method: 'PATCH',
    status: 429,
    code: 'API_RATE_LIMITED',
    durationMs: 12,
    attempt: 2,
  });
  events.emit('rateLimited', { operation: 'scalePipe', resetSeconds: 3.42 });
  events.emit('request', {
    operation: 'scalePipe',
    method: 'PATCH',
    status: null,
    code: 'API_TIMEOUT',
    durationMs: 30_000,
    attempt: 3,
  });
  events.emit('request', {
    operation: 'scalePipe',
    method: 'PATCH',
    status: 400,
    code: 'API_BAD_REQUEST',
    durationMs: 30,
    attempt: 1,
  });
  events.emit('request', { operation: 'listServices', method: 'GET', status: 200, durationMs: 18, attempt: 1 });
  // An operation name that is not in ENDPOINTS (a URL) must not become a label value.
  events.emit('request', {
    operation: '/v1/organizations/5d3f8a2e/services',
    method: 'GET',
    status: 200,
    durationMs: 9,
    attempt: 1,
  });
}
