// Each daemon replica says it is alive: a key of its own, written every HEARTBEAT_EVERY_MS with an
// expiry of HEARTBEAT_TTL_MS, and its id in a set so `pipescaler status` finds every replica
// without scanning the keyspace. A replica that dies stops writing and its key expires; one that
// stops cleanly deletes it. Wall-clock time throughout (an expiry is real time, whatever clock the
// daemon's decisions run on).
import { hostname } from 'node:os';
import { VERSION } from '../version.js';
import type { RedisClient } from './redis-connection.js';
import type { redisKeys } from './redis-keys.js';

export const HEARTBEAT_EVERY_MS = 10_000;
/** Three beats: a replica is alive while one of its last three beats got through. */
export const HEARTBEAT_TTL_MS = 3 * HEARTBEAT_EVERY_MS;

/** What a replica's heartbeat key holds. */
export interface ReplicaBeat {
  readonly id: string;
  readonly host: string;
  readonly pid: number;
  readonly version: string;
  /** Epoch ms: the replica's start, and its last beat. */
  readonly startedAt: number;
  readonly at: number;
  readonly pipes: number;
  readonly dryRun: boolean;
}

type Keys = Pick<ReturnType<typeof redisKeys>, 'replica' | 'replicas'>;

export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private readonly startedAt = Date.now();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keys,
    private readonly id: string,
    private readonly info: () => { pipes: number; dryRun: boolean },
  ) {}

  /** Beat now and every HEARTBEAT_EVERY_MS; a beat that fails (Redis away) is simply missed. */
  start(): void {
    if (this.timer) return;
    void this.beat().catch(() => undefined);
    this.timer = setInterval(() => void this.beat().catch(() => undefined), HEARTBEAT_EVERY_MS);
    this.timer.unref();
  }

  async beat(): Promise<void> {
    const beat: ReplicaBeat = {
      id: this.id, host: hostname(), pid: process.pid, version: VERSION, startedAt: this.startedAt, at: Date.now(), ...this.info(),
    };
    await this.redis.multi()
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
    if (v === null) continue;
    try {
      alive.push(JSON.parse(v) as ReplicaBeat);
    } catch {
      // a key of ours that is not JSON: not a replica we can describe
    }
  }
  return alive.sort((a, b) => b.at - a.at);
}
