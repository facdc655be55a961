// An outage of Redis is said again while it lasts: after 1 s, 2 s, 4 s... and every 30 s at most.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DaemonEmitter } from '../../../src/daemon/index.js';
import { OUTAGE_REPEAT_CAP_MS, outageRepeatMs, RedisOutage } from '../../../src/daemon/store/redis-outage.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('outageRepeatMs', () => {
  it('doubles from a second and stops at 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 50, 1e9].map(outageRepeatMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000,
    ]);
    expect(outageRepeatMs(0)).toBe(1_000);
    expect(OUTAGE_REPEAT_CAP_MS).toBe(30_000);
  });
});

describe('RedisOutage', () => {
  it('says the outage again with back-off while it lasts, and nothing once Redis is back', () => {
    vi.useFakeTimers({ now: 0 });
    const emitter = new DaemonEmitter();
    const said: { where: string; downForMs: number }[] = [];
    emitter.on('redis:waiting', (w) => said.push(w));
    const outage = new RedisOutage(emitter, '127.0.0.1:1 db 3', Date.now);
    outage.status(false);
    outage.status(false); // a repeat of the state starts nothing new
    vi.advanceTimersByTime(67_000);
    expect(said.map((w) => w.downForMs)).toEqual([1_000, 3_000, 7_000, 15_000, 31_000, 61_000]);
    expect(said.every((w) => w.where === '127.0.0.1:1 db 3')).toBe(true);
    outage.status(true);
    vi.advanceTimersByTime(120_000);
    expect(said).toHaveLength(6);
    // a new outage starts over from a second
    outage.status(false);
    vi.advanceTimersByTime(1_000);
    expect(said.at(-1)).toEqual({ where: '127.0.0.1:1 db 3', downForMs: 1_000 });
    outage.stop();
    vi.advanceTimersByTime(120_000);
    expect(said).toHaveLength(7);
  });
});
