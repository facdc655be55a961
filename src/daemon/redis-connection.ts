// The daemon's Redis connections. Workers need maxRetriesPerRequest: null (BullMQ blocks on
// them); retryStrategy keeps reconnecting forever with a capped backoff, so a Redis restart is
// an outage of readiness, never a crash.
import { Redis, type RedisOptions } from 'ioredis';

export const RECONNECT_CAP_MS = 2_000;

export interface RedisStatusListener {
  (ready: boolean): void;
}

/** A connection for the daemon: commands wait through an outage instead of failing. */
export function connectRedis(url: string, onStatus?: RedisStatusListener, extra: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), RECONNECT_CAP_MS),
    lazyConnect: false,
    ...extra,
  });
  if (onStatus) watchStatus(redis, onStatus);
  // ioredis emits 'error' on every failed reconnect; without a listener Node would throw it.
  redis.on('error', () => {});
  return redis;
}

/** Report each change of readiness of a connection (ours or one the caller passed in). */
export function watchStatus(redis: Redis, onStatus: RedisStatusListener): () => void {
  let last: boolean | null = redis.status === 'ready' ? true : null;
  const report = (ready: boolean) => {
    if (ready !== last) {
      last = ready;
      onStatus(ready);
    }
  };
  const up = () => report(true);
  const down = () => report(false);
  redis.on('ready', up);
  redis.on('close', down);
  redis.on('end', down);
  return () => {
    redis.off('ready', up);
    redis.off('close', down);
    redis.off('end', down);
  };
}

/** A connection for a one-shot CLI command: fail fast when Redis is not there. */
export function connectRedisOnce(url: string): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 3_000 });
  redis.on('error', () => {});
  return redis;
}
