// One stream pipe (p1) on one daemon against the embedded cloud over HTTP, real Redis, one injected
// clock for both, whose Redis state a test loses at a chosen point of a tick: the daemon's keys
// (`<prefix>:ps:*`, the marker with them) deleted as a Redis that lost them leaves them, BullMQ's
// kept, or every key of the prefix (a Redis restarted empty, as FLUSHALL leaves it, without
// touching the other tests' keys on the shared server). Its policy: replicas 2, and 4 in a window
// from `boundary`.
import type { Redis } from 'ioredis';
import { DaemonEmitter, type DaemonEvents } from '../../../src/daemon/index.js';
import type { OnDrift } from '../../../src/policy/types.js';
import { tamperProxy } from '../tamper-proxy.js';
import {
  NO_BEHAVIOR,
  cleanupPrefix,
  drained,
  oneOff,
  policy,
  streamCloud,
  testConfig,
  testDaemon,
  wipeState,
} from '../helpers.js';

export interface LossFixtureOptions {
  readonly boundary: number;
  readonly start: number;
  /** How long the window lasts (default an hour). */
  readonly windowMs?: number;
  /** How long p1's changes take to show on the platform (default at once). */
  readonly propagation?: number | string;
  readonly onDrift?: OnDrift;
  readonly reconcileMs?: number;
}

export async function lossFixture(redis: Redis, prefix: string, o: LossFixtureOptions) {
  let clock = o.start;
  const { cloud, pipes, keys, replicas } = await streamCloud(() => clock, ['p1'], 'peak', [o.propagation ?? 0]);
  const window = oneOff('peak', o.boundary, o.boundary + (o.windowMs ?? 3_600_000), { replicas: 4 });
  const behavior = { ...NO_BEHAVIOR, scaleUp: { ...NO_BEHAVIOR.scaleUp, leadTime: 0 }, onDrift: o.onDrift };
  const policies = { peak: policy('peak', { replicas: 2 }, [window], behavior) };
  // every request goes through a proxy, so that a test can lose the state while one is on its way
  const proxy = await tamperProxy(cloud.url);
  const config = testConfig({ baseUrl: proxy.url, prefix, pipes, keys, policies, reconcileMs: o.reconcileMs });
  const emitter = new DaemonEmitter();
  const daemon = testDaemon({ config, redis, prefix, emitter, now: () => clock });
  await daemon.start();
  const snapshot = daemon.store.snapshot.bind(daemon.store);
  const writeIfIntent = daemon.store.writeIfIntent.bind(daemon.store);
  const lose = () => wipeState(redis, prefix);
  return {
    daemon,
    cloud,
    pipe: pipes[0]!,
    /** Every event of a kind from now on. */
    on: <K extends keyof DaemonEvents>(event: K): DaemonEvents[K][] => {
      const seen: DaemonEvents[K][] = [];
      emitter.on(event, (e) => seen.push(e));
      return seen;
    },
    /** The state is lost right after the `nth` snapshot from now (1: the next tick's evaluation,
     *  2: the turn it queues), or right before the next one. */
    loseStateAtSnapshot: (nth: number, when: 'after' | 'before' = 'after'): void => {
      let left = nth;
      daemon.store.snapshot = async (name, ids) => {
        if (--left === 0 && when === 'before') await lose();
        const snap = await snapshot(name, ids);
        if (left === 0 && when === 'after') await lose();
        return snap;
      };
    },
    /** The state is lost right after the next write a turn makes under its intent (a read's
     *  answer; a change's goes in with the line it owes, StateStore.recordAnswer) went in. */
    loseStateAfterAnswer: (): { lost: boolean } => {
      const done = { lost: false };
      daemon.store.writeIfIntent = async (...args) => {
        const written = await writeIfIntent(...args);
        if (!done.lost && written) {
          done.lost = true;
          await lose();
        }
        return written;
      };
      return done;
    },
    /** The state is lost while the next scaling call (a change or a read) is on its way: after the
     *  platform answered it, before the answer reaches the daemon; `all`: every key of the prefix. */
    loseStateAtAnswer: (all = false): void => {
      let armed = true;
      proxy.tamper = async (req, upstream) => {
        const answer = await upstream();
        if (armed && req.method === 'PATCH') {
          armed = false;
          await (all ? cleanupPrefix(redis, prefix) : lose());
        }
        return answer;
      };
    },
    /** Every key of the prefix goes, the queues' with them: a Redis restarted empty. */
    restartEmpty: () => cleanupPrefix(redis, prefix),
    /** p1's record: its key, its fields. */
    recordKey: `${prefix}:ps:pipe:p1`,
    record: () => redis.hgetall(`${prefix}:ps:pipe:p1`),
    replicas: () => replicas(0),
    now: () => clock,
    tick: async (at: number) => {
      clock = at;
      await daemon.tick(at);
      await drained([daemon]);
    },
    close: async () => {
      await daemon.stop({ timeoutMs: 2_000 });
      await proxy.close();
      await cloud.close();
    },
  };
}
