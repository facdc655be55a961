// Each daemon replica says it is alive: a key of its own, written every HEARTBEAT_EVERY_MS with an
// expiry of HEARTBEAT_TTL_MS, and its id in a set so `pipescaler status` finds every replica
// without scanning the keyspace. A replica that dies stops writing and its key expires; one that
// stops cleanly deletes it. Wall-clock time throughout (an expiry is real time, whatever clock the
// daemon's decisions run on).
import { hostname } from 'node:os';
import { z } from 'zod';
import { VERSION } from '../../version.js';
import type { RedisClient } from './redis-connection.js';
import type { redisKeys } from './redis-keys.js';
import { parseStored } from '../model/record-fields.js';

export const HEARTBEAT_EVERY_MS = 10_000;
/** Three beats: a replica is alive while one of its last three beats got through. */
export const HEARTBEAT_TTL_MS = 3 * HEARTBEAT_EVERY_MS;

/** What a replica's heartbeat key holds. */
/** What a replica writes at each beat; read back through this schema (another replica's, or an older version's). */
const ReplicaBeatSchema = z.object({
  id: z.string(),
  host: z.string(),
  pid: z.number(),
  version: z.string(),
  /** Epoch ms: the replica's start, and its last beat. */
  startedAt: z.number(),
  at: z.number(),
  pipes: z.number(),
  dryRun: z.boolean(),
  /** The embedded cloud this replica scales (api.baseUrl embedded): its URL and admin token, for
   *  `plan` and `simulate` to read it (absent against the platform). */
  embedded: z.object({ url: z.string(), adminToken: z.string() }).optional(),
});
export type ReplicaBeat = Readonly<z.infer<typeof ReplicaBeatSchema>>;

type Keys = Pick<ReturnType<typeof redisKeys>, 'replica' | 'replicas'>;

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private readonly startedAt: number;

  /** @param now the wall clock of the beats (status orders replicas by it); tests pass their own. */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly id: string,
    private readonly info: () => Pick<ReplicaBeat, 'pipes' | 'dryRun' | 'embedded'>,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
  }

  /** Beat now and every HEARTBEAT_EVERY_MS; a beat that fails (Redis away) is simply missed. */
  start(): void {
    if (this.timer) return;
    void this.beat().catch(() => undefined);
    this.timer = setInterval(() => void this.beat().catch(() => undefined), HEARTBEAT_EVERY_MS);
    this.timer.unref();
  }

  async beat(): Promise<void> {
    const beat: ReplicaBeat = {
      id: this.id,
      host: hostname(),
      pid: process.pid,
      version: VERSION,
      startedAt: this.startedAt,
      at: this.now(),
      ...this.info(),
    };
    await this.redis
      .multi()
      .set(this.keys.replica(this.id), JSON.stringify(beat), 'PX', HEARTBEAT_TTL_MS)
      .sadd(this.keys.replicas, this.id)
      .exec();
  }

  /** Stop beating and take this replica's key away: status must not count a stopped replica. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.redis.multi().del(this.keys.replica(this.id)).srem(this.keys.replicas, this.id).exec();
  }
}

/** The replicas alive now (their key has not expired), newest beat first; forgets the expired ones. */
export async function readReplicas(redis: RedisClient, keys: Keys): Promise<ReplicaBeat[]> {
  const ids = await redis.smembers(keys.replicas);
  if (ids.length === 0) return [];
  const values = await redis.mget(...ids.map((id) => keys.replica(id)));
  const gone = ids.filter((_, i) => values[i] === null);
  if (gone.length > 0) await redis.srem(keys.replicas, ...gone);
  const alive: ReplicaBeat[] = [];
  for (const v of values) {
    // a value that is not a beat (not JSON, another shape): not a replica we can describe
    const beat = parseStored(ReplicaBeatSchema, v);
    if (beat !== null) alive.push(beat);
  }
  return alive.sort((a, b) => b.at - a.at);
}
