// What the model keeps of one sequence: the system under test, what the proxy saw of it, and the
// platform's window of the key as the proxy counts it.
import type { EmbeddedCloud } from '../../../../src/cloud/index.js';
import type { Config } from '../../../../src/config/types.js';
import type { Daemon, StateStore } from '../../../../src/daemon/index.js';
import type { Answer, Seen, TamperProxy } from '../../tamper-proxy.js';
import { LIMIT, PIPES, stats } from './setup.js';

/** The platform's fixed window of the key, on the wall clock (the daemon's budget runs on Redis'). */
export class Limiter {
  start = -Infinity;
  count = 0;
  /** The daemon's own requests in the window. */
  own = 0;
  /** The window was spent by someone else (a 429 the daemon did not cause), told to the daemon at
   *  this wall-clock instant (its 429 answered, possibly late; Infinity: not yet). */
  spentToldAt: number | null = null;
  /** Counts a request; false when the window is full (the platform's 429). */
  take(): boolean {
    const now = Date.now();
    if (now >= this.start + LIMIT.perMs) {
      this.start = now;
      this.count = 0;
      this.own = 0;
      this.spentToldAt = null;
      stats.platform.windows += 1;
    }
    this.count += 1;
    this.own += 1;
    stats.platform.most = Math.max(stats.platform.most, Math.min(this.count, LIMIT.requests));
    return this.count <= LIMIT.requests;
  }
  /** Someone else spent the window (a 429 the daemon did not cause). */
  spend(): void {
    if (Date.now() >= this.start + LIMIT.perMs) this.take();
    this.count = Math.max(this.count, LIMIT.requests);
    this.spentToldAt = Infinity;
  }
  /** The refusal is the daemon's budget's doing: its own requests overran the window, or it sent
   *  after it was told that someone else had spent it (100 ms to process that answer). */
  daemonsFault(): boolean {
    if (this.own > LIMIT.requests) return true;
    return this.spentToldAt !== null && Date.now() > this.spentToldAt + 100;
  }
  headers(): Record<string, string> {
    const now = Date.now();
    const resetS = Math.max(0, this.start + LIMIT.perMs - now) / 1000;
    return {
      'x-ratelimit-limit': String(LIMIT.requests),
      'x-ratelimit-remaining': String(Math.max(0, LIMIT.requests - this.count)),
      'x-ratelimit-reset': String(Math.round(resetS * 100) / 100),
    };
  }
}

/** A change that reached the proxy, and what the daemon reported of it. */
export interface SentChange {
  readonly id: string;
  readonly values: Record<string, number>;
  readonly key: string | undefined;
  /** The platform's request id of its 200 (the proxy answered it readable). */
  requestId?: string;
  /** Its 200 was held through a stall: the client may have given up on it first. */
  held?: boolean;
  /** Outcomes reported of it: applied (by request id), landed_late (the pipe's newest with its values). */
  readonly outcomes: string[];
  /** Audit lines of its 200. */
  audits: number;
  /** The daemon gave up on its answer (an `unsettled` outcome of its pipe after it was sent). */
  lost?: boolean;
  /** The request as the proxy saw it (undelivered: the client had gone when its answer was ready). */
  readonly req: Seen;
  /** Redis lost pipescaler's state after it was sent: what told its outcome reported (a read's
   *  landed mark) may be gone. */
  wiped?: boolean;
}

/** What a 200 showed of a pipe, and what the cloud held then: at the instant the answer reached the
 *  daemon (on its clock, after any hold of the proxy's), which is the instant the daemon stamps its
 *  read or answer with (status's `platform.at`, docs/cli.md), not the one the cloud answered at. */
export interface Shown {
  readonly at: number;
  /** The daemon's instant when its request reached the proxy (the cloud answered then or, through a
   *  stall, later; the proxy may hold the answer after). */
  readonly sentAt: number;
  readonly answered: Record<string, unknown>;
  readonly held: Record<string, unknown>;
  /** The wall-clock instants the proxy noted it at and handed it over at (after any `inFlight`). */
  readonly notedWall: number;
  handedWall: number;
  /** Redis' losses of pipescaler's state before it (Real.losses then): the record it reached. */
  readonly epoch: number;
}

/** How long after the proxy hands an answer over the daemon may still be reading it (wall clock, ms):
 *  a stall that moves the clock meanwhile makes the daemon's instant for it the moved one. */
export const DELIVERY_MS = 1_000;

/** The system under test and what the proxy saw. */
export interface Real {
  cloud: EmbeddedCloud;
  proxy: TamperProxy;
  daemon: Daemon;
  prefix: string;
  clock: number;
  config: Config;
  /** The state of each pipe (by id) in the newest answer pipescaler got since its state was lost. */
  seen: Map<string, string>;
  /** Statuses the proxy answers the next PATCHes with instead of the cloud (0: the cloud's 200,
   *  made unreadable). */
  faults: number[];
  /** Cuts (CUT_BEFORE, CUT_AFTER) the proxy makes of the next changes' connections: no answer. */
  cuts: number[];
  /** Changes whose connection was cut, per pipe, whose `unsettled` outcome the daemon still owes. */
  owed: Map<string, number>;
  /** Pipes whose last change got an unreadable answer, until a read of them answers. */
  unsettled: Set<string>;
  /** Pipes changed by hand or whose state Redis lost while a change was on its way: the daemon
   *  may send that change again (it cannot know it is on its way). Cleared once nothing is. */
  tainted: Set<string>;
  /** Pipes changed by hand, or whose state Redis lost, in this run: a drift of them may be real. */
  handled: Set<string>;
  /** The pipe whose change's answer the proxy holds through a stall of its job. */
  holding: string | null;
  /** Every change that reached the proxy, in order. */
  changes: SentChange[];
  /** Readable 200s (changes' and reads') per pipe id: what status may state as the platform's. */
  shown: Map<string, Shown[]>;
  /** The cloud's 200s to a change, per Idempotency-Key: the cloud carried it out that often. */
  carriedOut: Map<string, number>;
  store: StateStore;
  limiter: Limiter;
  /** How long the proxy holds each of the next answers (ms, wall clock): past the window, late. */
  delays: number[];
  /** How long the proxy holds the next readable 200 of a pipe (by id) after noting what it shows
   *  (ms, wall clock): on its way to the daemon while another pipe's stall moves the clock. */
  inFlight: Map<string, number>;
  /** The daemon's clock moved by a stall (wall-clock instant, the clock after). */
  moves: { wall: number; to: number }[];
  /** Instants (the daemon's clock) Redis lost pipescaler's state at. */
  wipes: number[];
  /** Wipes since the last tick: no replica has looked at Redis since them. */
  wipeUnseen: number;
  /** Redis' losses of pipescaler's state so far: each begins new records (their first read, seenAt). */
  losses: number;
  /** Verdicts given since the last command, with the losses before them (the records they read). */
  verdicts: {
    pipe: string;
    boundary: number;
    deadline: number;
    verdict: string;
    reason?: string;
    target: Record<string, unknown>;
    epoch: number;
  }[];
  /** Changes cut by CUT_LATE, kept for the cloud to carry out later (commands.ts landLate). */
  heldLate: { readonly sent: SentChange; readonly at: number; readonly upstream: () => Promise<Answer> }[];
  /** Changes the cloud carried out late, after a newer change of their pipe: their values and send
   *  instant (the daemon's clock). A drift of those values is theirs only past UNSETTLED_MS. */
  landedLate: {
    readonly id: string;
    readonly key: string | undefined;
    readonly values: Record<string, number>;
    readonly at: number;
  }[];
  /** Audit lines that record a change, by its Idempotency-Key: `applied` (not one whose outcome a
   *  read reported first), `landed_late`, `outcome_unknown`. */
  recorded: Map<string, string[]>;
  violations: string[];
}

export function pipeIdOf(url: string): string | undefined {
  return /\/pipes\/([0-9a-f-]{36})\/scaling/i.exec(url)?.[1]?.toLowerCase();
}

/** What the model forgets when Redis loses pipescaler's state. */
export function lost(real: Real): void {
  real.losses += 1;
  real.seen.clear();
  real.unsettled.clear();
  real.wipes.push(real.clock);
  for (const c of real.changes) c.wiped = true;
  real.wipeUnseen += 1;
  for (const id of Object.keys(PIPES)) real.tainted.add(id);
  for (const id of Object.keys(PIPES)) real.handled.add(id);
}
