// Daemon events become the right series: windows fall back to 0, absent fields lose their
// series, reloads unpark, labels stay bounded.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import { Registry, bindClientEvents, bindDaemonEvents, createMetrics } from '../../src/telemetry/index.js';
import { parseScrape, sampleValue } from './exposition-parse.js';

function setup(now = () => 1_795_420_800_000) {
  const registry = new Registry();
  const metrics = createMetrics(registry, { defaultMetrics: false, startedAt: 1_795_420_000_000 });
  const emitter = new DaemonEmitter();
  const unbind = bindDaemonEvents(emitter, metrics, { now });
  const read = async () => parseScrape(await registry.metrics());
  return { emitter, read, unbind };
}

describe('bindDaemonEvents', () => {
  it('sets a window to 1 while active and back to 0 when it ends', async () => {
    const { emitter, read } = setup();
    emitter.emit('window', { pipe: 'orders-events', windows: ['business-hours', 'black-friday'] });
    emitter.emit('window', { pipe: 'orders-events', windows: ['black-friday'] });
    const s = await read();
    expect(sampleValue(s, 'pipescaler_window_active', { pipe: 'orders-events', window: 'business-hours' })).toBe(0);
    expect(sampleValue(s, 'pipescaler_window_active', { pipe: 'orders-events', window: 'black-friday' })).toBe(1);
  });

  it('counts window verdicts per pipe and observes the lateness of met and late ones', async () => {
    const { emitter, read } = setup();
    const start = { boundary: 0, windows: ['peak'], target: { replicas: 4 }, deadline: 600_000 };
    emitter.emit('verdict', { pipe: 'a', ...start, verdict: 'met', at: 0, lateMs: 0, confirmedAt: 0 });
    emitter.emit('verdict', { pipe: 'b', ...start, verdict: 'late', at: 0, lateMs: 150_000, confirmedAt: 150_000 });
    emitter.emit('verdict', { pipe: 'c', ...start, verdict: 'missed', at: 0, reason: 'not_confirmed' });
    emitter.emit('verdict', { pipe: 'd', ...start, verdict: 'excluded', at: 0, reason: 'paused' });
    const s = await read();
    for (const [pipe, verdict] of [
      ['a', 'met'],
      ['b', 'late'],
      ['c', 'missed'],
      ['d', 'excluded'],
    ] as const)
      expect(sampleValue(s, 'pipescaler_window_verdicts_total', { pipe, verdict })).toBe(1);
    // met (0 s) and late (150 s) only
    expect(sampleValue(s, 'pipescaler_window_lateness_seconds_count')).toBe(2);
    expect(sampleValue(s, 'pipescaler_window_lateness_seconds_sum')).toBe(150);
    expect(sampleValue(s, 'pipescaler_window_lateness_seconds_bucket', { le: '0' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_window_lateness_seconds_bucket', { le: '120' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_window_lateness_seconds_bucket', { le: '180' })).toBe(2);
  });

  it("starts every configured pipe's verdicts at 0", async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { defaultMetrics: false });
    bindDaemonEvents(new DaemonEmitter(), metrics, { pipes: () => ['orders-events'] });
    const s = parseScrape(await registry.metrics());
    for (const verdict of ['met', 'late', 'missed', 'excluded'])
      expect(sampleValue(s, 'pipescaler_window_verdicts_total', { pipe: 'orders-events', verdict })).toBe(0);
  });

  it('keeps desired and applied per field, dropping fields no longer reported', async () => {
    const { emitter, read } = setup();
    emitter.emit('applied', { pipe: 'orders-events', values: { replicas: 2, replicaMemoryGb: 0.5 } });
    emitter.emit('applied', { pipe: 'orders-events', values: { replicas: 3 } });
    emitter.emit('desired', { pipe: 'orders-events', values: { replicas: 6 } });
    const s = await read();
    expect(sampleValue(s, 'pipescaler_applied_scaling', { pipe: 'orders-events', field: 'replicas' })).toBe(3);
    expect(sampleValue(s, 'pipescaler_applied_scaling', { field: 'replicaMemoryGb' })).toBeUndefined();
    expect(sampleValue(s, 'pipescaler_desired_scaling', { pipe: 'orders-events', field: 'replicas' })).toBe(6);
  });

  it('withdraws the desired scaling of a skipped pipe', async () => {
    const { emitter, read } = setup();
    emitter.emit('desired', { pipe: 'orders-events', values: { replicas: 6 } });
    emitter.emit('applied', { pipe: 'orders-events', values: { replicas: 2 } });
    emitter.emit('decision', {
      pipe: 'orders-events',
      direction: 'none',
      result: 'skipped',
      reason: 'paused',
      windows: [],
      before: { replicas: 2 },
      after: { replicas: 2 },
      reasons: [{ code: 'paused', message: 'paused by operator' }],
    });
    const s = await read();
    expect(sampleValue(s, 'pipescaler_desired_scaling', { pipe: 'orders-events' })).toBeUndefined();
    expect(sampleValue(s, 'pipescaler_applied_scaling', { pipe: 'orders-events' })).toBe(2);
    expect(sampleValue(s, 'pipescaler_decisions_total', { result: 'skipped', reason: 'paused' })).toBe(1);
  });

  it('parks a pipe until a successful reload, not a failed one', async () => {
    const { emitter, read } = setup();
    emitter.emit('parked', { pipe: 'payments-msk', code: 'API_UNAUTHORIZED', message: '401' });
    emitter.emit('config:reload', { result: 'failure', errors: ['bad'] });
    expect(sampleValue(await read(), 'pipescaler_parked', { pipe: 'payments-msk' })).toBe(1);
    expect(sampleValue(await read(), 'pipescaler_config_last_reload_success')).toBe(0);
    emitter.emit('config:reload', { result: 'success' });
    const s = await read();
    expect(sampleValue(s, 'pipescaler_parked', { pipe: 'payments-msk' })).toBe(0);
    expect(sampleValue(s, 'pipescaler_config_last_reload_success')).toBe(1);
    expect(sampleValue(s, 'pipescaler_config_reloads_total', { result: 'failure' })).toBe(1);
  });

  it('records evaluation time, tick lag and the last evaluation from the given clock', async () => {
    const { emitter, read } = setup();
    expect(sampleValue(await read(), 'pipescaler_last_evaluation_timestamp_seconds')).toBe(1_795_420_000);
    emitter.emit('evaluation', {
      pipe: 'orders-events',
      policy: 'p',
      tickAt: 0,
      durationMs: 7,
      lagMs: 1500,
      decision: {
        action: 'none',
        direction: 'none',
        windows: [],
        recommendation: {},
        desired: {},
        changes: {},
        reasons: [],
      },
    });
    const s = await read();
    expect(sampleValue(s, 'pipescaler_last_evaluation_timestamp_seconds')).toBe(1_795_420_800);
    expect(sampleValue(s, 'pipescaler_evaluations_total', { pipe: 'orders-events', action: 'none' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_tick_lag_seconds_sum')).toBe(1.5);
    expect(sampleValue(s, 'pipescaler_evaluation_duration_seconds_sum')).toBe(0.007);
  });

  it('never turns free text into a label value', async () => {
    const { emitter, read } = setup();
    emitter.emit('decision', {
      pipe: 'Orders Events!',
      direction: 'up',
      result: 'failed',
      reason: 'ECONNREFUSED 10.0.0.1:443',
      windows: [],
      before: {},
      after: {},
      reasons: [],
    });
    emitter.emit('window', { pipe: 'orders-events', windows: ['https://example.com/x'] });
    const s = await read();
    expect(sampleValue(s, 'pipescaler_decisions_total', { pipe: 'other', reason: 'other', result: 'failed' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_window_active', { window: 'other' })).toBe(1);
  });

  it('drops the gauges of a pipe a reload removed, keeping the others', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { defaultMetrics: false });
    const emitter = new DaemonEmitter();
    let pipes = ['orders-events', 'nightly-s3'];
    bindDaemonEvents(emitter, metrics, { pipes: () => pipes });
    for (const pipe of pipes) {
      emitter.emit('desired', { pipe, values: { replicas: 6 } });
      emitter.emit('applied', { pipe, values: { replicas: 2 } });
      emitter.emit('window', { pipe, windows: ['business-hours'] });
      emitter.emit('paused', { pipe, paused: false });
    }
    emitter.emit('parked', { pipe: 'nightly-s3', code: 'API_FORBIDDEN', message: '403' });
    emitter.emit('drift', { pipe: 'nightly-s3', expected: {}, actual: {} });
    pipes = ['orders-events'];
    emitter.emit('config:reload', { result: 'success' });
    const text = await registry.metrics();
    const gauges = text.split('\n').filter((l) => l.includes('nightly-s3') && !/^pipescaler_\w+_total\{/.test(l));
    expect(gauges).toEqual([]);
    // counters keep their history (under per-pipe detail, the default of a bare bindDaemonEvents)
    expect(text).toContain('pipescaler_drift_total{policy="other",pipe="nightly-s3"} 1');
    expect(text).toContain('pipescaler_desired_scaling{pipe="orders-events",field="replicas"} 6');
    expect(text).toContain('pipescaler_window_active{policy="other",pipe="orders-events",window="business-hours"} 1');
  });

  it('counts overrides, what onDrift made of a change made by hand and freezes, each from 0 for every pipe of the config', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { defaultMetrics: false });
    const emitter = new DaemonEmitter();
    bindDaemonEvents(emitter, metrics, { pipes: () => ['orders-events', 'nightly-s3'] });
    let s = parseScrape(await registry.metrics());
    for (const pipe of ['orders-events', 'nightly-s3']) {
      expect(sampleValue(s, 'pipescaler_overrides_total', { pipe, action: 'set', source: 'operator' })).toBe(0);
      expect(sampleValue(s, 'pipescaler_drift_actions_total', { pipe, action: 'revert' })).toBe(0);
      expect(sampleValue(s, 'pipescaler_freeze_held_total', { pipe })).toBe(0);
    }
    const o = { id: 'a', values: { replicas: 8 }, until: 1_795_424_400_000, reason: 'incident' };
    emitter.emit('override', { pipe: 'orders-events', action: 'set', source: 'operator', ...o });
    emitter.emit('override', { pipe: 'orders-events', action: 'cancelled', source: 'operator', ...o });
    emitter.emit('drift', {
      pipe: 'nightly-s3',
      expected: { concurrency: 2 },
      actual: { concurrency: 4 },
      onDrift: 'adoptAsFloor',
    });
    emitter.emit('override', { pipe: 'nightly-s3', action: 'set', source: 'manual', ...o, values: { concurrency: 4 } });
    emitter.emit('freeze', {
      pipe: 'orders-events',
      action: 'held',
      freezes: ['release'],
      held: { replicas: 2 },
      until: o.until,
    });
    emitter.emit('freeze', { pipe: 'orders-events', action: 'released', freezes: ['release'] });
    s = parseScrape(await registry.metrics());
    expect(
      sampleValue(s, 'pipescaler_overrides_total', { pipe: 'orders-events', action: 'set', source: 'operator' }),
    ).toBe(1);
    expect(sampleValue(s, 'pipescaler_overrides_total', { pipe: 'orders-events', action: 'cancelled' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_overrides_total', { pipe: 'nightly-s3', action: 'set', source: 'manual' })).toBe(
      1,
    );
    expect(sampleValue(s, 'pipescaler_drift_actions_total', { pipe: 'nightly-s3', action: 'adoptAsFloor' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_drift_actions_total', { pipe: 'nightly-s3', action: 'revert' })).toBe(0);
    // a freeze counts when it begins holding, not when it lets go
    expect(sampleValue(s, 'pipescaler_freeze_held_total', { pipe: 'orders-events' })).toBe(1);
  });

  it('keeps a reconcile period per key in force: a key a reload took out of its pool loses its series', async () => {
    const { registry, metrics } = (() => {
      const r = new Registry();
      return { registry: r, metrics: createMetrics(r, { defaultMetrics: false }) };
    })();
    const emitter = new DaemonEmitter();
    let keys = ['batch-1', 'batch-2'];
    bindDaemonEvents(emitter, metrics, { keys: () => keys });
    const plan = (key: string, reconcileMs: number) =>
      emitter.emit('budget:plan', { key, pipes: 1, reconcileMs, stretched: true, scaleDownBoundMs: 1, text: '' });
    plan('batch-1', 2_400_000);
    plan('batch-2', 2_400_000);
    // the reload announces the plans of its keys, then succeeds
    keys = ['batch-1'];
    plan('batch-1', 4_800_000);
    emitter.emit('config:reload', { result: 'success' });
    const s = parseScrape(await registry.metrics());
    expect(sampleValue(s, 'pipescaler_reconcile_period_seconds', { key: 'batch-1' })).toBe(4_800);
    expect(sampleValue(s, 'pipescaler_reconcile_period_seconds', { key: 'batch-2' })).toBeUndefined();
  });

  it("counts a retry of the apply queue as an API retry of its operation (the daemon's clients never retry)", async () => {
    const { emitter, read } = setup();
    emitter.emit('apply:retry', {
      pipe: 'orders-events',
      code: 'API_SERVER_ERROR',
      attempt: 1,
      delayMs: 1_000,
      operation: 'scalePipe',
    });
    emitter.emit('apply:retry', { pipe: 'orders-events', code: 'API_TIMEOUT', attempt: 2, delayMs: 2_000 });
    const s = await read();
    expect(sampleValue(s, 'pipescaler_apply_retries_total', { pipe: 'orders-events', code: 'API_SERVER_ERROR' })).toBe(
      1,
    );
    expect(sampleValue(s, 'pipescaler_api_retries_total', { operation: 'scalePipe', code: 'API_SERVER_ERROR' })).toBe(
      1,
    );
    expect(sampleValue(s, 'pipescaler_api_retries_total', { code: 'API_TIMEOUT' })).toBeUndefined();
  });

  it('stops counting once unbound', async () => {
    const { emitter, read, unbind } = setup();
    unbind();
    emitter.emit('drift', { pipe: 'orders-events', expected: {}, actual: {} });
    expect(sampleValue(await read(), 'pipescaler_drift_total')).toBeUndefined();
  });
});

describe('bindClientEvents', () => {
  it('observes every attempt by operation and status, and counts errors, retries and 429s', async () => {
    const registry = new Registry();
    const metrics = createMetrics(registry, { defaultMetrics: false });
    const events = new EventEmitter();
    bindClientEvents(events, metrics);
    events.emit('request', {
      operation: 'scalePipe',
      method: 'PATCH',
      status: null,
      code: 'API_TIMEOUT',
      durationMs: 30_000,
      attempt: 1,
    });
    events.emit('request', {
      operation: 'scalePipe',
      method: 'PATCH',
      status: 429,
      code: 'API_RATE_LIMITED',
      durationMs: 5,
      attempt: 2,
    });
    events.emit('retry', { operation: 'scalePipe', code: 'API_TIMEOUT', attempt: 1, delayMs: 250 });
    events.emit('rateLimited', { operation: 'scalePipe', resetSeconds: 3.42 });
    const s = parseScrape(await registry.metrics());
    // A 30 s timeout still lands in a finite bucket: the buckets reach the client's timeout.
    expect(
      sampleValue(s, 'pipescaler_api_request_duration_seconds_bucket', {
        le: '30',
        operation: 'scalePipe',
        status: 'none',
      }),
    ).toBe(1);
    expect(sampleValue(s, 'pipescaler_api_errors_total', { operation: 'scalePipe', code: 'API_TIMEOUT' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_api_errors_total', { operation: 'scalePipe', code: 'API_RATE_LIMITED' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_api_retries_total', { operation: 'scalePipe', code: 'API_TIMEOUT' })).toBe(1);
    expect(sampleValue(s, 'pipescaler_api_rate_limited_total', { operation: 'scalePipe' })).toBe(1);
  });
});
