// A fleet's telemetry at steady state, through the daemon's own event path: every pipe evaluated,
// decided, applied, confirmed, judged at a window start, with a window driving it, a change made
// by hand, an override, a freeze, a retry, a metric and a forecast. Stream pipes (three scaling
// fields each, the most series a pipe can have) unless `kinds` says otherwise. Shared by the
// series-budget test and `npm run bench -- --only scrape`.
import type { DaemonEmitter } from '../../src/daemon/model/events.js';
import type { Decision } from '../../src/policy/types.js';

export interface FleetOptions {
  readonly pipes: number;
  readonly policies: number;
  readonly keys: number;
  /** Epoch ms of the tick. */
  readonly t0?: number;
}

export interface FleetPipe {
  readonly name: string;
  readonly policy: string;
  readonly key: string;
}

export function fleetPipes({ pipes, policies, keys }: FleetOptions): FleetPipe[] {
  return Array.from({ length: pipes }, (_, i) => ({
    name: `pipe-${String(i).padStart(5, '0')}`,
    policy: `policy-${i % policies}`,
    key: `key-${i % keys}`,
  }));
}

const values = (i: number) => ({ replicas: 1 + (i % 10), replicaCpuMillicores: 500, replicaMemoryGb: 2 });

/** One tick of every pipe's life; `round` varies the values so each tick changes something. */
export function emitFleetTick(
  emitter: DaemonEmitter,
  pipes: readonly FleetPipe[],
  round = 0,
  t0 = 1_795_420_800_000,
): void {
  const at = t0 + round * 30_000;
  emitter.emit('tick', { at, pipes: pipes.length });
  pipes.forEach(({ name: pipe, policy, key }, i) => {
    const v = values(i + round);
    const decision: Decision = {
      action: 'change',
      direction: 'up',
      windows: ['business-hours'],
      recommendation: v,
      desired: v,
      changes: v,
      reasons: [{ code: 'window', field: 'replicas', message: 'business-hours sets replicas' }],
      metric: {
        field: 'replicas',
        value: 120 + i,
        bounds: { min: 1, max: 10 },
        recommended: 4,
        forecast: { mode: 'scale', value: 130 + i, recommended: 4, raised: false },
      },
    };
    emitter.emit('evaluation', { pipe, policy, tickAt: at, durationMs: 2, lagMs: 40, decision });
    emitter.emit('window', { pipe, windows: ['business-hours'] });
    emitter.emit('desired', { pipe, values: v });
    emitter.emit('apply:start', { pipe, key, queueWaitMs: 20 });
    emitter.emit('apply:retry', { pipe, code: 'API_SERVER_ERROR', attempt: 1, delayMs: 500 });
    emitter.emit('decision', {
      pipe,
      direction: 'up',
      result: 'applied',
      reason: 'window',
      windows: ['business-hours'],
      before: {},
      after: v,
      reasons: decision.reasons,
    });
    emitter.emit('applied', { pipe, values: v });
    emitter.emit('confirmed', {
      pipe,
      kind: 'stream',
      values: v,
      sentAt: at,
      confirmedAt: at + 30_000,
      actuationMs: 30_000,
    });
    emitter.emit('unconfirmed:seen', { pipe, unconfirmed: false });
    emitter.emit('verdict', {
      pipe,
      boundary: at,
      windows: ['business-hours'],
      target: v,
      deadline: at + 600_000,
      verdict: 'met',
      at,
      lateMs: 0,
      confirmedAt: at,
    });
    emitter.emit('drift', { pipe, expected: v, actual: { replicas: 1 }, onDrift: 'revert' });
    emitter.emit('override', {
      pipe,
      action: 'set',
      source: 'operator',
      id: `o-${i}`,
      values: v,
      until: at + 3_600_000,
      reason: 'incident',
    });
    emitter.emit('freeze', { pipe, action: 'held', freezes: ['release'], held: v, until: at + 3_600_000 });
    emitter.emit('paused', { pipe, paused: false });
    emitter.emit('backoff', { pipe, backingOff: false, failures: 0 });
  });
}
