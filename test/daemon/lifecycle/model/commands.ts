// The model's commands (fast-check), what each does to the platform, Redis or the daemon, and the
// arbitraries a generated sequence draws them from.
import fc from 'fast-check';
import { expect } from 'vitest';
import { DEMO, drained } from '../../helpers.js';
import { startDaemon } from './daemon.js';
import { settle } from './invariants.js';
import { noteCarriedOut } from './proxy.js';
import {
  CUT_AFTER,
  CUT_BEFORE,
  CUT_LATE,
  LAND_LATE_MS,
  MIN,
  PIPES,
  STALL,
  STALL_LATE,
  STATES,
  WINDOW_STARTS,
  configOf,
  redis,
  stats,
} from './setup.js';
import { lost, type Real } from './state.js';

export type Cmd = fc.AsyncCommand<object, Real>;
const always = () => true;

export class Tick implements Cmd {
  constructor(readonly ms: number) {}
  check = always;
  async run(_m: object, real: Real) {
    real.clock += this.ms;
    real.wipeUnseen = 0;
    await landLate(real);
    await real.daemon.tick(real.clock);
    await settle(real);
  }
  toString = () => `tick(+${this.ms / 1000}s)`;
}

/**
 * The changes cut by CUT_LATE that a newer change of their pipe followed: the cloud carries them
 * out now, by their own request (its Idempotency-Key), as a request its client gave up on can land
 * minutes later, after the change that replaced it. Past LAND_LATE_MS after its send, never.
 */
async function landLate(real: Real): Promise<void> {
  for (const held of real.heldLate.splice(0)) {
    if (real.clock - held.at > LAND_LATE_MS) continue;
    const { sent } = held;
    const at = real.changes.indexOf(sent);
    if (!real.changes.some((c, i) => i > at && c.id === sent.id)) {
      real.heldLate.push(held);
      continue;
    }
    const answer = await held.upstream();
    noteCarriedOut(real, sent, answer);
    if (answer.status !== 200) continue;
    stats.landedLate.carriedOut += 1;
    real.landedLate.push({ id: sent.id, key: sent.key, values: sent.values, at: held.at });
    // on its way in the cloud (propagation): the daemon cannot know it, and may send its values again
    real.tainted.add(sent.id);
  }
}

export class SetState implements Cmd {
  constructor(
    readonly id: string,
    readonly state: (typeof STATES)[number],
  ) {}
  check = always;
  async run(_m: object, real: Real) {
    real.cloud.store.pipe(this.id)!.state = this.state;
    await Promise.resolve();
  }
  toString = () => `state(${PIPES[this.id.toLowerCase()]?.name}, ${this.state})`;
}

export class ByHand implements Cmd {
  constructor(
    readonly id: string,
    readonly value: number,
  ) {}
  check = always;
  async run(_m: object, real: Real) {
    const scaling = real.cloud.store.pipe(this.id)!.scaling;
    if (scaling.concurrency !== null && scaling.concurrency !== undefined) scaling.concurrency = this.value;
    else scaling.replicas = this.value;
    real.tainted.add(this.id.toLowerCase());
    real.handled.add(this.id.toLowerCase());
    await Promise.resolve();
  }
  toString = () => `byHand(${PIPES[this.id.toLowerCase()]?.name}, ${this.value})`;
}

export class Faults implements Cmd {
  constructor(readonly statuses: number[]) {}
  check = always;
  async run(_m: object, real: Real) {
    for (const s of this.statuses) (s < 0 ? real.cuts : real.faults).push(s);
    await Promise.resolve();
  }
  toString = () =>
    `faults(${this.statuses.map((s) => (s === CUT_BEFORE ? 'cutBefore' : s === CUT_AFTER ? 'cutAfter' : s === CUT_LATE ? 'cutLate' : s === STALL ? 'stall' : s === STALL_LATE ? 'stallLate' : s)).join(',')})`;
}

export class LoseRedis implements Cmd {
  check = always;
  async run(_m: object, real: Real) {
    // Everything pipescaler keeps of its own (not BullMQ's queues): a restart without persistence.
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${real.prefix}:ps:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    lost(real);
  }
  toString = () => 'loseRedis';
}

/** Redis restarts empty at or just before a window start: everything under the daemon's prefix goes
 *  (FLUSHDB of its keys, BullMQ's queues with them), at the window's boundary less `beforeMs`. */
export class WipeAtBoundary implements Cmd {
  constructor(readonly beforeMs: number) {}
  check = always;
  async run(_m: object, real: Real) {
    const boundary = WINDOW_STARTS.find((b) => b - this.beforeMs > real.clock);
    if (boundary !== undefined) real.clock = boundary - this.beforeMs;
    await drained([real.daemon], 30_000);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${real.prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    lost(real);
  }
  toString = () => `wipeAtBoundary(-${this.beforeMs / 1000}s)`;
}

/** The platform's answers held past its window (wall-clock ms each): late, and out of order with
 *  those of other pipes sent meanwhile. */
export class LateAnswers implements Cmd {
  constructor(readonly delays: number[]) {}
  check = always;
  async run(_m: object, real: Real) {
    real.delays.push(...this.delays);
    await Promise.resolve();
  }
  toString = () => `late(${this.delays.join(',')}ms)`;
}

/** The pipe's next readable 200 reaches the daemon this long (wall-clock ms) after the proxy noted
 *  what it shows: a loaded machine's delivery. Only kept cases use it (the generated ones stay as
 *  they were). */
export class InFlight implements Cmd {
  constructor(
    readonly id: string,
    readonly ms: number,
  ) {}
  check = always;
  async run(_m: object, real: Real) {
    real.inFlight.set(this.id.toLowerCase(), this.ms);
    await Promise.resolve();
  }
  toString = () => `inFlight(${PIPES[this.id.toLowerCase()]?.name}, ${this.ms}ms)`;
}

export class Reload implements Cmd {
  constructor(readonly maxReplicas: number | null) {}
  check = always;
  async run(_m: object, real: Real) {
    real.config = configOf(real.proxy.url, real.prefix, this.maxReplicas);
    expect(await real.daemon.reload(real.config)).toBe(true);
  }
  toString = () => `reload(max ${this.maxReplicas})`;
}

export class Propagation implements Cmd {
  constructor(readonly ms: number) {}
  check = always;
  async run(_m: object, real: Real) {
    real.cloud.setPropagation({ default: this.ms, reads: 'transient' });
    await Promise.resolve();
  }
  toString = () => `propagation(${this.ms / 1000}s)`;
}

export class Restart implements Cmd {
  check = always;
  async run(_m: object, real: Real) {
    // Redis emptied while no replica ran (the only one restarts before a tick looked): to the
    // replica that starts, it is a new install (nothing tells them apart); its verdicts are a new
    // record's, not a loss's. That holds for every earlier loss too, seen or not: the marker was
    // the only trace of a seen one (its instant and its hold's end) and went with the last wipe,
    // the replica that had seen it keeps it only in memory, and the one that starts finds a Redis
    // with no trace of any loss.
    if (real.wipeUnseen > 0) {
      stats.lossesForgotten += real.wipes.length - real.wipeUnseen;
      real.wipes.splice(0);
    }
    real.wipeUnseen = 0;
    await real.daemon.stop({ timeoutMs: 2_000 });
    real.daemon = startDaemon(real);
    await real.daemon.start();
  }
  toString = () => 'restartReplica';
}

const ids = fc.constantFrom(DEMO.pipes['orders-events'], DEMO.pipes['nightly-s3']);
const tick = fc.constantFrom(30_000, 2 * MIN, 3 * MIN, 6 * MIN).map((ms) => new Tick(ms));
// Ticks weigh as much as everything else together: a sequence is mostly time passing.
export const commands = [
  tick,
  tick,
  tick,
  tick,
  tick,
  tick,
  fc.tuple(ids, fc.constantFrom(...STATES)).map(([id, s]) => new SetState(id, s)),
  fc.tuple(ids, fc.integer({ min: 1, max: 9 })).map(([id, v]) => new ByHand(id, v)),
  fc
    // CUT_LATE is left to kept cases: drawn here it changed the fixed seed's short run (it lost its
    // cuts after the cloud took a change) and 10 runs never reached a late landing a read showed
    .array(fc.constantFrom(0, CUT_BEFORE, CUT_AFTER, STALL, STALL_LATE, 400, 404, 424, 429, 500, 503), {
      minLength: 1,
      maxLength: 3,
    })
    .map((s) => new Faults(s)),
  fc.constant(new LoseRedis()),
  fc.constantFrom(0, 10_000, 30_000).map((ms) => new WipeAtBoundary(ms)),
  fc.array(fc.constantFrom(0, 300, 1_100, 1_600), { minLength: 1, maxLength: 4 }).map((d) => new LateAnswers(d)),
  fc.constantFrom(null, 3, 5, 10).map((m) => new Reload(m)),
  fc.constant(new Restart()),
  fc.constantFrom(0, 90_000).map((ms) => new Propagation(ms)),
];
