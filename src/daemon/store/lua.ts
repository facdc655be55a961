// The daemon's Lua scripts are registered once per Redis client with ioredis' defineCommand: a call
// sends EVALSHA with the script's digest, and the text only when Redis answers NOSCRIPT (after a
// restart or a SCRIPT FLUSH), where EVAL sent the whole text with every call.
import type { RedisClient } from './redis-connection.js';

export interface LuaCommand {
  /** The client method defineCommand adds (typed by a RedisCommander augmentation next to the script). */
  readonly name: string;
  /** Absent: the call passes the number of keys first (a script over any number of keys). */
  readonly numberOfKeys?: number;
  readonly lua: string;
}

const defined = new WeakMap<RedisClient, Set<string>>();

/** Defines each command on this client once; another store or budget on the same client reuses them. */
export function defineLua(redis: RedisClient, commands: readonly LuaCommand[]): void {
  let names = defined.get(redis);
  if (!names) defined.set(redis, (names = new Set()));
  for (const c of commands) {
    if (names.has(c.name)) continue;
    redis.defineCommand(
      c.name,
      c.numberOfKeys === undefined ? { lua: c.lua } : { numberOfKeys: c.numberOfKeys, lua: c.lua },
    );
    names.add(c.name);
  }
}
