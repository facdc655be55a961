// Key pools: an organization may give several API keys (`api.keys.<name>.pool: <pool>`) and a pipe
// names the pool (`key: <pool>`) as it would name a key. Each pipe goes to one key of the pool by
// weighted rendezvous (highest-random-weight) hashing of its name: the assignment depends only on
// the pipe's name and the pool's keys, so every replica, `validate`, `plan` and `simulate` agree
// without talking to each other, and adding a key to a pool of n moves only about 1/(n+1) of its
// pipes (all of them to the new key), removing one moves only that key's pipes. A key's weight is
// its rate (requests per ms): a key with twice the limit serves about twice the pipes.
import { createHash } from 'node:crypto';
import type { KeyLimits, ScalingConfig, PipeConfig } from './types.js';

export interface PoolMember {
  readonly key: string;
  readonly rateLimit: KeyLimits['rateLimit'];
}

/** pool name -> its keys, in config order. */
export function poolsOf(
  keys: Readonly<Record<string, Pick<KeyLimits, 'rateLimit' | 'pool'>>>,
): Map<string, PoolMember[]> {
  const pools = new Map<string, PoolMember[]>();
  for (const [key, k] of Object.entries(keys)) {
    if (k.pool === undefined) continue;
    const members = pools.get(k.pool) ?? [];
    members.push({ key, rateLimit: k.rateLimit });
    pools.set(k.pool, members);
  }
  return pools;
}

/** A uniform draw in (0, 1) fixed by the pipe and the key: 52 bits of SHA-256. */
function draw(pipe: string, key: string): number {
  const h = createHash('sha256').update(pipe).update('\u0000').update(key).digest();
  const bits = h.readUIntBE(0, 6) * 16 + (h.readUInt8(6) >> 4); // 52 bits
  return (bits + 0.5) / 2 ** 52;
}

/** The key of `members` that serves the pipe named `pipe` (weighted rendezvous hashing). */
export function rendezvousKey(pipe: string, members: readonly PoolMember[]): string {
  const [first] = members;
  if (first === undefined) throw new Error('a pool needs at least one key');
  let best = first.key;
  let bestScore = -Infinity;
  for (const m of members) {
    const weight = m.rateLimit.requests / m.rateLimit.perMs;
    // -w / ln(u): the key with the highest score wins; the share of a key is its weight's share
    const score = -weight / Math.log(draw(pipe, m.key));
    if (score > bestScore || (score === bestScore && m.key < best)) {
      best = m.key;
      bestScore = score;
    }
  }
  return best;
}

/** The config with every pipe that names a pool given one key of it (`key`) and its `pool`. A pipe
 *  that names a key, or a pool without keys (the loader refuses it), stays as it is. */
export function assignPools<C extends Pick<ScalingConfig, 'api' | 'pipes'>>(config: C): C {
  const pools = poolsOf(config.api.keys);
  if (pools.size === 0) return config;
  const pipes = config.pipes.map((p): PipeConfig => {
    const pool = p.pool ?? p.key;
    const members = pools.get(pool);
    if (!members || Object.hasOwn(config.api.keys, pool)) return p;
    return { ...p, key: rendezvousKey(p.name, members), pool };
  });
  return { ...config, pipes };
}
