// Every key of the daemon starts with the prefix (src/daemon/store/redis-keys.ts): with a hash-tagged
// prefix, as a Redis Cluster needs, each key hashes by that tag, whatever the names in it (a
// policy or pipe name with braces included), so no script or multi-key command crosses slots.
import { describe, expect, it } from 'vitest';
import { applyQueueName, EVALUATE_QUEUE } from '../../../src/daemon/lanes/queues.js';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { hashTag } from '../../../src/config/redis.js';

describe('redisKeys', () => {
  it("puts every key of ours, and BullMQ's, in the slot of the prefix's hash tag", () => {
    for (const prefix of ['{pipescaler}', 'prod{ps}', '{a}{b}']) {
      const keys = redisKeys(prefix);
      const tag = hashTag(prefix);
      const names = ['orders', '{x}', 'a}b{c', ''];
      const all = [
        keys.marker,
        keys.pauseAll,
        keys.pattern,
        ...names.flatMap((n) => [
          keys.pipe(n),
          keys.pause(n),
          keys.services(n),
          keys.budget(n),
          keys.actuation(n),
          keys.actuationKind(n),
          keys.metricGood(n),
          keys.metricTick(n, 1_795_000_000_000, 'a1b2c3d4e5f6'),
          keys.metricLock(n, 1_795_000_000_000, 'a1b2c3d4e5f6'),
          keys.forecast(n, 1_795_000_000_000, 'a1b2c3d4e5f6'),
          keys.forecastLock(n, 1_795_000_000_000, 'a1b2c3d4e5f6'),
        ]),
        keys.tick(1_795_000_000),
        // BullMQ's: <prefix>:<queue>:<suffix>
        `${prefix}:${EVALUATE_QUEUE}:wait`,
        `${prefix}:${applyQueueName('{key}')}:meta`,
      ];
      for (const key of all) {
        expect(key.startsWith(`${prefix}:`), key).toBe(true);
        expect(hashTag(key), key).toBe(tag);
      }
    }
  });
});
