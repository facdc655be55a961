// An evaluation that began before Redis lost the daemon's state, or whose job was enqueued before
// it, never acts on the old state: one daemon against the embedded cloud over HTTP, real Redis, one
// injected clock. The daemon's keys (`<prefix>:ps:*`, the marker with them) are deleted at a chosen
// point of the evaluation of the tick at which the pipe's window opens: right after its snapshot
// (started before the loss, carried out after it) or right before it (its job enqueued before the
// loss, run before any tick noticed it). Either way nothing of it is written, no change goes out and
// no verdict is given: the next tick finds the marker gone and holds, and the pipe's reads rebuild
// its record before it is scaled. An evaluation of the tick at B run after that tick is dropped too.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon, type DaemonEvents } from '../../../src/daemon/index.js';
import type { PipeConfig } from '../../../src/policy/types.js';
import {
  FAST_WORKERS,
  NO_BEHAVIOR,
  REDIS_URL,
  cleanupPrefix,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
} from '../helpers.js';

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const prefixes: string[] = [];
const T0 = Date.parse('2026-11-23T08:00:00Z');
const MIN = 60_000;
const B = T0 + 5 * MIN; // the window opens: replicas 2 -> 4

afterAll(async () => {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
});

/** Every key of the daemon's state (`<prefix>:ps:*`), as a Redis that lost it leaves them. */
async function wipeState(prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:ps:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

async function setup() {
  const prefix = uniquePrefix('eval-loss');
  prefixes.push(prefix);
  let clock = T0;
  const fixtures = generateFixtures({ streamPipes: 1 });
  const cloud = await startCloud({ fixtures, port: 0, rateLimit: false, now: () => clock });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const pipe: PipeConfig = { name: 'p1', ...generatedPipeIds(1), policy: 'peak', key: 'default', bounds: {} };
  const config = testConfig({
    baseUrl: cloud.url,
    prefix,
    pipes: [pipe],
    keys: { default: { keyId, keySecret } },
    policies: {
      // no lead: the window's change is decided at B, by the evaluation the loss comes around
      peak: policy('peak', { replicas: 2 }, [oneOff('peak', B, B + 60 * MIN, { replicas: 4 })], {
        ...NO_BEHAVIOR,
        scaleUp: { ...NO_BEHAVIOR.scaleUp, leadTime: 0 },
      }),
    },
  });
  const emitter = new DaemonEmitter();
  const verdicts: DaemonEvents['verdict'][] = [];
  const evaluations: DaemonEvents['evaluation'][] = [];
  const losses: DaemonEvents['redis:state'][] = [];
  emitter.on('verdict', (v) => verdicts.push(v));
  emitter.on('evaluation', (e) => evaluations.push(e));
  emitter.on('redis:state', (s) => losses.push(s));
  const daemon: Daemon = createDaemon({
    config,
    redis,
    prefix,
    emitter,
    now: () => clock,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  await daemon.start();
  const snapshot = daemon.store.snapshot.bind(daemon.store);
  /** The next snapshot of the pipe loses the state before or after it is read. */
  const loseState = (when: 'before' | 'after'): void => {
    let armed = true;
    daemon.store.snapshot = async (name, ids) => {
      if (!armed) return snapshot(name, ids);
      armed = false;
      if (when === 'before') await wipeState(prefix);
      const snap = await snapshot(name, ids);
      if (when === 'after') await wipeState(prefix);
      return snap;
    };
  };
  return {
    daemon,
    verdicts,
    evaluations,
    losses,
    loseState,
    record: () => redis.hgetall(`${prefix}:ps:pipe:p1`),
    replicas: () => cloud.store.pipe(generatedPipeIds(1).pipeId)!.scaling.replicas,
    tick: async (at: number) => {
      clock = at;
      await daemon.tick(at);
      await drained([daemon]);
    },
    close: async () => {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    },
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
