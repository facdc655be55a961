// Nothing of what an evaluation or a turn read before Redis lost the daemon's state is written into
// the emptied state: no `pausedSeen` or `overrideSeen` of an evaluation, no read's answer, no change's
// intent (so no change goes out). Each would leave a record that looks like state and lacks the rest
// (the pauses, the history), and a change would go out with the pauses gone. One daemon against the
// embedded cloud over HTTP, real Redis, one injected clock; the daemon's keys (`<prefix>:ps:*`, the
// marker with them) are deleted right after the snapshot of the evaluation or of the turn.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { generatedPipeIds, generateFixtures, startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type DaemonEvents } from '../../../src/daemon/index.js';
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

async function wipeState(prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}:ps:*`);
  if (keys.length > 0) await redis.del(...keys);
}

async function setup() {
  const prefix = uniquePrefix('loss-writes');
  prefixes.push(prefix);
  let clock = T0;
  const fixtures = generateFixtures({ streamPipes: 1 });
  const cloud = await startCloud({ fixtures, port: 0, rateLimit: false, now: () => clock });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const pipe: PipeConfig = { name: 'p1', ...generatedPipeIds(1), policy: 'peak', key: 'default', bounds: {} };
  const noLead = { ...NO_BEHAVIOR, scaleUp: { ...NO_BEHAVIOR.scaleUp, leadTime: 0 } };
  const config = testConfig({
    baseUrl: cloud.url,
    prefix,
    pipes: [pipe],
    keys: { default: { keyId, keySecret } },
    policies: { peak: policy('peak', { replicas: 2 }, [oneOff('peak', B, B + 60 * MIN, { replicas: 4 })], noLead) },
  });
  const emitter = new DaemonEmitter();
  const paused: DaemonEvents['paused'][] = [];
  const overrides: DaemonEvents['override'][] = [];
  const applied: DaemonEvents['decision'][] = [];
  emitter.on('paused', (e) => paused.push(e));
  emitter.on('decision', (d) => {
    if (d.result === 'applied') applied.push(d);
  });
  emitter.on('override', (e) => overrides.push(e));
  const daemon = createDaemon({
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
  return {
    daemon,
    pipe,
    paused,
    overrides,
    applied,
    /** The state is lost right after the `nth` snapshot from now (1: the next tick's evaluation,
     *  2: the turn it queues). */
    loseStateAfter: (nth: number): void => {
      let left = nth;
      daemon.store.snapshot = async (name, ids) => {
        const snap = await snapshot(name, ids);
        if (--left === 0) await wipeState(prefix);
        return snap;
      };
    },
    record: () => redis.hgetall(`${prefix}:ps:pipe:p1`),
    replicas: () => cloud.store.pipe(generatedPipeIds(1).pipeId)!.scaling.replicas,
    now: () => clock,
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
      const sent = f.applied.length;
      f.loseStateAfter(2);
      await f.tick(B);
      expect(f.applied.length).toBe(sent);
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
