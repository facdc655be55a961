// What an operator sets on a pipe (a pause, an override; an automatic `manual` override of
// onDrift: hold or adoptAsFloor), stored under the pipe's identity (organization, service, pipe
// id), not its config name: a rename keeps it, a name pointed at another pipe does not inherit it.
// An index set names every identity that has some, so state whose pipe left the config (an
// orphan) is listed and lifted without scanning the keyspace (a Cluster scan sees one node only).
import type { Result } from 'ioredis';
import type { Override } from '../../policy/index.js';
import type { RedisClient } from './redis-connection.js';
import type { redisKeys } from './redis-keys.js';
import { z } from 'zod';
import { keysStartingWith } from './redis-connection.js';
import { parseStored, StoredOverride, StoredPause, storedText } from '../model/record-fields.js';
import { refOf, type PauseFlag, type PipeIdentity, type StoredOverrideValue } from '../model/record.js';
import { defineLua } from './lua.js';
import { STATE_OF_MARKER } from './state-scripts.js';

// An override set by the daemon (onDrift's `manual`), only while the marker KEYS[3] names the state
// ARGV[1] the turn read (state-scripts.ts): {1, the override it replaced or ''}, {0, ''} refused.
const OVERRIDE_IN_STATE_SCRIPT = `${STATE_OF_MARKER}
if stateOf(KEYS[3]) ~= ARGV[1] then return {0, ''} end
local previous = redis.call('GET', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
return {1, previous or ''}
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** OVERRIDE_IN_STATE_SCRIPT: the override's key, the operator index, the marker; the state, the
     *  override's JSON, its expiry in ms, the pipe's identity. */
    pipescalerOverrideInState(
      override: string,
      index: string,
      marker: string,
      state: string,
      json: string,
      ttlMs: string,
      ref: string,
    ): Result<[number, string], Context>;
  }
}

/** Operator state whose pipe is no longer in the config. */
export interface Orphan {
  readonly ref: string;
  /** The pipe's name when the state was set. */
  readonly name: string | null;
  readonly pause: PauseFlag | null;
  readonly override: StoredOverrideValue | null;
}

/** An override's key outlives its end by this much, so the daemon still sees it ended (its event)
 *  and status can say so; the decision ignores it from `until` on. */
export const OVERRIDE_KEPT_MS = 3_600_000;

/** The pause that applies: the pipe's own, else the fleet's. An unreadable flag still pauses
 *  (with that as its reason): a pause must never be lost to a bad value. */
export function parsePause(own: string | null, all: string | null): PauseFlag | null {
  const flag = (text: string, scope: 'pipe' | 'all'): PauseFlag => {
    const parsed = parseStored(StoredPause, text);
    if (parsed === null) return { reason: 'unreadable pause flag in Redis', scope };
    return { reason: parsed.reason, ...(parsed.until !== undefined ? { until: parsed.until } : {}), scope };
  };
  if (own) return flag(own, 'pipe');
  if (all) return flag(all, 'all');
  return null;
}

/** A stored override, or null. An unreadable one is dropped: unlike a pause, an override moves
 *  a pipe, and nothing may move it on a value nobody can vouch for. */
export function parseOverride(text: string | null): StoredOverrideValue | null {
  return parseStored(StoredOverride, text);
}

export class OperatorStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReturnType<typeof redisKeys>,
  ) {
    defineLua(redis, [{ name: 'pipescalerOverrideInState', numberOfKeys: 3, lua: OVERRIDE_IN_STATE_SCRIPT }]);
  }

  /** The pause that applies to a pipe: its own, or the fleet-wide one. */
  async pause(pipe: PipeIdentity): Promise<PauseFlag | null> {
    const [own, all] = await this.redis.mget(this.keys.pause(refOf(pipe)), this.keys.pauseAll);
    return parsePause(own ?? null, all ?? null);
  }

  /** Pause one pipe (or all with null); Redis expires the flag at `until`. */
  async setPause(pipe: PipeIdentity | null, flag: { reason: string; until?: number }): Promise<void> {
    const multi = this.redis.multi();
    if (pipe === null) {
      if (flag.until !== undefined) multi.set(this.keys.pauseAll, storedText(flag), 'PXAT', flag.until);
      else multi.set(this.keys.pauseAll, storedText(flag));
    } else {
      const ref = refOf(pipe);
      const value = storedText({ ...flag, pipe: pipe.name });
      if (flag.until !== undefined) multi.set(this.keys.pause(ref), value, 'PXAT', flag.until);
      else multi.set(this.keys.pause(ref), value);
      multi.sadd(this.keys.operatorIndex, ref);
    }
    await multi.exec();
  }

  /** Resume one pipe, or with null every pipe (the fleet flag and each listed pipe's own). Says
   *  what was paused: the fleet flag, and the names of the pipes whose own flag was there. */
  async clearPause(
    pipe: PipeIdentity | null,
    pipes: readonly PipeIdentity[] = [],
  ): Promise<{ all: boolean; pipes: string[] }> {
    const targets = pipe === null ? pipes : [pipe];
    const multi = this.redis.multi();
    if (pipe === null) multi.del(this.keys.pauseAll);
    for (const p of targets) multi.del(this.keys.pause(refOf(p)));
    const deleted = ((await multi.exec()) ?? []).map(([err, n]) => (err ? 0 : Number(n)));
    const own = pipe === null ? deleted.slice(1) : deleted;
    return { all: pipe === null && deleted[0] === 1, pipes: targets.filter((_, i) => own[i] === 1).map((p) => p.name) };
  }

  /** The pipe's override (ended ones too, until their key expires), or null. */
  async override(pipe: PipeIdentity): Promise<StoredOverrideValue | null> {
    return parseOverride(await this.redis.get(this.keys.override(refOf(pipe))));
  }

  /**
   * Set the pipe's override, replacing any older one in the same command: there is no instant
   * at which neither holds. The key expires OVERRIDE_KEPT_MS after `until`, counted from `now`
   * (the caller's clock: Redis' own may differ from a test's).
   */
  async setOverride(pipe: PipeIdentity, override: Override, now: number): Promise<StoredOverrideValue | null> {
    return (await this.setOverrideInState(pipe, override, now, '')).previous;
  }

  /**
   * setOverride, with `state` (stateOfMarker of the daemon's snapshot; '' does not check) only while
   * the marker still names it: an override the daemon sets for what it read never goes into a state
   * Redis lost since. `set` false when refused.
   */
  async setOverrideInState(
    pipe: PipeIdentity,
    override: Override,
    now: number,
    state: string,
  ): Promise<{ set: boolean; previous: StoredOverrideValue | null }> {
    const ref = refOf(pipe);
    const ttl = Math.max(1, override.until - now) + OVERRIDE_KEPT_MS;
    if (state !== '') {
      const json = storedText({ ...override, pipe: pipe.name });
      const [set, previous] = await this.redis.pipescalerOverrideInState(
        this.keys.override(ref),
        this.keys.operatorIndex,
        this.keys.marker,
        state,
        json,
        String(ttl),
        ref,
      );
      return { set: set === 1, previous: parseOverride(previous === '' ? null : previous) };
    }
    const [[, previous] = [null, null]] =
      (await this.redis
        .multi()
        .set(this.keys.override(ref), storedText({ ...override, pipe: pipe.name }), 'PX', ttl, 'GET')
        .sadd(this.keys.operatorIndex, ref)
        .exec()) ?? [];
    return { set: true, previous: parseOverride(typeof previous === 'string' ? previous : null) };
  }

  /** Cancel the pipe's override; the one that was there (null: none). */
  async cancelOverride(pipe: PipeIdentity): Promise<StoredOverrideValue | null> {
    return parseOverride(await this.redis.getdel(this.keys.override(refOf(pipe))));
  }

  /** Every override of the config's pipes, by name (ended ones included until their key expires). */
  async overrides(pipes: readonly PipeIdentity[]): Promise<{ pipe: string; override: StoredOverrideValue }[]> {
    if (pipes.length === 0) return [];
    const texts = await this.redis.mget(...pipes.map((p) => this.keys.override(refOf(p))));
    return pipes.flatMap((p, i) => {
      const o = parseOverride(texts[i] ?? null);
      return o ? [{ pipe: p.name, override: o }] : [];
    });
  }

  /** Operator state of pipes not in `pipes` (by identity). Index entries whose keys all expired are dropped. */
  async orphans(pipes: readonly PipeIdentity[]): Promise<Orphan[]> {
    const known = new Set(pipes.map(refOf));
    const refs = (await this.redis.smembers(this.keys.operatorIndex)).sort();
    const out: Orphan[] = [];
    const gone: string[] = [];
    for (const ref of refs) {
      const [pauseText, overrideText] = await this.redis.mget(this.keys.pause(ref), this.keys.override(ref));
      if (!pauseText && !overrideText) {
        gone.push(ref);
        continue;
      }
      if (known.has(ref)) continue;
      const pause = pauseText ? parsePause(pauseText, null) : null;
      const override = parseOverride(overrideText ?? null);
      const name = override?.pipe ?? parseStored(StoredPause, pauseText ?? null)?.pipe ?? null;
      out.push({ ref, name, pause, override });
    }
    if (gone.length > 0) await this.redis.srem(this.keys.operatorIndex, ...gone);
    return out;
  }

  /** Lift every orphan's pause and override; what was lifted. */
  async clearOrphans(pipes: readonly PipeIdentity[]): Promise<Orphan[]> {
    const orphans = await this.orphans(pipes);
    if (orphans.length === 0) return [];
    const multi = this.redis.multi();
    for (const o of orphans) multi.del(this.keys.pause(o.ref), this.keys.override(o.ref));
    multi.srem(this.keys.operatorIndex, ...orphans.map((o) => o.ref));
    await multi.exec();
    return orphans;
  }

  /**
   * Pauses stored by an older version under the pipe's name move to its identity (their expiry
   * kept). Run at start; a pause already under the identity wins. A name the config no longer has
   * moves to the identity its pipe's record last named (`ref`): a pipe renamed across the upgrade
   * stays paused, and one that left the config is an orphan (status lists it, resume --orphaned
   * lifts it). Without a record naming one (the pipe was never read) it stays where it was.
   */
  async migrateNamedPauses(pipes: readonly PipeIdentity[]): Promise<string[]> {
    const moved = await this.migrateConfigNames(pipes);
    const known = new Set(pipes.map((p) => p.name));
    const legacy = this.keys.legacyPause('');
    for (const key of await keysStartingWith(this.redis, legacy)) {
      const name = key.slice(legacy.length);
      if (known.has(name)) continue;
      const ref = parseStored(z.string(), await this.redis.hget(this.keys.pipe(name), 'ref'));
      const text = await this.redis.get(key);
      const flag = parseStored(StoredPause, text);
      if (ref === null || flag === null) continue;
      // SET NX: an identity's own pause wins; the name goes with it, for the orphan's listing
      const ttl = await this.redis.pttl(key);
      const value = storedText({ ...flag, pipe: flag.pipe ?? name });
      const multi = this.redis.multi();
      if (ttl > 0) multi.set(this.keys.pause(ref), value, 'PX', ttl, 'NX');
      else multi.set(this.keys.pause(ref), value, 'NX');
      await multi.del(key).sadd(this.keys.operatorIndex, ref).exec();
      moved.push(name);
    }
    return moved;
  }

  private async migrateConfigNames(pipes: readonly PipeIdentity[]): Promise<string[]> {
    const moved: string[] = [];
    for (const p of pipes) {
      const legacy = this.keys.legacyPause(p.name);
      const text = await this.redis.get(legacy);
      if (text === null) continue;
      const ref = refOf(p);
      await this.redis
        .multi()
        .renamenx(legacy, this.keys.pause(ref))
        .del(legacy)
        .sadd(this.keys.operatorIndex, ref)
        .exec();
      moved.push(p.name);
    }
    return moved;
  }
}
