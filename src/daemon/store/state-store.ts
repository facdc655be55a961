// What the daemon knows of each pipe, in Redis so every replica and the CLI share it. One hash
// per pipe, one JSON value per field, so a writer touches only the fields it owns (the evaluator
// its decision, the applier what the platform answered) without read-modify-write races.
import { defineLua } from './lua.js';
import type { RedisClient } from './redis-connection.js';
import { redisKeys } from './redis-keys.js';
import { STORE_COMMANDS } from './state-scripts.js';
import { OWED_FIELD_PREFIX, parseStored, storedText, StoredServiceSchema } from '../model/record-fields.js';
import { OperatorStore, parseOverride, parsePause } from './operator-state.js';
import {
  changedFrom,
  parseOwed,
  parseRecord,
  refOf,
  type PipeRecord,
  type OwedLine,
  type ServiceIds,
  type Snapshot,
  type StoredService,
  type StoredVerdict,
} from '../model/record.js';
import type { ServiceState } from '../../api/index.js';
import type { VerdictDue } from '../../policy/index.js';

export class StateStore {
  readonly keys: ReturnType<typeof redisKeys>;
  /** Pauses and overrides, by the pipe's identity. */
  readonly operator: OperatorStore;

  /**
   * @param onInvalid called with the fields of a pipe's record that did not parse (dropped, and
   *   the pipe read again); the daemon logs and counts them.
   */
  constructor(
    readonly redis: RedisClient,
    prefix: string,
    private readonly onInvalid: (pipe: string, fields: readonly string[]) => void = () => {},
  ) {
    this.keys = redisKeys(prefix);
    this.operator = new OperatorStore(redis, this.keys);
    defineLua(redis, STORE_COMMANDS);
  }

  async read(pipe: string): Promise<PipeRecord> {
    return this.parse(pipe, await this.redis.hgetall(this.keys.pipe(pipe)));
  }

  private parse(pipe: string, raw: Record<string, string>): PipeRecord {
    return this.parseAll(pipe, raw).rec;
  }

  private parseAll(pipe: string, raw: Record<string, string>): { rec: PipeRecord; invalid: string[] } {
    const parsed = parseRecord(raw);
    if (parsed.invalid.length > 0) this.onInvalid(pipe, parsed.invalid);
    return parsed;
  }

  /** The record, the pause and override that apply (by the pipe's identity, given its ids) and
   *  its service's last known state: what every evaluation and apply starts from, in one command
   *  (a short script) rather than four. Each command costs this process ~25 µs of CPU, which a
   *  steady tick of 10,000 pipes is bound by (bench/steady-tick.ts). */
  async snapshot(pipe: string, ids?: ServiceIds): Promise<Snapshot> {
    const ref = ids?.pipeId === undefined ? null : refOf(ids as Required<ServiceIds>);
    const [raw, own, all, service, override, marker] = await this.redis.pipescalerSnapshot(
      this.keys.pipe(pipe),
      // without a pipe id: a key nothing writes (the pipe hash's own name under another prefix)
      ref === null ? `${this.keys.pipe(pipe)}:none` : this.keys.pause(ref),
      this.keys.pauseAll,
      this.keys.services(ids?.organizationId ?? ''),
      ref === null ? `${this.keys.pipe(pipe)}:none` : this.keys.override(ref),
      this.keys.marker,
      ids?.serviceId.toLowerCase() ?? '',
    );
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const field = raw[i]; // i + 1 < length: both there
      const value = raw[i + 1];
      if (field !== undefined && value !== undefined) fields[field] = value;
    }
    const { rec, invalid } = this.parseAll(pipe, fields);
    return {
      rec,
      invalid,
      pause: parsePause(own, all),
      override: parseOverride(override),
      service: parseStored(StoredServiceSchema, service),
      marker,
      owed: parseOwed(fields),
    };
  }

  /** The service's state as last stored, or null. */
  async service(ids: ServiceIds): Promise<StoredService | null> {
    const text = await this.redis.hget(this.keys.services(ids.organizationId), ids.serviceId.toLowerCase());
    return parseStored(StoredServiceSchema, text);
  }

  /** What a services list (or a 424) said of an organization's services, at `at`, only while the
   *  marker names `state` (stateOfMarker of what the writer read: a turn's snapshot, a key check's
   *  marker; '' does not check): false refused, Redis lost that state since. */
  async writeServices(
    organizationId: string,
    services: readonly { id: string; state: ServiceState | null }[],
    at: number,
    state: string,
  ): Promise<boolean> {
    if (services.length === 0) return true;
    const key = this.keys.services(organizationId);
    const entries = services.map((s): [string, string] => [
      s.id.toLowerCase(),
      JSON.stringify({ state: s.state, at } satisfies StoredService),
    ]);
    if (state !== '')
      return (await this.redis.pipescalerWriteInState(key, this.keys.marker, state, ...entries.flat())) === 1;
    await this.redis.hset(key, Object.fromEntries(entries));
    return true;
  }

  /**
   * Write `fields`. With `state` (what the snapshot's marker named, redis-guard.ts stateOfMarker;
   * '' does not check), only while the marker still names it (one script): false when refused,
   * Redis lost that state since.
   */
  async write(pipe: string, fields: Partial<PipeRecord>, state = ''): Promise<boolean> {
    const entries = Object.entries<unknown>(fields).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return true;
    if (state !== '') {
      const args = entries.flatMap(([k, v]) => [k, storedText(v)]);
      return (await this.redis.pipescalerWriteInState(this.keys.pipe(pipe), this.keys.marker, state, ...args)) === 1;
    }
    await this.redis.hset(this.keys.pipe(pipe), Object.fromEntries(entries.map(([k, v]) => [k, storedText(v)])));
    return true;
  }

  /**
   * Write `fields` only while the record's unsettled change is the one whose id is `intent` (''
   * none): a change's intent stored before its request, its answer recorded, a read's transition
   * (one script, state-scripts.ts). With `state` (stateOfMarker of the turn's snapshot; '' does not
   * check), only while the marker still names it. False when refused: another attempt sent or
   * recorded meanwhile, or Redis lost the state the turn read (its record emptied: no `unsettled`).
   */
  async writeIfIntent(pipe: string, intent: string, fields: Partial<PipeRecord>, state = ''): Promise<boolean> {
    const args = Object.entries<unknown>(fields)
      .filter(([, v]) => v !== undefined)
      .flatMap(([k, v]) => [k, storedText(v)]);
    if (args.length === 0) return true;
    const r = await this.redis.pipescalerWriteIfIntent(this.keys.pipe(pipe), this.keys.marker, state, intent, ...args);
    return r === 1;
  }

  /**
   * A change's 200 recorded (work/turn-change.ts): `fields` and the audit line it owes (`owed`,
   * lifecycle/owed-line.ts) only while the record's unsettled change is the intent `intent` and,
   * with `state`, the marker names it, as writeIfIntent, in one script that also reads the intent's
   * landed mark when refused. `recorded`; `landed` refused, a read reported the change landed late
   * (nothing written); `owed` refused, the owed line stored alone (the read found the change on its
   * way, and the 200's line is its record); `refused` (Redis lost the state, or no record).
   */
  async recordAnswer(
    pipe: string,
    intent: string,
    fields: Partial<PipeRecord>,
    owed: OwedLine,
    state = '',
  ): Promise<'recorded' | 'landed' | 'owed' | 'refused'> {
    const args = Object.entries<unknown>(fields)
      .filter(([, v]) => v !== undefined)
      .flatMap(([k, v]) => [k, storedText(v)]);
    const r = await this.redis.pipescalerAnswer(
      this.keys.pipe(pipe),
      this.keys.marker,
      this.keys.landed(intent),
      state,
      intent,
      OWED_FIELD_PREFIX + owed.id,
      storedText(owed),
      ...args,
    );
    return r === 1 ? 'recorded' : r === 2 ? 'landed' : r === 3 ? 'owed' : 'refused';
  }

  /** An owed audit line taken by a turn (`taken`, its dueAt moved on) while it is still `owed` as
   *  read (its dueAt): false when gone or taken by another turn since. */
  async takeOwed(pipe: string, owed: OwedLine, taken: OwedLine): Promise<boolean> {
    const field = OWED_FIELD_PREFIX + owed.id;
    return (
      (await this.redis.pipescalerOwed(this.keys.pipe(pipe), field, String(owed.dueAt), 'take', storedText(taken))) ===
      1
    );
  }

  /** An owed audit line deleted once its line is written, while it is still as its holder stored or
   *  took it: false when gone, or taken by another turn since. Called right after the line, with
   *  nothing awaited in between: the command is on its way to Redis when the call returns. */
  async clearOwed(pipe: string, owed: OwedLine): Promise<boolean> {
    const field = OWED_FIELD_PREFIX + owed.id;
    return (await this.redis.pipescalerOwed(this.keys.pipe(pipe), field, String(owed.dueAt), 'clear', '')) === 1;
  }

  /**
   * Write a decision of the tick at `tickAt` unless a newer tick's decision is stored already
   * (compare-and-set in one script): a stalled evaluation of an older tick that finishes late must
   * not overwrite a newer desire (seen: 8 -> 2 -> 8 after a window ended). False when refused.
   * With `state` (the state the snapshot's marker named, redis-guard.ts stateOfMarker), refused as
   * `state_lost` when the marker names another: Redis lost the state the decision was made from.
   */
  async writeDecision(
    pipe: string,
    tickAt: number,
    fields: Partial<PipeRecord>,
    base?: PipeRecord,
    state = '',
  ): Promise<boolean | 'state_lost'> {
    const write = async (f: Partial<PipeRecord>, since: string): Promise<number> => {
      const entries = Object.entries<unknown>({ ...f, decidedAt: tickAt }).filter(([, v]) => v !== undefined);
      const args = entries.flatMap(([k, v]) => [k, storedText(v)]);
      return await this.redis.pipescalerWriteDecision(
        this.keys.pipe(pipe),
        this.keys.marker,
        String(tickAt),
        since,
        state,
        ...args,
      );
    };
    const outcome = (n: number): boolean | 'state_lost' => (n === 3 ? 'state_lost' : n === 1);
    if (base === undefined) return outcome(await write(fields, ''));
    // Only what differs from the record it was decided from, as long as no other decision was
    // stored since (the record's count of them); else the whole decision, as before.
    const written = await write(changedFrom(base, fields), String(base.decisions));
    return written === 2 ? outcome(await write(fields, '')) : outcome(written);
  }

  /**
   * A window start's verdict, once fleet-wide (one script): `open` stores it as due, `close`
   * gives the due one, `exclude` gives one at once. False when another replica did it first (or
   * a later start is already due or given), or, with `state` (stateOfMarker), when the marker names
   * another state (Redis lost the one the evaluation read).
   */
  async verdict(
    pipe: string,
    action: 'open' | 'close' | 'exclude',
    value: VerdictDue | StoredVerdict,
    state = '',
  ): Promise<boolean> {
    const r = await this.redis.pipescalerVerdict(
      this.keys.pipe(pipe),
      this.keys.marker,
      action,
      String(value.boundary),
      storedText(value),
      state,
    );
    return r === 1;
  }

  /** Forget everything known of a pipe (its name now points at another pipe). */
  async reset(pipe: string): Promise<void> {
    await this.redis.del(this.keys.pipe(pipe));
  }

  /** Atomic counter fields (authFailures, failures, drifts) so concurrent replicas don't lose a count.
   *  With `state` (stateOfMarker), only while the marker still names it: null when refused. */
  async increment(pipe: string, field: 'authFailures' | 'failures' | 'drifts', state = ''): Promise<number | null> {
    if (state === '') return this.redis.hincrby(this.keys.pipe(pipe), field, 1);
    const n = await this.redis.pipescalerIncrementInState(this.keys.pipe(pipe), this.keys.marker, state, field);
    return n < 0 ? null : n;
  }

  /** Parking is cleared on reload: the operator may have fixed the key. */
  async unpark(pipes: readonly string[]): Promise<void> {
    if (pipes.length === 0) return;
    const multi = this.redis.multi();
    for (const p of pipes) multi.hset(this.keys.pipe(p), { parked: 'null', authFailures: '0' });
    await multi.exec();
  }
}
