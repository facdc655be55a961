// One audit line per decision, with what an operator asks afterwards: which pipe, which window,
// from what to what, why, and the platform's requestId.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/model/events.js';
import { bindAuditLog, createLogger } from '../../src/telemetry/index.js';
import { emitDaemonRun } from './run-events.js';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const emitter = new DaemonEmitter();
  const unbind = bindAuditLog(emitter, createLogger({ level, pretty: false, destination }));
  return { lines, emitter, unbind };
}

describe('bindAuditLog', () => {
  it('writes one audit line per decision event', () => {
    const { lines, emitter } = capture();
    emitDaemonRun(emitter);
    const audit = lines.filter((l) => l.audit === true && l.verdict === undefined);
    expect(audit.map((l) => [l.pipe, l.msg])).toEqual([
      ['orders-events', 'scaling applied'],
      ['nightly-s3', 'scaling failed'],
      ['users-cdc', 'decision skipped'],
      ['orders-events', 'scaling not applied (dry run)'],
    ]);
  });

  it('gives pipe, windows, before and after, reasons and requestId', () => {
    const { lines, emitter } = capture();
    emitDaemonRun(emitter);
    const applied = lines.find((l) => l.msg === 'scaling applied');
    expect(applied).toMatchObject({
      level: 30,
      audit: true,
      pipe: 'orders-events',
      direction: 'up',
      result: 'applied',
      reason: 'window',
      windows: ['business-hours'],
      before: { replicas: 2 },
      after: { replicas: 6 },
      reasons: ['window (replicas): business-hours (Europe/Berlin) sets replicas 6'],
      requestId: '7f1c9a52-5b1e-4c7e-9d0a-2f1b3c4d5e6f',
    });
    expect(lines.find((l) => l.msg === 'scaling failed')).toMatchObject({
      level: 50,
      result: 'failed',
      reason: 'API_BAD_REQUEST',
    });
  });

  it("names a change's Idempotency-Key, and writes one line for a change of unknown outcome found in force", () => {
    const { lines, emitter } = capture();
    const key = '0b9c5e1e-4a7d-4f1e-9a52-7c1f3d2b8e60';
    const sentAt = Date.UTC(2026, 10, 23, 8, 0, 0);
    emitter.emit('change:landed', {
      pipe: 'orders-events',
      sent: { replicas: 6 },
      sentAt,
      at: sentAt + 12_000,
      idempotencyKey: key,
    });
    emitter.emit('decision', {
      pipe: 'orders-events',
      direction: 'up',
      result: 'applied',
      reason: 'window',
      windows: [],
      before: { replicas: 2 },
      after: { replicas: 6 },
      reasons: [],
      idempotencyKey: key,
      outcomeReported: 'landed_late',
    });
    expect(lines).toMatchObject([
      {
        level: 40,
        audit: true,
        pipe: 'orders-events',
        result: 'landed_late',
        after: { replicas: 6 },
        sentAt: '2026-11-23T08:00:00.000Z',
        lateMs: 12_000,
        idempotencyKey: key,
        msg: 'scaling landed late',
      },
      { audit: true, result: 'applied', idempotencyKey: key, outcomeReported: 'landed_late', msg: 'scaling applied' },
    ]);
  });

  it("writes one outcome_unknown line, by the change's key, for a change a read settled without knowing whether it landed", () => {
    const { lines, emitter } = capture();
    const key = '0b9c5e1e-4a7d-4f1e-9a52-7c1f3d2b8e61';
    const sentAt = Date.UTC(2026, 10, 23, 8, 0, 0);
    emitter.emit('change:unknown', {
      pipe: 'orders-events',
      sent: { replicas: 6 },
      sentAt,
      at: sentAt + 12_000,
      idempotencyKey: key,
    });
    expect(lines).toMatchObject([
      {
        level: 40,
        audit: true,
        pipe: 'orders-events',
        result: 'outcome_unknown',
        after: { replicas: 6 },
        sentAt: '2026-11-23T08:00:00.000Z',
        afterMs: 12_000,
        idempotencyKey: key,
        msg: 'scaling outcome unknown: its answer was lost, and a read cannot tell whether it landed',
      },
    ]);
  });

  it('tells the operator about parking, failed reloads, 429 pauses, drift and pauses', () => {
    const { lines, emitter } = capture();
    emitDaemonRun(emitter);
    const msgs = lines.map((l) => l.msg as string);
    expect(msgs).toContain('pipe parked: its API key keeps failing auth; fix the key and reload');
    expect(msgs).toContain('config reload failed; the previous config stays in force');
    expect(msgs).toContain('API key rate limited: its apply queue pauses until the window resets');
    expect(msgs).toContain('pipe scaling drifted from what was applied');
    expect(msgs).toContain('pipe paused');
    expect(msgs).toContain('apply retried');
    // Ticks and evaluations are debug chatter, not in an info log.
    expect(msgs).not.toContain('tick');
    expect(msgs).not.toContain('pipe evaluated');
  });

  it('writes one audit line per window verdict: a warning when late or missed', () => {
    const { lines, emitter } = capture();
    emitDaemonRun(emitter);
    const verdicts = lines.filter((l) => l.audit === true && l.verdict !== undefined);
    expect(verdicts.map((l) => [l.pipe, l.verdict, l.level, l.lateMs])).toEqual([
      ['orders-events', 'met', 30, 0],
      ['users-cdc', 'late', 40, 120_000],
      ['nightly-s3', 'missed', 40, undefined],
    ]);
    expect(verdicts[1]).toMatchObject({
      boundary: '2026-11-23T08:00:00.000Z',
      windows: ['business-hours'],
      target: { replicas: 6 },
      confirmedAt: '2026-11-23T08:02:00.000Z',
      msg: 'window verdict late by 2m: business-hours at 2026-11-23T08:00:00.000Z wanted replicas 6, confirmed 2026-11-23T08:02:00.000Z',
    });
    expect(verdicts[2]).toMatchObject({ reason: 'not_confirmed' });
  });

  it('logs a Redis status change once, not every repeat', () => {
    const { lines, emitter } = capture();
    emitter.emit('redis:status', { ready: true });
    emitter.emit('redis:status', { ready: false });
    emitter.emit('redis:status', { ready: false });
    emitter.emit('redis:status', { ready: true });
    expect(lines.map((l) => l.msg)).toEqual([
      'redis connection ready',
      'redis connection lost; evaluations wait for it',
      'redis connection ready',
    ]);
  });

  it("names the daemon's Redis (address and db) in each line of an outage, and says it again while it lasts", () => {
    const { lines, emitter } = capture();
    emitter.emit('redis:status', { ready: false, where: '127.0.0.1:1 db 3' });
    emitter.emit('redis:waiting', { where: '127.0.0.1:1 db 3', downForMs: 3_000 });
    emitter.emit('redis:status', { ready: false, where: '127.0.0.1:1 db 3', cause: 'authentication refused' });
    emitter.emit('redis:status', { ready: true, where: '127.0.0.1:1 db 3' });
    expect(lines.map((l) => l.msg)).toEqual([
      'redis (127.0.0.1:1 db 3) not reachable at start; evaluations wait for it, and the daemon keeps trying',
      'redis (127.0.0.1:1 db 3) still not reachable after 3 s; evaluations wait for it, and the daemon keeps trying',
      'redis (127.0.0.1:1 db 3) connection failed: authentication refused',
      'redis (127.0.0.1:1 db 3) connection ready',
    ]);
    expect(lines[1]).toMatchObject({ redis: 'down', where: '127.0.0.1:1 db 3', downForMs: 3_000 });
  });

  it('does not call a connection never made lost', () => {
    const { lines, emitter } = capture();
    emitter.emit('redis:status', { ready: false });
    emitter.emit('redis:status', { ready: true });
    expect(lines.map((l) => l.msg)).toEqual([
      'redis not reachable at start; evaluations wait for it, and the daemon keeps trying',
      'redis connection ready',
    ]);
    expect(lines.map((l) => l.msg)).not.toContain('redis connection lost; evaluations wait for it');
  });

  it('stops writing once unbound', () => {
    const { lines, emitter, unbind } = capture();
    unbind();
    emitDaemonRun(emitter);
    expect(lines).toEqual([]);
  });
});
