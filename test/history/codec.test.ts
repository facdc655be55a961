// The stored form of a history entry: round trip, identity (what collapses), control characters.
import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, identityOf, SEP } from '../../src/history/codec.js';
import type { Outcome } from '../../src/history/index.js';

const applied: Outcome = {
  pipe: 'orders-events',
  outcome: 'applied',
  at: Date.parse('2026-11-23T08:00:00Z'),
  reason: 'window',
  before: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
  after: { replicas: 4, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
  target: { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
  windows: ['business-hours'],
  key: 'default',
  requestId: '6f1c2a4e-0d4b-4c8e-9f3a-2b7d1e5c9a01',
};

describe('history codec', () => {
  it('round-trips every field, compactly', () => {
    const s = encodeEntry(applied);
    expect(s.length).toBeLessThan(140);
    expect(decodeEntry('orders-events', s)).toEqual({
      pipe: 'orders-events',
      outcome: 'applied',
      reason: 'window',
      first: applied.at,
      last: applied.at,
      count: 1,
      before: applied.before,
      after: applied.after,
      target: applied.target,
      windows: ['business-hours'],
      key: 'default',
      requestId: applied.requestId,
    });
  });

  it('keeps half units (replicaMemoryGb 0.5) and leaves absent parts absent', () => {
    const o: Outcome = { pipe: 'p', outcome: 'skipped', at: 1, reason: 'paused', after: { replicaMemoryGb: 0.5 } };
    expect(decodeEntry('p', encodeEntry(o))).toEqual({
      pipe: 'p',
      outcome: 'skipped',
      reason: 'paused',
      first: 1,
      last: 1,
      count: 1,
      after: { replicaMemoryGb: 0.5 },
    });
  });

  it('an identity ignores the time and the requestId, but not the values', () => {
    expect(identityOf({ ...applied, at: 5, requestId: 'x' })).toBe(identityOf(applied));
    expect(identityOf({ ...applied, after: { replicas: 5 } })).not.toBe(identityOf(applied));
  });

  it('control characters in free text cannot break the separator or a terminal', () => {
    const s = encodeEntry({ ...applied, outcome: 'paused', message: `maintenance${SEP}\x1b[31mred\n` });
    const e = decodeEntry('orders-events', s);
    expect(e?.message).toBe('maintenance red '); // the escape sequence whole, not only its ESC
    expect(e?.requestId).toBe(applied.requestId);
  });
});
