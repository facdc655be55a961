// An API key the platform turned away, on its check or on the first call of it refused 401
// (key-checks.ts), kept in Redis so `status` can say it. A wrong or rotated secret is otherwise silent on a fleet with state in Redis: nothing is
// due, no pipe's call fails, and the check's 401 still counts as the platform answering. 401 means
// the key itself is refused (every call of it will be); 403 that it may not list services (the
// checks stop; its pipes' own calls may still be allowed). Any 2xx of the key clears it.
import { z } from 'zod';
import type { RedisClient } from './redis-connection.js';
import type { redisKeys } from './redis-keys.js';
import { parseStored } from '../model/record-fields.js';

const KeyRefusalSchema = z.object({
  /** 401 (the key is refused) or 403 (the services list is refused to it). */
  status: z.number().int(),
  code: z.string(),
  /** Epoch ms of the check that was refused. */
  at: z.number(),
});
export type KeyRefusal = z.infer<typeof KeyRefusalSchema>;

/** A refusal that means no call of the key can succeed: the daemon is not ready, an alert fires. */
export function isRejection(r: Pick<KeyRefusal, 'status'>): boolean {
  return r.status === 401;
}

/** The line status and the log give; keyId, when known, names the key as the platform knows it
 *  (never its secret). */
export function describeRefusal(key: string, r: KeyRefusal, keyId?: string): string {
  const name = keyId !== undefined && keyId !== '' ? `key ${key} (keyId ${keyId})` : `key ${key}`;
  return isRejection(r)
    ? `${name}: the platform refuses it (${r.status} ${r.code}) since ${new Date(r.at).toISOString()}: its keyId or secret is wrong or was rotated, so none of its pipes can be scaled; fix it and reload`
    : `${name}: the platform refuses it the services list (${r.status} ${r.code}) since ${new Date(r.at).toISOString()}: no more checks of it until a reload; its pipes' own calls are its contact`;
}

type Keys = Pick<ReturnType<typeof redisKeys>, 'keyRefusal'>;

export async function writeKeyRefusal(
  redis: RedisClient,
  keys: Keys,
  key: string,
  r: KeyRefusal | null,
): Promise<void> {
  if (r === null) await redis.del(keys.keyRefusal(key));
  else await redis.set(keys.keyRefusal(key), JSON.stringify(r));
}

/** The refusals in force of these keys (a key without one is left out). */
export async function readKeyRefusals(
  redis: RedisClient,
  keys: Keys,
  names: readonly string[],
): Promise<Map<string, KeyRefusal>> {
  const out = new Map<string, KeyRefusal>();
  if (names.length === 0) return out;
  // One GET each: on a cluster the keys share the prefix's slot, but MGET would still need one.
  const values = await Promise.all(names.map((n) => redis.get(keys.keyRefusal(n))));
  names.forEach((n, i) => {
    const r = parseStored(KeyRefusalSchema, values[i]);
    if (r !== null) out.set(n, r);
  });
  return out;
}
