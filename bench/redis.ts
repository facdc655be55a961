// The bench's Redis: 127.0.0.1 only, a unique key prefix per run, and its keys deleted after.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = 'redis://127.0.0.1:6379';

// run.ts sets the run id; forked scenarios inherit it, so a run sweeps only its own leftovers.
const RUN = (process.env.PIPESCALER_BENCH_RUN ??= randomUUID().slice(0, 8));

export function benchPrefix(scenario: string): string {
  return `pipescaler-bench-${RUN}-${scenario}-${randomUUID().slice(0, 8)}`;
}

export function connect(): Redis {
  // BullMQ workers need maxRetriesPerRequest null (they block on the connection).
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null, lazyConnect: false });
}

/** Deletes every key under the prefix (SCAN, never KEYS); returns how many. */
export function deletePrefix(redis: Redis, prefix: string): Promise<number> {
  return deleteMatching(redis, `${prefix}:*`);
}

/** What this run's scenarios left behind when one was killed by its timeout. */
export function deleteBenchLeftovers(redis: Redis): Promise<number> {
  return deleteMatching(redis, `pipescaler-bench-${RUN}-*`);
}

async function deleteMatching(redis: Redis, pattern: string): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  for (let rounds = 0; rounds < 100_000; rounds++) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length > 0) deleted += await redis.unlink(...keys);
    cursor = next;
    if (cursor === '0') break;
  }
  return deleted;
}
