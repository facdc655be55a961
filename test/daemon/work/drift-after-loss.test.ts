// The daemon's own change is never drift, not even when Redis lost the record of it: a change
// answered 200 while Redis restarted empty (every key of the daemon's prefix gone, its queues' too,
// before the answer reached it) is gone from the rebuilt record, and a read that shows it in force
// later cannot be told from a change made by hand. Reads that soon after a loss adopt what they
// show as the platform's values (no drift, no `manual` override under onDrift: hold) and the policy
// goes on from there. One daemon against the embedded cloud over HTTP (the change in force 2
// minutes after it was sent), real Redis, one injected clock.
import { describe, expect, it } from 'vitest';
import { testRedis } from '../helpers.js';
import { lossFixture } from './state-loss-fixture.js';

const { redis, prefix } = testRedis();
const T0 = Date.parse('2026-11-23T08:00:00Z');
const MIN = 60_000;
const B = T0 + 5 * MIN; // a one-minute window opens: replicas 2 -> 4

describe("a change answered while Redis restarted empty, in force after the rebuild's first read", () => {
  it('is adopted, not drift: no drift event, no manual override, the policy goes on', async () => {
    const f = await lossFixture(redis, prefix('drift-after-loss'), {
      start: T0,
      boundary: B,
      windowMs: MIN,
      propagation: '2m',
      onDrift: { kind: 'hold', durationMs: 30 * MIN },
      reconcileMs: 3 * MIN,
    });
    try {
      for (let at = T0; at < B; at += 30_000) await f.tick(at);
      expect(f.replicas()).toBe(2);
      const drifts = f.on('drift');
      const changes = f.on('decision');

      // the window's change goes out at B; Redis restarts empty while its 200 is on its way
      f.loseStateAtAnswer(true);
      await f.tick(B);
      expect(changes.filter((d) => d.result === 'applied').map((d) => d.target?.replicas)).toEqual([4]);
      // the next tick finds the loss; the first read shows 2 (the change not in force yet), the window
      // is over by the next; the platform carries out the change at B + 2 min, a read shows it
      for (let at = B + 30_000; at <= B + 8 * MIN; at += 30_000) await f.tick(at);

      expect(drifts).toEqual([]);
      expect(await f.daemon.store.operator.override(f.pipe)).toBeNull();
      expect(await f.record()).not.toHaveProperty('drifts');
      // what the read showed was taken as the platform's, and the policy (baseline 2) went on
      expect(f.replicas()).toBe(2);
    } finally {
      await f.close();
    }
  }, 60_000);
});
