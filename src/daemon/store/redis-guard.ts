// Redis losing the daemon's state must not be silent. A Redis restarted empty (no persistence, a
// failover to an empty replica, a FLUSHALL) drops every pause and the cooldown history: a pipe
// paused for an incident was scaled right after. And an eviction policy other than noeviction
// lets Redis drop BullMQ's and our keys under memory pressure.
//
// - A marker key (`<prefix>:ps:marker`) is written at start and checked at every tick; when it is
//   gone, the state was lost. The replica that notices writes it again with the instant of the
//   loss, so every other replica sees the new marker and holds too.
// - maxmemory-policy is read at start (CONFIG GET; a server that refuses CONFIG, as managed ones
//   do, is let through with a warning) and again at every tick while it is wrong.
// While either holds, scaling is held (evaluations decide and record, nothing is sent), the
// 'redis:state' event drives a metric, an error log line and /readyz. A loss is over once every
// configured pipe has been read again (or its read failed) after it; a policy once it is noeviction.
// The replica that finds it over writes that instant into the marker (`rebuiltAt`): every replica,
// and one started later, then knows the span of the last loss, which the window verdicts around it
// are judged by (verdicts.ts: what was sent and read before the loss is gone, nothing was sent
// while it was held).
import type { Result } from 'ioredis';
import { z } from 'zod';
import type { StateLoss } from '../../policy/index.js';
import { defineLua } from './lua.js';
import { isCluster, type RedisClient } from './redis-connection.js';
import type { DaemonLogger } from '../model/logger.js';
import type { DaemonEmitter, StateLossCause } from '../model/events.js';
import type { redisKeys } from './redis-keys.js';
import { fieldValue, parseStored } from '../model/record-fields.js';

const MarkerSchema = z.object({
  since: z.number(),
  /** Set when a replica found the marker gone: the instant of the loss. */
  lostAt: z.number().optional(),
  /** Set when a replica found every pipe read again after the loss at `lostAt`. */
  rebuiltAt: z.number().optional(),
  /** Written by a daemon on the embedded cloud: the state is the demo's, which the next demo
   *  start may wipe (demo-state.ts). */
  demo: z.literal(true).optional(),
});
type Marker = z.infer<typeof MarkerSchema>;

/**
 * The state a marker's text names, "<since>/<lostAt>" (lostAt '' when none): what a loss changes
 * and the end of its hold (rebuiltAt) does not. '' for a text that does not parse, or holds an
 * instant that is no whole number (not checked). state-scripts.ts computes the same in Lua.
 */
export function stateOfMarker(text: string): string {
  const m = parseStored(MarkerSchema, text);
  if (m === null || !Number.isSafeInteger(m.since)) return '';
  if (m.lostAt !== undefined && !Number.isSafeInteger(m.lostAt)) return '';
  return `${m.since}/${m.lostAt ?? ''}`;
}

/** The instant of the loss a marker's text records (the tick that found the marker gone), or null:
 *  work of an earlier tick, enqueued before the loss, belongs to the state that was lost. */
export function lossInMarker(text: string): number | null {
  return parseStored(MarkerSchema, text)?.lostAt ?? null;
}

/** Whether a marker's text says the prefix's state is the embedded demo's. */
export function isDemoMarker(text: string): boolean {
  return parseStored(MarkerSchema, text)?.demo === true;
}

// The marker's `rebuiltAt` is written only over the marker of the loss it ends: a replica that
// found the marker gone again meanwhile has written a new one, which must stay.
const MARKER_REBUILT_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** MARKER_REBUILT_SCRIPT: the marker; the text it must still hold, the text to write. 1 written. */
    pipescalerMarkerRebuilt(marker: string, expected: string, next: string): Result<number, Context>;
  }
}

export class RedisGuard {
  private lostAt: number | null = null;
  /** The last loss this replica knows of (kept after the hold ends), or null. */
  private loss: StateLoss | null = null;
  private policy: string | null = null;
  private policyChecked = false;
  private lastCause: StateLossCause | null | undefined = undefined;
  private known: string | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReturnType<typeof redisKeys>,
    private readonly emitter: DaemonEmitter,
    private readonly logger: DaemonLogger,
    private readonly now: () => number,
    /** A daemon on the embedded cloud: its marker says so. */
    private readonly demo = false,
  ) {
    defineLua(redis, [{ name: 'pipescalerMarkerRebuilt', numberOfKeys: 1, lua: MARKER_REBUILT_SCRIPT }]);
  }

  /** The span of the last loss of the state (its end null while held for it), or null. */
  lastLoss(): StateLoss | null {
    // held here still (another replica may have found every pipe read already): not over
    return this.loss !== null && this.lostAt !== null ? { from: this.loss.from, to: null } : this.loss;
  }

  /** The cause scaling is held for, or null. */
  held(): StateLossCause | null {
    if (this.lostAt !== null) return 'data_lost';
    if (this.policy !== null) return 'eviction_policy';
    return null;
  }

  async start(): Promise<void> {
    const fresh = JSON.stringify({ since: this.now(), ...this.tag() } satisfies Marker);
    await this.redis.set(this.keys.marker, fresh, 'NX');
    await this.readMarker();
    await this.checkPolicy();
    this.report(null);
  }

  /** At every tick (`at`, its instant), before its evaluations are enqueued. A loss it finds is of
   *  that instant: the tick's own evaluations are of the state after it, an earlier tick's before. */
  async check(pipes: readonly string[], at = this.now()): Promise<void> {
    await this.readMarker(at);
    if (this.policy !== null || !this.policyChecked) await this.checkPolicy();
    if (this.lostAt !== null && (await this.rebuilt(pipes, this.lostAt))) {
      this.logger.info(
        { pipes: pipes.length },
        'every pipe was read again after the Redis state loss: scaling resumes',
      );
      await this.noteRebuilt(this.lostAt);
      this.lostAt = null;
    }
    this.report(pipes.length);
  }

  private async readMarker(at = this.now()): Promise<void> {
    const value = await this.redis.get(this.keys.marker);
    if (value === null) {
      const marker = JSON.stringify({ since: at, lostAt: at, ...this.tag() } satisfies Marker);
      await this.redis.set(this.keys.marker, marker);
      this.known = marker;
      this.lostAt = at;
      this.loss = { from: at, to: null };
      return;
    }
    if (value === this.known) return;
    this.known = value;
    const marker = parseStored(MarkerSchema, value);
    if (marker === null) return;
    if (marker.lostAt === undefined) return;
    const rebuilt = marker.rebuiltAt !== undefined && marker.rebuiltAt >= marker.lostAt ? marker.rebuiltAt : null;
    // another replica found the state lost: hold here too until every pipe is read again (a replica
    // not holding for a loss already over, one started since, has nothing to wait for)
    if (rebuilt === null || this.lostAt !== null) this.lostAt = Math.max(this.lostAt ?? 0, marker.lostAt);
    if (this.loss === null || marker.lostAt >= this.loss.from)
      this.loss = { from: marker.lostAt, to: rebuilt ?? (this.loss?.from === marker.lostAt ? this.loss.to : null) };
  }

  /** The hold for the loss at `lostAt` is over here: the first replica to find it says when, in the
   *  marker (a replica started later knows the span, not only the loss). */
  private async noteRebuilt(lostAt: number): Promise<void> {
    const at = this.now();
    if (this.loss?.from === lostAt && this.loss.to === null) this.loss = { from: lostAt, to: at };
    const text = this.known;
    const marker = text === null ? null : parseStored(MarkerSchema, text);
    if (text === null || marker?.lostAt !== lostAt || marker.rebuiltAt !== undefined) return;
    const next = JSON.stringify({ ...marker, rebuiltAt: at } satisfies Marker);
    if ((await this.redis.pipescalerMarkerRebuilt(this.keys.marker, text, next)) === 1) this.known = next;
  }

  private tag(): Pick<Marker, 'demo'> {
    return this.demo ? { demo: true } : {};
  }

  /** After a reconnect (a failover may have moved us to another server): read the policy again at
   *  the next tick. */
  reconnected(): void {
    this.policyChecked = false;
  }

  private async checkPolicy(): Promise<void> {
    try {
      // A cluster: every master (our keys live on one, which may move); else the server we talk to.
      const servers = isCluster(this.redis) ? this.redis.nodes('master') : [this.redis];
      let wrong: string | null = null;
      for (const server of servers) {
        const reply = (await server.call('CONFIG', 'GET', 'maxmemory-policy')) as string[];
        const value = reply[1];
        if (value !== undefined && value !== 'noeviction') wrong = value;
      }
      this.policy = wrong;
    } catch (err) {
      if (!this.policyChecked) {
        this.logger.warn(
          { err: (err as Error).message },
          'could not read maxmemory-policy (CONFIG refused): make sure it is noeviction, or Redis may drop queued jobs and state',
        );
      }
      this.policy = null;
    }
    this.policyChecked = true;
  }

  /** Every pipe read (or its read failed) at or after `since`. */
  private async rebuilt(pipes: readonly string[], since: number): Promise<boolean> {
    const CHUNK = 1_000;
    for (let i = 0; i < pipes.length; i += CHUNK) {
      const multi = this.redis.pipeline();
      for (const p of pipes.slice(i, i + CHUNK)) multi.hmget(this.keys.pipe(p), 'lastReadAt', 'lastError');
      const replies = (await multi.exec()) ?? [];
      for (const [err, fields] of replies) {
        if (err) return false;
        const [readAt, lastError] = fields as [string | null, string | null];
        // checked as the state store checks them: a field that does not parse counts as never
        const read = readAt ? fieldValue('lastReadAt', readAt) : null;
        const failed = lastError ? (fieldValue('lastError', lastError)?.at ?? null) : null;
        if (Math.max(read ?? -Infinity, failed ?? -Infinity) < since) return false;
      }
    }
    return true;
  }

  private report(pipes: number | null): void {
    const cause = this.held();
    if (cause === this.lastCause) return;
    this.lastCause = cause;
    if (cause === 'data_lost') {
      this.logger.error(
        { cause, pipes },
        "Redis lost the daemon's state (its marker key is gone: restarted empty?): pauses and overrides kept only in Redis and the cooldown history are gone; " +
          'scaling is held until every pipe has been read again. Declare lasting pauses in the config (pipes[].paused) and re-apply others with `pipescaler pause` and `pipescaler override`',
      );
    } else if (cause === 'eviction_policy') {
      this.logger.error(
        { cause, maxmemoryPolicy: this.policy },
        'Redis maxmemory-policy is not noeviction: it may drop queued jobs and state; scaling is held until it is set to noeviction',
      );
    }
    this.emitter.emit('redis:state', { lost: cause !== null, ...(cause ? { cause } : {}) });
  }
}
