// History in Redis: one list per pipe, newest first, shared by every replica. A list, not a
// stream: a repeat of the newest outcome updates that entry in place (LSET), which a stream's
// immutable entries cannot do (XDEL + XADD leaves tombstones in its nodes), and a list of short
// strings is the most compact structure Redis has (listpacks, ~3 bytes of overhead per entry).
// Every write is one Lua script, so replicas writing the same pipe at once never both push a
// repeat; it also trims the list to maxEntries and drops entries older than the retention, and
// sets the key to expire a retention after its last write (a pipe that went quiet leaves nothing).
import type { Cluster, Redis, Result } from 'ioredis';
import { decodeEntry, encodeEntry, identityOf, time36, type HistoryEntry } from './codec.js';
import type { Outcome } from './outcomes.js';

export type HistoryRedis = Redis | Cluster;

export const DEFAULT_RETENTION_MS = 42 * 86_400_000;
export const DEFAULT_MAX_ENTRIES = 2_000;

export interface HistoryLimits {
  readonly retentionMs: number;
  readonly maxEntries: number;
}

/**
 * A pipe's limits under the config's history settings: its own maxEntries, lowered to an equal
 * share of maxTotalEntries among the pipes of the config (at least one entry), so the fleet's
 * lists never hold more than the total together. The share is enforced at each pipe's next write
 * (the append script trims to it); a pipe that stops writing keeps what it has until it expires.
 */
export function historyLimits(
  settings:
    { readonly retentionMs: number; readonly maxEntries: number; readonly maxTotalEntries?: number } | undefined,
  pipes: number,
): HistoryLimits {
  const retentionMs = settings?.retentionMs ?? DEFAULT_RETENTION_MS;
  const maxEntries = settings?.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const total = settings?.maxTotalEntries;
  if (total === undefined || pipes === 0) return { retentionMs, maxEntries };
  return { retentionMs, maxEntries: Math.max(1, Math.min(maxEntries, Math.floor(total / pipes))) };
}

// KEYS[1] the pipe's list. ARGV: identity, new entry, now (base 36), requestId, cutoff (epoch ms),
// maxEntries, retention (ms). Entries are identity, first, last, count, requestId.
const APPEND_SCRIPT = `
local id = ARGV[1]
local head = redis.call('LINDEX', KEYS[1], 0)
local collapsed = 0
if head and string.sub(head, 1, #id) == id then
  local first, count = string.match(string.sub(head, #id + 1), '^([^\\31]*)\\31[^\\31]*\\31(%d+)\\31')
  if first then
    redis.call('LSET', KEYS[1], 0, id .. first .. '\\31' .. ARGV[3] .. '\\31' .. (tonumber(count) + 1) .. '\\31' .. ARGV[4])
    collapsed = 1
  end
end
if collapsed == 0 then redis.call('LPUSH', KEYS[1], ARGV[2]) end
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[6]) - 1)
local cutoff = tonumber(ARGV[5])
for i = 1, 50 do
  local tail = redis.call('LINDEX', KEYS[1], -1)
  if not tail then break end
  local last = string.match(tail, '\\31([^\\31]*)\\31%d+\\31[^\\31]*$')
  if last and tonumber(last, 36) < cutoff then redis.call('RPOP', KEYS[1]) else break end
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
return collapsed
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** APPEND_SCRIPT: 1 when the outcome repeated the newest entry (collapsed), 0 when pushed. */
    pipescalerHistoryAppend(key: string, ...args: string[]): Result<number, Context>;
  }
}

const defined = new WeakSet<HistoryRedis>();

/** Where to start reading and what to keep. */
export interface HistoryQuery {
  /** Epoch ms: entries whose last time is before it are not returned. */
  readonly since?: number;
  readonly outcomes?: readonly string[];
  /** At most this many entries (newest first). */
  readonly limit?: number;
  /** Skip this many matching entries first (paging). */
  readonly offset?: number;
}

export interface HistoryPage {
  readonly entries: HistoryEntry[];
  /** The offset of the next page, or null when this was the last. */
  readonly next: number | null;
}

const CHUNK = 200;

export class HistoryStore {
  constructor(
    readonly redis: HistoryRedis,
    readonly prefix: string,
  ) {
    if (!defined.has(redis)) {
      redis.defineCommand('pipescalerHistoryAppend', { numberOfKeys: 1, lua: APPEND_SCRIPT });
      defined.add(redis);
    }
  }

  key(pipe: string): string {
    return `${this.prefix}:ps:history:${pipe}`;
  }

  /** Stores one outcome; true when it collapsed into the newest entry. */
  async append(o: Outcome, limits: HistoryLimits): Promise<boolean> {
    const collapsed = await this.redis.pipescalerHistoryAppend(
      this.key(o.pipe),
      identityOf(o),
      encodeEntry(o),
      time36(o.at),
      o.requestId ?? '',
      String(o.at - limits.retentionMs),
      String(limits.maxEntries),
      String(limits.retentionMs),
    );
    return collapsed === 1;
  }

  /**
   * One pipe's entries, newest first, read in chunks until the page is full or a whole chunk is
   * older than `since` (replicas' clocks and writes interleave, so one older entry is no end).
   */
  async read(pipe: string, q: HistoryQuery = {}): Promise<HistoryPage> {
    const limit = q.limit ?? Number.POSITIVE_INFINITY;
    const skip = q.offset ?? 0;
    const wanted = q.outcomes && q.outcomes.length > 0 ? new Set(q.outcomes) : null;
    const entries: HistoryEntry[] = [];
    let matched = 0;
    for (let start = 0; ; start += CHUNK) {
      const raw = await this.redis.lrange(this.key(pipe), start, start + CHUNK - 1);
      let recent = false;
      for (const s of raw) {
        const e = decodeEntry(pipe, s);
        if (e === null) continue;
        if (q.since !== undefined && e.last < q.since) continue;
        recent = true;
        if (wanted && !wanted.has(e.outcome)) continue;
        if (matched++ < skip) continue;
        if (entries.length >= limit) return { entries, next: skip + entries.length };
        entries.push(e);
      }
      if (raw.length < CHUNK || !recent) return { entries, next: null };
    }
  }

  /** Bytes Redis uses for one pipe's history (MEMORY USAGE), for the bench. */
  async bytes(pipe: string): Promise<number> {
    return ((await this.redis.call('MEMORY', 'USAGE', this.key(pipe), 'SAMPLES', '0')) as number | null) ?? 0;
  }
}
