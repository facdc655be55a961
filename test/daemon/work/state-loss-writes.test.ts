// Nothing of what an evaluation or a turn read before Redis lost the daemon's state is written into
// the emptied state: no `pausedSeen` or `overrideSeen` of an evaluation, no read's answer, no change's
// intent (so no change goes out). Each would leave a record that looks like state and lacks the rest
// (the pauses, the history), and a change would go out with the pauses gone. One daemon against the
// embedded cloud over HTTP, real Redis, one injected clock; the daemon's keys (`<prefix>:ps:*`, the
// marker with them) are deleted right after the snapshot of the evaluation or of the turn.
import { describe, expect, it } from 'vitest';
import { testRedis } from '../helpers.js';
import { lossFixture } from './state-loss-fixture.js';

const { redis, prefix } = testRedis();
const T0 = Date.parse('2026-11-23T08:00:00Z');
const MIN = 60_000;
const B = T0 + 5 * MIN; // the window opens: replicas 2 -> 4

async function setup() {
  const f = await lossFixture(redis, prefix('loss-writes'), { start: T0, boundary: B });
  const paused = f.on('paused');
  const overrides = f.on('override');
  const applied = f.on('decision');
  return { ...f, paused, overrides, applied, loseStateAfter: (nth: number) => f.loseStateAtSnapshot(nth) };
}

describe('writes of an evaluation or a turn from before a Redis state loss', () => {
  it('a pause the evaluation saw: no pausedSeen in the emptied record, no paused event', async () => {
    const f = await setup();
    try {
      for (let at = T0; at < B - MIN; at += 30_000) await f.tick(at);
      await f.daemon.store.operator.setPause(f.pipe, { reason: 'incident' });
      f.loseStateAfter(1);
      await f.tick(B - MIN);
      expect(await f.record()).toEqual({});
      expect(f.paused).toEqual([]);
    } finally {
      await f.close();
    }
  });

  it('an override the evaluation saw: no overrideSeen in the emptied record, no override event', async () => {
    const f = await setup();
    try {
      for (let at = T0; at < B - MIN; at += 30_000) await f.tick(at);
      const override = {
        id: 'o1',
        values: { replicas: 3 },
        setAt: f.now(),
        until: B + 60 * MIN,
        reason: 'test',
        source: 'operator',
        mode: 'set',
      } as const;
      await f.daemon.store.operator.setOverride(f.pipe, override, f.now());
      f.loseStateAfter(1);
      await f.tick(B - MIN);
      expect(await f.record()).toEqual({});
      expect(f.overrides).toEqual([]);
      expect(f.replicas()).toBe(2);
    } finally {
      await f.close();
    }
  });

  it("a read's answer: not written into the emptied record", async () => {
    const f = await setup();
    try {
      // the first tick's evaluation queues the first contact; the state is lost after its turn's snapshot
      f.loseStateAfter(2);
      await f.tick(T0);
      expect(await f.record()).toEqual({});
      // the next tick finds the loss and the pipe is read again
      await f.tick(T0 + 30_000);
      expect(await f.record()).toMatchObject({ lastReadAt: String(T0 + 30_000) });
    } finally {
      await f.close();
    }
  });

  it('a change decided from the lost state: its intent is not written, it does not go out', async () => {
    const f = await setup();
    try {
      for (let at = T0; at < B; at += 30_000) await f.tick(at);
      expect(f.replicas()).toBe(2);
      const sent = f.applied.filter((d) => d.result === 'applied').length;
      f.loseStateAfter(2);
      await f.tick(B);
      expect(f.applied.filter((d) => d.result === 'applied').length).toBe(sent);
      expect(f.replicas()).toBe(2);
      expect(await f.record()).toEqual({});
      // held until read again, then scaled
      for (let at = B + 30_000; at <= B + 3 * MIN; at += 30_000) await f.tick(at);
      expect(f.replicas()).toBe(4);
    } finally {
      await f.close();
    }
  });
});
