// `npm start` twice gives the same demo. The embedded cloud starts from its fixtures every time,
// but Redis kept the previous run's state: `status` showed a pipe "at desired" 6 replicas while the
// fresh cloud ran it at 1, and nothing moved until the next reconcile read. So a daemon on the
// embedded cloud wipes its prefix's state at start, when, and only when, that state is the embedded
// demo's: the marker key (redis-guard.ts) of a demo says `demo: true`. State without that marker
// (a real deployment's, or one from before the marker said so) is never touched, nor is a prefix
// on which another replica is alive (its demo keeps running). A second embedded demo on the prefix
// of one that runs is refused (DemoConflict): it would share the first one's Redis state while
// scaling a cloud of its own, each "reverting drift" the other caused.
import { isCluster, type RedisClient } from './redis-connection.js';
import type { DaemonLogger } from '../model/logger.js';
import { readReplicas, type ReplicaBeat } from './heartbeat.js';
import type { redisKeys } from './redis-keys.js';
import { isDemoMarker } from './redis-guard.js';

export type DemoReset = 'fresh' | 'wiped' | 'kept:not_demo' | 'kept:alive';

/** Another embedded demo runs on this Redis prefix: this one does not start. */
export class DemoConflict extends Error {
  override readonly name = 'DemoConflict';
}

function conflict(prefix: string, other: ReplicaBeat & { embedded: { url: string } }): DemoConflict {
  return new DemoConflict(
    `another embedded demo is running on the Redis prefix "${prefix}" (pid ${other.pid} on ${other.host}, ` +
      `started ${new Date(other.startedAt).toISOString()}, its cloud at ${other.embedded.url}): a second one would ` +
      "share its Redis state while scaling a cloud of its own, each undoing the other's changes as drift. Stop that " +
      `one, or give this one a prefix of its own: PIPESCALER_REDIS_PREFIX=${prefix}-2`,
  );
}

/** Wipe the prefix's keys (ours and BullMQ's) when they are a stopped embedded demo's. */
export async function resetDemoState(
  redis: RedisClient,
  prefix: string,
  keys: ReturnType<typeof redisKeys>,
  logger: DaemonLogger,
): Promise<DemoReset> {
  const marker = await redis.get(keys.marker);
  if (marker === null) return 'fresh';
  if (!isDemoMarker(marker)) {
    logger.warn(
      { prefix },
      'the Redis prefix holds state the embedded demo did not write: kept as it is (set PIPESCALER_REDIS_PREFIX for a demo of its own)',
    );
    return 'kept:not_demo';
  }
  const alive = await readReplicas(redis, keys);
  const demo = alive.find((r) => r.embedded !== undefined);
  if (demo?.embedded) throw conflict(prefix, { ...demo, embedded: demo.embedded });
  if (alive.length > 0) {
    logger.info({ prefix }, "another daemon is alive on the demo's Redis prefix: its state is kept");
    return 'kept:alive';
  }
  const deleted = await deletePrefix(redis, prefix);
  logger.info(
    { prefix, keys: deleted },
    "the embedded demo starts clean: the previous demo run's Redis state was wiped",
  );
  return 'wiped';
}

/** SCAN + UNLINK every key under `prefix:`; on a cluster on every master (the prefix's hash tag
 *  puts them on one, which may move). */
async function deletePrefix(redis: RedisClient, prefix: string): Promise<number> {
  const match = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}:*`;
  const servers = isCluster(redis) ? redis.nodes('master') : [redis];
  let deleted = 0;
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, found] = await server.scan(cursor, 'MATCH', match, 'COUNT', 1_000);
      cursor = next;
      if (found.length === 0) continue;
      // one UNLINK per key (pipelined): on a cluster a multi-key UNLINK must stay in one slot
      const batch = server.pipeline();
      for (const key of found) batch.unlink(key);
      for (const [err, n] of (await batch.exec()) ?? []) if (!err) deleted += Number(n);
    } while (cursor !== '0');
  }
  return deleted;
}
