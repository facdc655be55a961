// Each API key checks in with the platform when it has had no successful answer for api.checkEvery
// (default 1 min): one services list of an organization of its pipes, the cheapest read there is
// (one request for a whole organization, and its answer refreshes the services' states that
// changes wait on). It takes a unit of the key's read share first; with none left it is skipped,
// never queued, so it cannot cause a 429; and a key with turns waiting in its queue does not check,
// so it cannot take the unit a waiting change needs. A key whose pipes are busy never checks: its
// own calls answer. A quiet key, whose reads a long reconcile period spaces out by
// many minutes, is still heard from every minute, so an outage shows within one: its failure
// sets pipescaler_api_last_failure_timestamp_seconds, its success the last success, and /readyz
// follows (readiness.ts). Each replica checks for itself, so its own metrics and /readyz stay true.
// A check the platform refuses (401: a wrong or rotated key; 403: no services list for it) is said
// at once, in the log, Redis (for status), /readyz and a metric (key-auth.ts), not taken for an
// answer that proves the key works.
import { isApiError, type ApiClient } from '../../api/index.js';
import { describeRefusal, isRejection, writeKeyRefusal, type KeyRefusal } from '../store/key-auth.js';
import type { Config } from '../../config/index.js';
import type { DaemonEmitter } from '../model/events.js';
import type { DaemonLogger } from '../model/logger.js';
import type { StateStore } from '../store/state-store.js';
import { stateOfMarker } from '../store/redis-guard.js';
import type { BudgetSend } from './budget.js';
import { UnitExpired, writeCheck } from './spend.js';
import type { KeyLane } from './lane.js';

export const DEFAULT_CHECK_EVERY_MS = 60_000;

/** The check interval of a config; 0 turns checks off. */
export function checkEveryMs(config: Pick<Config, 'api'>): number {
  return config.api.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS;
}

/** How often due checks are looked for: a quarter of the interval, at most 5 s (a local comparison). */
export function checkPollMs(everyMs: number): number {
  return Math.max(50, Math.min(5_000, Math.floor((everyMs || DEFAULT_CHECK_EVERY_MS) / 4)));
}

/** What one check did, as the `api:check` event and pipescaler_api_checks_total{result} say. */
export type CheckResult = 'ok' | 'failed' | 'no_budget';

export interface KeyChecksOptions {
  /** What a check needs of the daemon (a slice of the processors' context). */
  readonly ctx: {
    config(): Config;
    readonly emitter: DaemonEmitter;
    readonly logger: DaemonLogger;
    now(): number;
    readonly store: StateStore;
  };
  readonly lane: (keyName: string) => KeyLane | undefined;
  /** Wall clock of the intervals (epoch ms); default Date.now. */
  readonly clock?: () => number;
}

export class KeyChecks {
  readonly #lastOk = new Map<string, number>();
  readonly #lastTry = new Map<string, number>();
  readonly #inflight = new Set<string>();
  /** The status each key's last refused check had, until a 2xx of the key (this replica's view). */
  readonly #refusals = new Map<string, number>();
  /** Keys whose list the platform refuses (403, 404): not asked again under this config. */
  #refused = new Set<string>();
  #refusedFor: Config | null = null;
  /** Keys checked as last told by `api:checking` (null: not yet). */
  #checking: number | null = null;
  #timer: NodeJS.Timeout | null = null;
  readonly #clock: () => number;
  readonly #started: number;

  constructor(private readonly o: KeyChecksOptions) {
    this.#clock = o.clock ?? Date.now;
    this.#started = this.#clock();
  }

  /**
   * Follow a key's client: any 2xx it gets is a contact, and puts the key's next check off. The
   * first call of it the platform refuses says so at once, once for the key (not a minute later at
   * its check, nor once per pipe): a 401 is the key refused; a 403 of a pipe's call, that the key
   * may not act on that pipe (a 403 of the services list is the check's own, #list).
   */
  watch(client: ApiClient, keyName: string): void {
    client.events.on('request', ({ status, code, operation }) => {
      if (status === 401) {
        void this.#say(keyName, { status, code: code ?? 'API_UNAUTHORIZED', at: this.o.ctx.now() });
        return;
      }
      if (status === 403 && operation !== 'listServices') {
        this.#forbidden(keyName, code ?? 'API_FORBIDDEN', operation);
        return;
      }
      if (status === null || status < 200 || status >= 300) return;
      this.#lastOk.set(keyName, this.#clock());
      this.#forbiddenSaid.delete(keyName);
      if (this.#refusals.has(keyName)) void this.#say(keyName, null);
    });
  }

  /** Keys whose pipe calls were refused 403, said once until a 2xx of the key. */
  readonly #forbiddenSaid = new Set<string>();

  #forbidden(key: string, code: string, operation: string): void {
    if (this.#forbiddenSaid.has(key)) return;
    this.#forbiddenSaid.add(key);
    const keyId = this.#keyId(key);
    this.o.ctx.logger.warn(
      { key, keyId, status: 403, code, operation },
      `key ${key} (keyId ${keyId}): the platform refuses it a pipe's call (403 ${code}, ${operation}): the key may not act on that pipe; its pipes' lines say which, and each is parked after repeated refusals`,
    );
  }

  /** The key's id as its lane sends it (the demo's stands in for an empty one on the embedded cloud). */
  #keyId(key: string): string {
    return this.o.lane(key)?.keyId ?? this.o.ctx.config().api.keys[key]?.keyId ?? '';
  }

  /** Look for due checks every few seconds (a local comparison; a request only when one is due). */
  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.checkDue(), checkPollMs(checkEveryMs(this.o.ctx.config())));
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Check every key that is due: no 2xx and no check of its own for api.checkEvery. */
  async checkDue(): Promise<Map<string, CheckResult>> {
    const config = this.o.ctx.config();
    const every = checkEveryMs(config);
    const done = new Map<string, CheckResult>();
    if (every <= 0) return done;
    if (this.#refusedFor !== config) {
      this.#refused = new Set();
      this.#refusedFor = config;
    }
    this.#tellChecking(config);
    const now = this.#clock();
    const due: Promise<void>[] = [];
    for (const [keyName, organizationId] of organizationsByKey(config)) {
      if (this.#inflight.has(keyName) || this.#refused.has(keyName)) continue;
      if (now - (this.#lastOk.get(keyName) ?? this.#started) < every) continue;
      if (now - (this.#lastTry.get(keyName) ?? this.#started) < every) continue;
      const lane = this.o.lane(keyName);
      if (!lane) continue;
      this.#inflight.add(keyName);
      due.push(
        this.#checkUnlessQueued(keyName, lane, organizationId, now)
          .then((r) => {
            if (r !== null) done.set(keyName, r);
          })
          .finally(() => this.#inflight.delete(keyName)),
      );
    }
    await Promise.all(due);
    this.#tellChecking(config);
    return done;
  }

  /** A key refused the list no longer checks in: with none left, /readyz must not wait for a check
   *  (readiness.ts falls back to the reconcile interval, when the pipes' own reads answer). */
  #tellChecking(config: Config): void {
    let keys = 0;
    for (const key of organizationsByKey(config).keys()) if (!this.#refused.has(key)) keys++;
    if (keys === this.#checking) return;
    this.#checking = keys;
    this.o.ctx.emitter.emit('api:checking', { keys });
  }

  /**
   * A key with turns waiting in (or running on) its queue is not quiet: they answer soon, and the
   * unit a check took outside the queue could be the one a waiting change needed (reads only go
   * when no change waits). Such a key is looked at again at the next poll.
   */
  async #checkUnlessQueued(
    keyName: string,
    lane: KeyLane,
    organizationId: string,
    now: number,
  ): Promise<CheckResult | null> {
    let queued = 0;
    try {
      queued = await lane.queue.getJobCountByTypes('wait', 'prioritized', 'active');
    } catch {
      // Redis did not answer: neither will the budget (no request goes out).
    }
    if (queued > 0) return null;
    this.#lastTry.set(keyName, now);
    return this.check(lane, organizationId);
  }

  /** One check of one key: a unit of its read share, then the services list. */
  async check(lane: KeyLane, organizationId: string): Promise<CheckResult> {
    const { ctx } = this.o;
    const key = lane.keyName;
    let unit: BudgetSend;
    // The state Redis holds now: the list's answer is stored only while it still does (read before
    // the unit is taken, so that nothing comes between the budget's mark and the write).
    let state: string | null = null;
    try {
      const marker = await ctx.store.redis.get(ctx.store.keys.marker);
      state = marker === null ? null : stateOfMarker(marker);
      const taken = await lane.budget.take('read');
      // the list goes out now: marked as sent (a stale unit exchanged, or none: skipped)
      unit = taken.waitMs === 0 ? await lane.budget.send(taken.at, 'read') : { ...taken, writeBy: -Infinity };
    } catch (err) {
      // Redis did not answer (the marker or the budget): no request goes out.
      ctx.logger.debug({ key, err: (err as Error).message }, 'API key check skipped: its budget could not be read');
      unit = { waitMs: 1, at: 0, writeBy: -Infinity };
    }
    const result = unit.waitMs !== 0 ? 'no_budget' : await this.#list(lane, organizationId, unit, state);
    ctx.emitter.emit('api:check', { key, result });
    return result;
  }

  /** `state`: what the marker named before the check (null: Redis had lost the daemon's state). */
  async #list(lane: KeyLane, organizationId: string, unit: BudgetSend, state: string | null): Promise<CheckResult> {
    const { ctx } = this.o;
    const takenAt = unit.at;
    try {
      // written only while the budget's mark holds (spend.ts UnitExpired), else skipped
      const res = await lane.client.listServices(organizationId, undefined, {
        retry: false,
        beforeSend: writeCheck(lane.budget, unit),
      });
      ctx.emitter.emit('api:contact', { at: ctx.now() });
      await lane.budget.observe(takenAt, res.rateLimit).catch(() => {});
      // Not into a state Redis lost since (emptied, or restored from an older snapshot), as a
      // turn's writes; with the marker gone, not at all (the tick that notices the loss reads again).
      if (state !== null)
        await ctx.store
          .writeServices(
            organizationId,
            res.result.map((s) => ({ id: s.id.toLowerCase(), state: s.state ?? null })),
            ctx.now(),
            state,
          )
          .catch(() => {});
      return 'ok';
    } catch (err) {
      if (err instanceof UnitExpired) {
        ctx.emitter.emit('budget:unit-expired', { key: lane.keyName });
        return 'no_budget';
      }
      if (!isApiError(err)) {
        ctx.logger.debug({ key: lane.keyName, err: (err as Error).message }, 'API key check failed');
        return 'failed';
      }
      await lane.budget.observe(takenAt, err.rateLimit, err.code === 'API_RATE_LIMITED').catch(() => {});
      if (err.status !== undefined) ctx.emitter.emit('api:contact', { at: ctx.now() });
      if (err.status === 401 || err.status === 403)
        await this.#say(lane.keyName, { status: err.status, code: err.code, at: ctx.now() });
      if (err.status === 403 || err.status === 404) {
        // A key that may not list services: its pipes' own calls are its contact.
        this.#refused.add(lane.keyName);
        if (err.status === 404)
          ctx.logger.warn(
            { key: lane.keyName, code: err.code },
            'API key check: the platform does not know the organization of its first pipe; no more checks of this key until a reload',
          );
      }
      return 'failed';
    }
  }

  /** A key's refusal, or its end: logged, stored for status and emitted, on each change only. */
  async #say(key: string, refusal: KeyRefusal | null): Promise<void> {
    const { ctx } = this.o;
    if ((this.#refusals.get(key) ?? null) === (refusal?.status ?? null)) return;
    if (refusal === null) this.#refusals.delete(key);
    else this.#refusals.set(key, refusal.status);
    // said first: the pipes' own failed calls come right after (their lines point here)
    const keyId = this.#keyId(key);
    if (refusal === null) ctx.logger.info({ key, keyId }, `API key ${key} (keyId ${keyId}) is answered again`);
    else {
      const line = { key, keyId, status: refusal.status, code: refusal.code, pipes: pipesOf(ctx.config(), key) };
      if (isRejection(refusal)) ctx.logger.error(line, describeRefusal(key, refusal, keyId));
      else ctx.logger.warn(line, describeRefusal(key, refusal, keyId));
    }
    ctx.emitter.emit(
      'api:key',
      refusal === null ? { key, refused: false } : { key, refused: true, status: refusal.status, code: refusal.code },
    );
    await writeKeyRefusal(ctx.store.redis, ctx.store.keys, key, refusal).catch((err: unknown) =>
      ctx.logger.debug({ key, err: (err as Error).message }, 'could not store the API key refusal'),
    );
  }
}

/** How many pipes of the config use the key. */
function pipesOf(config: Config, key: string): number {
  return config.pipes.filter((p) => p.key === key).length;
}

/** Each API key with pipes, and the organization of its first pipe. */
function organizationsByKey(config: Config): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of config.pipes) if (!out.has(p.key)) out.set(p.key, p.organizationId);
  return out;
}
