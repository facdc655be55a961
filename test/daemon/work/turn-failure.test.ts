// What a failed request of a turn records (its error, the pipe's count of failures, its backoff)
// goes in only while Redis still holds the state the turn read: a failure answered after Redis lost
// the state leaves the emptied record empty, like the answer it stands for. One daemon against the
// embedded cloud over HTTP (every scaling call answered 500), real Redis, one injected clock.
import { describe, expect, it } from 'vitest';
import { testRedis } from '../helpers.js';
import { lossFixture } from './state-loss-fixture.js';

const { redis, prefix } = testRedis();
const T0 = Date.parse('2026-11-23T08:00:00Z');
const MIN = 60_000;
const B = T0 + 5 * MIN; // the window opens: replicas 2 -> 4

describe('a failed request of a turn after Redis lost the state it read', () => {
  it("a read's 500: no error, failure count or backoff in the emptied record", async () => {
    const f = await lossFixture(redis, prefix('failure-read'), { start: T0, boundary: B });
    try {
      f.cloud.setFaults({ scalePipe: { error500: 1 } });
      // the first tick's evaluation queues the first contact; the state goes while it is on its way
      f.loseStateAtAnswer();
      await f.tick(T0);
      expect(await f.record()).toEqual({});
    } finally {
      await f.close();
    }
  });

  it("a change's 500 after its intent went in: nothing of it in the emptied record", async () => {
    const f = await lossFixture(redis, prefix('failure-change'), { start: T0, boundary: B });
    try {
      for (let at = T0; at < B; at += 30_000) await f.tick(at);
      f.cloud.setFaults({ scalePipe: { error500: 1 } });
      // the window's change: its intent goes in, then the state goes, then the platform's 500 comes
      f.loseStateAtAnswer();
      await f.tick(B);
      expect(await f.record()).toEqual({});
    } finally {
      await f.close();
    }
  });
});
