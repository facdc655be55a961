// An evaluation that began before Redis lost the daemon's state, or whose job was enqueued before
// it, never acts on the old state: one daemon against the embedded cloud over HTTP, real Redis, one
// injected clock. The daemon's keys (`<prefix>:ps:*`, the marker with them) are deleted at a chosen
// point of the evaluation of the tick at which the pipe's window opens: right after its snapshot
// (started before the loss, carried out after it) or right before it (its job enqueued before the
// loss, run before any tick noticed it). Either way nothing of it is written, no change goes out and
// no verdict is given: the next tick finds the marker gone and holds, and the pipe's reads rebuild
// its record before it is scaled. An evaluation of the tick at B run after that tick is dropped too.
import { describe, expect, it } from 'vitest';
import { drained, testRedis } from '../helpers.js';
import { lossFixture } from './state-loss-fixture.js';

const { redis, prefix } = testRedis();
const T0 = Date.parse('2026-11-23T08:00:00Z');
const MIN = 60_000;
const B = T0 + 5 * MIN; // the window opens: replicas 2 -> 4

async function setup() {
  // no lead: the window's change is decided at B, by the evaluation the loss comes around
  const f = await lossFixture(redis, prefix('eval-loss'), { start: T0, boundary: B });
  const verdicts = f.on('verdict');
  const evaluations = f.on('evaluation');
  const losses = f.on('redis:state');
  return {
    ...f,
    verdicts,
    evaluations,
    losses,
    loseState: (when: 'before' | 'after') => f.loseStateAtSnapshot(1, when),
  };
}

describe('an evaluation from before a Redis state loss', () => {
  for (const when of ['after', 'before'] as const) {
    it(`the state lost ${when} its snapshot: nothing written, no change sent, no verdict; the next tick holds and the reads rebuild`, async () => {
      const f = await setup();
      try {
        for (let at = T0; at < B; at += 30_000) await f.tick(at);
        expect(f.replicas()).toBe(2);
        expect(await f.record()).toMatchObject({ desired: JSON.stringify({ replicas: 2 }) });

        // the window opens at B: the tick's evaluation of p1 is the one Redis loses the state around
        f.loseState(when);
        const before = f.evaluations.length;
        await f.tick(B);
        // it decided nothing on the old state (or on the lost one, unnoticed yet), wrote nothing
        // over the lost state, queued no change, gave no verdict
        expect(f.replicas()).toBe(2);
        expect(f.verdicts).toEqual([]);
        expect(await f.record()).toEqual({});
        expect(f.evaluations.length).toBe(before);

        // the next tick finds the marker gone: held, the pipe read again; scaled once rebuilt
        await f.tick(B + 30_000);
        expect(f.losses.at(-1)).toMatchObject({ lost: true, cause: 'data_lost' });
        expect(f.replicas()).toBe(2);
        for (let at = B + MIN; at <= B + 3 * MIN; at += 30_000) await f.tick(at);
        expect(f.losses.at(-1)).toMatchObject({ lost: false });
        expect(f.replicas()).toBe(4);
        // the start the loss came around is no missed or late one
        expect(f.verdicts.filter((v) => v.verdict === 'missed' || v.verdict === 'late')).toEqual([]);

        // an evaluation of the tick at B whose job was enqueued before the loss and runs only now,
        // after the tick that found it: dropped, nothing written (a decision stored since refused it
        // already, as it refuses any older tick's)
        const held = await f.record();
        const seen = { evaluations: f.evaluations.length, verdicts: f.verdicts.length };
        const evaluate = f.daemon.queues().find((q) => q.name === 'evaluate')!;
        await evaluate.add('evaluate', { pipe: 'p1', tickAt: B }, { jobId: 'p1-before-the-loss' });
        await drained([f.daemon]);
        expect(await f.record()).toEqual(held);
        expect({ evaluations: f.evaluations.length, verdicts: f.verdicts.length }).toEqual(seen);
      } finally {
        await f.close();
      }
    });
  }
});
