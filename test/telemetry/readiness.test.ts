// The readiness report from the daemon's events, on a fake clock.
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import { createReadiness, failedChecks } from '../../src/telemetry/index.js';

describe('createReadiness', () => {
  it('needs Redis ready, a loaded config and an API answer within the reconcile interval (plus grace)', () => {
    let now = 1_000_000;
    const emitter = new DaemonEmitter();
    const r = createReadiness(emitter, { reconcileMs: 600_000, graceMs: 30_000, now: () => now });
    expect(failedChecks(r.report())).toEqual(['redis', 'config', 'api']);

    emitter.emit('redis:status', { ready: true });
    emitter.emit('config:reload', { result: 'success' });
    emitter.emit('api:contact', { at: now });
    expect(r.report()).toEqual({ redis: true, config: true, api: true });

    now += 630_000; // exactly the interval plus grace: still fresh
    expect(r.report().api).toBe(true);
    now += 1;
    expect(r.report().api).toBe(false);

    emitter.emit('api:contact', { at: now - 10 });
    emitter.emit('api:contact', { at: 0 }); // a late report of an older answer does not roll back
    expect(r.report().api).toBe(true);
  });

  it('keeps the config check after a failed reload (the previous config stays in force)', () => {
    const emitter = new DaemonEmitter();
    const r = createReadiness(emitter, { reconcileMs: 1, configLoaded: true, redisReady: true });
    emitter.emit('config:reload', { result: 'failure', errors: ['x'] });
    expect(r.report().config).toBe(true);
    emitter.emit('redis:status', { ready: false });
    expect(r.report().redis).toBe(false);
  });

  it('reads the reconcile interval again after a reload changes it', () => {
    let interval = 1_000;
    const emitter = new DaemonEmitter();
    const r = createReadiness(emitter, { reconcileMs: () => interval, graceMs: 0, now: () => 5_000 });
    emitter.emit('api:contact', { at: 3_000 });
    expect(r.report().api).toBe(false);
    interval = 10_000;
    expect(r.report().api).toBe(true);
  });

  it('with key checks on, needs an answer within their window instead (2 min 15 s at the default 1 min)', () => {
    let now = 1_000_000;
    let window: number | null = 135_000;
    const emitter = new DaemonEmitter();
    const r = createReadiness(emitter, { reconcileMs: 600_000, contactWindowMs: () => window, now: () => now });
    emitter.emit('api:contact', { at: now });
    now += 135_000;
    expect(r.report().api).toBe(true);
    now += 1;
    expect(r.report().api).toBe(false);
    window = null; // checks off: the reconcile interval and its grace again
    expect(r.report().api).toBe(true);
  });

  it('stops following the emitter once closed', () => {
    const emitter = new DaemonEmitter();
    const r = createReadiness(emitter, { reconcileMs: 1 });
    r.close();
    emitter.emit('redis:status', { ready: true });
    expect(r.report().redis).toBe(false);
    expect(emitter.listenerCount('redis:status')).toBe(0);
  });
});
