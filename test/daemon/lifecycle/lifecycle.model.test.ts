// A model-based test of the lifecycle's safety invariants (fast-check commands), against the
// embedded cloud over HTTP and the real Redis: random sequences of platform states, changes made by
// hand, 4xx/5xx/429 answers, answers that cannot be read, connections cut (before the request
// reaches the cloud, or after the cloud carried it out: the answer lost), Redis state loss, config
// reloads and replica restarts, with ticks in between. A proxy in front of the cloud watches every
// request and holds the invariants:
// - no change reaches a pipe pipescaler never saw (since its state was last lost), nor one whose
//   last seen state takes no scaling;
// - no value outside the current config's bounds or the platform's ranges is ever sent;
// - after a change whose answer could not be read or whose connection was cut (its outcome
//   unknown), the daemon records it `unsettled` and the pipe's next request is a read;
// - with propagation injected (a change in effect 90 s after its 200), no change is sent again
//   while it is on its way (the pipe is confirming, or its change's connection was cut after the
//   cloud took it), unless someone changed the pipe by hand or Redis lost pipescaler's state meanwhile;
// - a change whose job outlives its lock (a stall: the proxy holds its answer, the lock goes, BullMQ
//   runs the job again) is never sent again by that second attempt;
// - no drift is found of a pipe that nobody changed by hand and whose state Redis never lost: the
//   daemon's own changes (answered, cut, unreadable, stalled) are never someone else's.
// `npm test` runs a short fixed-seed run; PIPESCALER_MODEL_RUNS=200 (npm run model) a long one.
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { PipeState, SCALABLE_PIPE_STATES, clampToLimit, type ScalingField } from '../../../src/api/index.js';
import { startCloud, type EmbeddedCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, type Daemon } from '../../../src/daemon/index.js';
import type { PipeConfig } from '../../../src/policy/types.js';
import type { Config } from '../../../src/config/types.js';
import {
  DEMO,
  FAST_WORKERS,
  REDIS_URL,
  cleanupPrefix,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  uniquePrefix,
  until,
} from '../helpers.js';
import { tamperProxy, type Answer, type Seen, type Tamper, type TamperProxy } from '../tamper-proxy.js';
import { StateStore } from '../../../src/daemon/index.js';
import { accountOf } from '../../../src/daemon/views/pipe-account.js';
import { bindAuditLog, type TelemetryLogger } from '../../../src/telemetry/index.js';

const RUNS = Number(process.env.PIPESCALER_MODEL_RUNS ?? 6);
// the short run's seed has changes cut before and after the cloud took them (20261124 had none)
const SEED = Number(process.env.PIPESCALER_MODEL_SEED ?? 11);
/** Replays one counterexample: the `path` fast-check printed with its seed. */
const PATH = process.env.PIPESCALER_MODEL_PATH;
const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

const STREAM = demoPipe('orders-events', 'flip');
const OBJECTS = demoPipe('nightly-s3', 'flip-objects');
const PIPES: Record<string, PipeConfig> = {
  [STREAM.pipeId.toLowerCase()]: STREAM,
  [OBJECTS.pipeId.toLowerCase()]: OBJECTS,
};
/** Faults the proxy makes itself: the connection cut (socket destroyed) before the request reaches
 *  the cloud, or after the cloud carried it out (its answer lost). The client cannot tell them apart. */
const CUT_BEFORE = -1;
const CUT_AFTER = -2;
/** The cloud carries the change out; its answer is held while the job's lock lapses (deleted, as a
 *  stalled event loop lets it expire) and BullMQ's stalled check runs the job again. */
const STALL = -3;
/** The same, and the daemon's clock passes the request's time (api.timeout) meanwhile: the job's
 *  second attempt settles the change with a read before its first attempt's 200 comes. */
const STALL_LATE = -4;
/** The platform's limit of the key, in real time as the daemon's budget runs (Redis' clock): small,
 *  so that two pipes' bursts fill its window. The proxy counts it (a fixed window from the first
 *  request after the last ended) and answers every request with its headers. */
const LIMIT = { requests: 4, perMs: 1_000 } as const;
const STATES = ['Running', 'Stopped', 'Failed', 'Completed', 'Paused', 'InternalError', 'Degraded'] as const;

/** Windows that open and close every few minutes, so ticks keep crossing boundaries. */
function windows(field: 'replicas' | 'concurrency', high: number) {
  return Array.from({ length: 12 }, (_, i) =>
    oneOff(`w${i}`, T0 + (i * 7 + 2) * MIN, T0 + (i * 7 + 5) * MIN, { [field]: high + (i % 3) }),
  );
}

function configOf(base: string, prefix: string, maxReplicas: number | null): Config {
  const bounds = maxReplicas === null ? {} : { replicas: { max: maxReplicas } };
  return testConfig({
    baseUrl: base,
    prefix,
    rateLimit: LIMIT,
    reconcileMs: 5 * MIN,
    pipes: [{ ...STREAM, bounds }, OBJECTS],
    policies: {
      flip: policy('flip', { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, windows('replicas', 6)),
      'flip-objects': policy('flip-objects', { concurrency: 2 }, windows('concurrency', 5)),
    },
  });
}

/** Changes that reached the proxy over the whole run: the run must have sent some. */
let changesSent = 0;
/** Changes whose connection was cut over the whole run, before and after the cloud took them. */
const cutChanges = { before: 0, after: 0 };
/** Changes whose job lost its lock while the proxy held their answer. */
let stalls = 0;
/** Stalls whose change a read settled before its 200 came. */
let lateStalls = 0;
/** Answers held past the platform's window (late, and so out of order with the next ones). */
let lateAnswers = 0;
/** The most requests the platform counted in one window, and the windows it counted. */
const platform = { most: 0, windows: 0, excused: 0 };
/** Verdicts given for a window start a Redis wipe touched, by verdict. */
const afterWipe: Record<string, number> = {};

/** The platform's fixed window of the key, on the wall clock (the daemon's budget runs on Redis'). */
class Limiter {
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
      platform.windows += 1;
    }
    this.count += 1;
    this.own += 1;
    platform.most = Math.max(platform.most, Math.min(this.count, LIMIT.requests));
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
interface SentChange {
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
interface Shown {
  readonly at: number;
  /** The daemon's instant when its request reached the proxy (the cloud answered then or, through a
   *  stall, later; the proxy may hold the answer after). */
  readonly sentAt: number;
  readonly answered: Record<string, unknown>;
  readonly held: Record<string, unknown>;
  /** The wall-clock instants the proxy noted it at and handed it over at (after any `inFlight`). */
  readonly notedWall: number;
  handedWall: number;
}

/** How long after the proxy hands an answer over the daemon may still be reading it (wall clock, ms):
 *  a stall that moves the clock meanwhile makes the daemon's instant for it the moved one. */
const DELIVERY_MS = 1_000;

/** The system under test and what the proxy saw. */
interface Real {
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
  verdicts: { pipe: string; boundary: number; verdict: string; reason?: string; target: Record<string, unknown> }[];
  violations: string[];
}

function pipeIdOf(url: string): string | undefined {
  return /\/pipes\/([0-9a-f-]{36})\/scaling/i.exec(url)?.[1]?.toLowerCase();
}

function watch(real: Real): void {
  const tamper = changes(real);
  real.proxy.tamper = async (req, upstream) => {
    // The platform counts each request as it arrives, and says so in every answer's headers.
    const granted = real.limiter.take();
    const headers = real.limiter.headers();
    const delay = real.delays.shift();
    if (!granted) {
      if (!real.limiter.daemonsFault()) platform.excused += 1;
      else
        real.violations.push(
          `the platform refused ${req.method} ${req.url}: ${real.limiter.count} requests in its window of ${LIMIT.requests}`,
        );
      return {
        status: 429,
        headers: { ...headers, 'content-type': 'application/json' },
        text: '{"error":"TOO_MANY_REQUESTS"}',
      };
    }
    const sentAt = real.clock;
    const answer = await tamper(req, upstream);
    // held past the window: its Reset tells of a window over by the time the budget reads it
    if (delay !== undefined && delay > 0) {
      lateAnswers += 1;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    // what the daemon is given now, at this instant of its clock (which another pipe's stalled
    // change may have moved while this answer was held)
    const shown = noteShown(real, req, answer, sentAt);
    if (shown) {
      const id = pipeIdOf(req.url) ?? '';
      const slow = real.inFlight.get(id);
      real.inFlight.delete(id);
      if (slow !== undefined) await new Promise((resolve) => setTimeout(resolve, slow));
      shown.handedWall = Date.now();
    }
    const start = real.limiter.start;
    if (answer.status === 429 && real.limiter.spentToldAt === Infinity && real.limiter.start === start)
      real.limiter.spentToldAt = Date.now();
    return answer.status === 429 ? answer : { ...answer, headers: { ...answer.headers, ...headers } };
  };
}

function changes(real: Real): Tamper {
  return async (req, upstream) => {
    const id = req.method === 'PATCH' ? pipeIdOf(req.url) : undefined;
    if (id === undefined) return upstream();
    const body = req.body ? (JSON.parse(req.body) as Record<string, number | null>) : {};
    const values = Object.entries(body).filter(([, v]) => v !== null && v !== undefined) as [ScalingField, number][];
    const onItsWay = id === undefined ? [] : real.cloud.store.pendingChanges(id);
    if (onItsWay.length === 0 && id !== undefined) real.tainted.delete(id);
    if (values.length > 0 && id !== undefined && onItsWay.length > 0 && !real.tainted.has(id)) {
      const coming: Record<string, number | null | undefined> = {};
      for (const c of onItsWay) Object.assign(coming, c.values);
      if (values.every(([f, v]) => coming[f] === v))
        real.violations.push(`change to ${id} sent again while on its way: ${req.body}`);
    }
    if (values.length > 0 && real.holding === id)
      real.violations.push(
        `change to ${id} sent again while its job's first attempt waits for its answer: ${req.body}`,
      );
    const sent: SentChange | undefined =
      values.length > 0
        ? { id, values: Object.fromEntries(values), key: req.idempotencyKey, outcomes: [], audits: 0, req }
        : undefined;
    if (sent) real.changes.push(sent);
    if (values.length > 0) {
      changesSent += 1;
      if (real.unsettled.has(id))
        real.violations.push(`change to ${id} before a read settled the last one: ${req.body}`);
      const state = real.seen.get(id);
      if (state === undefined) real.violations.push(`change to ${id} never seen: ${req.body}`);
      else if (!SCALABLE_PIPE_STATES.has(state as PipeState))
        real.violations.push(`change to ${id} last seen ${state}: ${req.body}`);
      const pipe = real.config.pipes.find((p) => p.pipeId.toLowerCase() === id);
      for (const [f, v] of values) {
        const b = pipe?.bounds[f];
        if (clampToLimit(f, v) !== v || (b?.max !== undefined && v > b.max) || (b?.min !== undefined && v < b.min))
          real.violations.push(`${f} ${v} outside bounds or ranges for ${id}`);
      }
    }
    const cut = values.length > 0 ? real.cuts.shift() : undefined;
    if (cut === STALL || cut === STALL_LATE) {
      const answer = await stallMidChange(real, id, upstream, cut === STALL_LATE);
      if (sent) noteAnswer(real, id, sent, answer, true);
      return answer;
    }
    if (cut !== undefined) {
      if (cut === CUT_AFTER && sent) noteCarriedOut(real, sent, await upstream());
      else if (cut === CUT_AFTER) await upstream();
      real.unsettled.add(id);
      real.owed.set(id, (real.owed.get(id) ?? 0) + 1);
      cutChanges[cut === CUT_BEFORE ? 'before' : 'after'] += 1;
      throw new Error('cut'); // the proxy destroys the socket: no answer
    }
    const status = real.faults.shift();
    if (status === 429) real.limiter.spend();
    if (status === 429) return fault(status, real.limiter.headers());
    if (status !== undefined && status !== 0) return fault(status);
    const answer = await upstream();
    if (sent) noteCarriedOut(real, sent, answer);
    if (status === 0 && answer.status === 200) {
      if (values.length > 0) real.unsettled.add(id);
      return { ...answer, text: '{"status":200,"result":' };
    }
    if (answer.status === 200 && values.length === 0) real.unsettled.delete(id);
    if (answer.status === 200) {
      const state = (JSON.parse(answer.text) as { result?: { state?: string } }).result?.state;
      if (state !== undefined) real.seen.set(id, state);
    }
    noteAnswer(real, id, sent, answer, false);
    return answer;
  };
}

/** The cloud answered a change 200: it carried it out (once per Idempotency-Key, or twice sent). */
function noteCarriedOut(real: Real, sent: SentChange, answer: Answer): void {
  if (answer.status !== 200 || sent.key === undefined) return;
  const n = (real.carriedOut.get(sent.key) ?? 0) + 1;
  real.carriedOut.set(sent.key, n);
  if (n > 1)
    real.violations.push(`change ${sent.key} to ${sent.id} carried out ${n} times: ${JSON.stringify(sent.values)}`);
}

/** A readable 200 to a change: its request id. */
function noteAnswer(real: Real, id: string, sent: SentChange | undefined, answer: Answer, held: boolean): void {
  if (answer.status !== 200 || !sent) return;
  const body = JSON.parse(answer.text) as { requestId?: string };
  if (body.requestId !== undefined) {
    sent.requestId = body.requestId;
    if (held) sent.held = true;
  }
}

/** A readable 200 of a pipe (a read's or a change's) as the proxy hands it to the daemon: what it
 *  showed and what the cloud holds now, at the daemon's instant now. */
function noteShown(real: Real, req: Seen, answer: Answer, sentAt: number): Shown | undefined {
  const id = req.method === 'PATCH' ? pipeIdOf(req.url) : undefined;
  if (id === undefined || answer.status !== 200) return undefined;
  let body: { result?: { scaling?: Record<string, unknown> } };
  try {
    body = JSON.parse(answer.text) as typeof body;
  } catch {
    return undefined; // a 200 that cannot be read: the daemon learns nothing from it
  }
  const list = real.shown.get(id) ?? [];
  const now = Date.now();
  const shown: Shown = {
    at: real.clock,
    sentAt,
    answered: body.result?.scaling ?? {},
    held: { ...(real.cloud.store.pipe(id)?.scaling ?? {}) },
    notedWall: now,
    handedWall: now,
  };
  list.push(shown);
  real.shown.set(id, list);
  return shown;
}

/** The instants of the daemon's clock a 200 may be stamped with: the one the proxy handed it over
 *  at, or one a stall moved the clock to while the answer was on its way to the daemon. */
function stampedAt(real: Real, o: Shown, at: number): boolean {
  // a read right after a change within the same instant is stamped a millisecond or two after it
  const near = (t: number) => t <= at && t >= at - 50;
  if (near(o.at)) return true;
  return real.moves.some((m) => m.wall >= o.notedWall && m.wall <= o.handedWall + DELIVERY_MS && near(m.to));
}

/** The newest change sent to the pipe named `pipe` whose values `after` includes. */
function changeOf(real: Real, pipe: string, after: Record<string, unknown> | undefined): SentChange | undefined {
  const id = Object.keys(PIPES).find((k) => PIPES[k]!.name === pipe);
  for (let i = real.changes.length - 1; i >= 0; i--) {
    const c = real.changes[i]!;
    if (c.id === id && Object.entries(c.values).every(([f, v]) => after?.[f] === v)) return c;
  }
  return undefined;
}

/**
 * Every 200 is recorded exactly once: each change the proxy answered 200 (readable) has one audit
 * line and one outcome (`applied` by its request id, or `landed_late` when a read found it in force
 * first and its 200 came after), unless the daemon gave up on its answer (held through a stall
 * past api.timeout: then its settle read reports it). No change has two outcomes (checked after
 * every command); one each, once the daemon stopped at the run's end (its in-flight turns done).
 */
function recordedOnce(real: Real, final: boolean): void {
  for (const c of real.changes) {
    if (c.outcomes.length > 1 && c.wiped !== true)
      real.violations.push(`change to ${c.id} ${JSON.stringify(c.values)} reported ${c.outcomes.join(' and ')}`);
    // its answer may still be on its way to a first attempt that no queue counts: at the run's end
    if (!final || c.requestId === undefined || (c.held && c.lost) || c.req.undelivered === true) continue;
    if (c.audits !== 1 || c.outcomes.length < 1 || (c.outcomes.length > 1 && c.wiped !== true))
      real.violations.push(
        `change to ${c.id} answered 200 (${c.requestId}): ${c.audits} audit lines, outcomes [${c.outcomes.join(', ')}]`,
      );
  }
}

/**
 * Verdicts after a wipe agree with the reads: a window start within the verdict limit after Redis
 * lost the state is met only when a 200 showed its target (or more) by the boundary, else excluded
 * (state_lost, or the pipe out of the policy's hands); never late or missed.
 */
function verdictsAfterWipes(real: Real): void {
  const limitMs = real.config.evaluate.actuation?.maxMs ?? 600_000;
  for (const v of real.verdicts.splice(0)) {
    const touched = real.wipes.some((w) => w <= v.boundary && v.boundary - w <= limitMs);
    if (!touched) continue;
    afterWipe[v.verdict] = (afterWipe[v.verdict] ?? 0) + 1;
    const id = PIPES[Object.keys(PIPES).find((k) => PIPES[k]!.name === v.pipe) ?? '']?.pipeId.toLowerCase() ?? '';
    const showed = (real.shown.get(id) ?? []).some(
      // at target as a verdict counts it: each field at or above the window's target
      (o) =>
        o.at <= v.boundary &&
        Object.entries(v.target).every(([f, x]) => typeof o.answered[f] === 'number' && o.answered[f] >= (x as number)),
    );
    const what = `${v.verdict}${v.reason ? ` (${v.reason})` : ''} of ${v.pipe} at ${new Date(v.boundary).toISOString()} after a wipe at ${real.wipes.map((w) => new Date(w).toISOString()).join(', ')}`;
    if (v.verdict === 'late' || v.verdict === 'missed') real.violations.push(`verdict ${what}`);
    if (v.verdict === 'met' && !showed)
      real.violations.push(
        `verdict ${what}: no read showed ${JSON.stringify(v.target)} by then; the last ones showed ${JSON.stringify(
          (real.shown.get(id) ?? [])
            .filter((o) => o.at <= v.boundary)
            .slice(-2)
            .map((o) => [new Date(o.at).toISOString(), o.answered]),
        )}`,
      );
  }
}

/**
 * Status never states as fact what it does not know: the values `accountOf` gives as the
 * platform's, at the instant it names, are each what a 200 that reached the daemon at that instant
 * showed or what the cloud held then. The daemon stamps a read or an answer with the instant it
 * came (docs/cli.md: READ is how long ago it came), so a 200 held by the proxy while the clock moved
 * (another pipe's change stalled past api.timeout) is of the instant it was handed over, not the
 * one the cloud answered at (seed 11, 300 runs, path 231). An answer the proxy handed over is
 * still on its way while the daemon has not read it: a stall that moves the clock meanwhile makes
 * the moved instant its own (seed 11, 300 runs, path 168, on a loaded machine).
 */
async function statusKnown(real: Real): Promise<void> {
  for (const [id, pipe] of Object.entries(PIPES)) {
    const rec = await real.store.read(pipe.name);
    const { platform } = accountOf(rec, real.clock);
    if (platform.at === null) continue;
    const at = platform.at;
    const then = (real.shown.get(id) ?? []).filter((o) => stampedAt(real, o, at));
    const before = (real.shown.get(id) ?? []).filter((o) => o.at <= at).at(-1);
    const iso = (t: number) => new Date(t).toISOString();
    for (const [f, v] of Object.entries(platform.values)) {
      if (then.some((o) => o.answered[f] === v || o.held[f] === v)) continue;
      real.violations.push(
        `status of ${pipe.name} states ${f} ${v} at ${iso(at)}; that instant showed ${JSON.stringify(then.map((o) => o.answered[f]))}, held ${JSON.stringify(then.map((o) => o.held[f]))}${before ? `; the last 200 before it came at ${iso(before.at)} (sent at ${iso(before.sentAt)}) showing ${JSON.stringify(before.answered[f])}` : ''}`,
      );
    }
  }
}

/** The change reaches the cloud; its job loses its lock and runs again before the answer comes. */
async function stallMidChange(real: Real, id: string, upstream: () => Promise<Answer>, late: boolean): Promise<Answer> {
  const answer = await upstream();
  stalls += 1;
  const name = PIPES[id]?.name;
  const queue = real.daemon.queues().find((q) => q.name.startsWith('apply-'));
  const job = queue ? (await queue.getActive()).find((j) => (j.data as { pipe?: string }).pipe === name) : undefined;
  if (!queue || !job?.id) return answer;
  real.holding = id;
  // the request's time runs out on the daemon's clock while the answer is held
  if (late) {
    real.clock += real.config.api.timeoutMs + 1_000;
    real.moves.push({ wall: Date.now(), to: real.clock });
    lateStalls += 1;
  }
  try {
    await redis.del(`${real.prefix}:${queue.name}:${job.id}:lock`);
    const done = async () => ['completed', 'failed'].includes(await queue.getJobState(job.id!));
    await until(done, 15_000, 'the stalled job to run again').catch(() =>
      real.violations.push(`the stalled job of ${id} never ran again`),
    );
  } finally {
    real.holding = null;
  }
  return answer;
}

function fault(status: number, limit?: Record<string, string>): Answer {
  const reason: Record<number, string> = {
    400: 'BAD_REQUEST: refused',
    404: 'NOT_FOUND: Unknown pipe',
    424: 'FAILED_DEPENDENCY: Service is not running. Current state: idle',
    429: 'TOO_MANY_REQUESTS',
    500: 'INTERNAL_SERVER_ERROR: boom',
    503: 'SERVICE_UNAVAILABLE: later',
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 429) Object.assign(headers, limit ?? { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0.2' });
  const text =
    status === 429
      ? JSON.stringify({ error: reason[status] })
      : JSON.stringify({ status, error: reason[status], requestId: '6f1c1f1e-2f4b-4a8e-9c55-0b0b0b0b0b0b' });
  return { status, headers, text };
}

function startDaemon(real: Real): Daemon {
  const emitter = new DaemonEmitter();
  emitter.on('drift', (d) => {
    const id = Object.keys(PIPES).find((k) => PIPES[k]!.name === d.pipe);
    if (id !== undefined && !real.handled.has(id))
      real.violations.push(`drift of ${d.pipe}, never changed by hand: ${JSON.stringify(d)}`);
  });
  emitter.on('verdict', (v) => {
    real.verdicts.push({
      pipe: v.pipe,
      boundary: v.boundary,
      verdict: v.verdict,
      target: v.target,
      ...(v.reason !== undefined ? { reason: v.reason } : {}),
    });
  });
  emitter.on('outcome', (o) => {
    if (o.outcome === 'applied') {
      const c = real.changes.find((x) => x.requestId !== undefined && x.requestId === o.requestId);
      if (c) c.outcomes.push('applied');
      else real.violations.push(`applied outcome of ${o.pipe} with no 200 of its request id ${o.requestId}`);
    }
    if (o.outcome === 'landed_late') changeOf(real, o.pipe, o.after)?.outcomes.push('landed_late');
    if (o.outcome === 'unsettled') {
      const c = changeOf(real, o.pipe, o.after);
      if (c) c.lost = true;
    }
    if (o.outcome !== 'unsettled') return;
    const id = Object.keys(PIPES).find((k) => PIPES[k]!.name === o.pipe);
    const owed = id === undefined ? 0 : (real.owed.get(id) ?? 0);
    if (id !== undefined && owed > 0) real.owed.set(id, owed - 1);
  });
  const audit = (line: { audit?: boolean; result?: string; requestId?: string }) => {
    if (line.audit !== true || line.result !== 'applied') return;
    const c = real.changes.find((x) => x.requestId !== undefined && x.requestId === line.requestId);
    if (c) c.audits += 1;
    else real.violations.push(`audit line of a change with no 200 of its request id ${line.requestId}`);
  };
  const quiet = () => {};
  bindAuditLog(emitter, { info: audit, error: audit, debug: quiet, warn: quiet } as unknown as TelemetryLogger);
  return createDaemon({
    config: real.config,
    redis,
    prefix: real.prefix,
    now: () => real.clock,
    emitter,
    schedule: false,
    watch: false,
    workerOptions: FAST_WORKERS,
  });
}

async function settle(real: Real): Promise<void> {
  await drained([real.daemon], 30_000);
  recordedOnce(real, false);
  await statusKnown(real);
  verdictsAfterWipes(real);
  expect(real.violations).toEqual([]);
  // every change whose connection was cut was recorded unsettled (outcome unknown)
  expect([...real.owed].filter(([, n]) => n > 0)).toEqual([]);
}

type Cmd = fc.AsyncCommand<object, Real>;
const always = () => true;

class Tick implements Cmd {
  constructor(readonly ms: number) {}
  check = always;
  async run(_m: object, real: Real) {
    real.clock += this.ms;
    real.wipeUnseen = 0;
    await real.daemon.tick(real.clock);
    await settle(real);
  }
  toString = () => `tick(+${this.ms / 1000}s)`;
}

class SetState implements Cmd {
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

class ByHand implements Cmd {
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

class Faults implements Cmd {
  constructor(readonly statuses: number[]) {}
  check = always;
  async run(_m: object, real: Real) {
    for (const s of this.statuses) (s < 0 ? real.cuts : real.faults).push(s);
    await Promise.resolve();
  }
  toString = () =>
    `faults(${this.statuses.map((s) => (s === CUT_BEFORE ? 'cutBefore' : s === CUT_AFTER ? 'cutAfter' : s === STALL ? 'stall' : s === STALL_LATE ? 'stallLate' : s)).join(',')})`;
}

class LoseRedis implements Cmd {
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
class WipeAtBoundary implements Cmd {
  constructor(readonly beforeMs: number) {}
  check = always;
  async run(_m: object, real: Real) {
    const starts = Array.from({ length: 12 }, (_, i) => T0 + (i * 7 + 2) * MIN);
    const boundary = starts.find((b) => b - this.beforeMs > real.clock);
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

/** What the model forgets when Redis loses pipescaler's state. */
function lost(real: Real): void {
  real.seen.clear();
  real.unsettled.clear();
  real.wipes.push(real.clock);
  for (const c of real.changes) c.wiped = true;
  real.wipeUnseen += 1;
  for (const id of Object.keys(PIPES)) real.tainted.add(id);
  for (const id of Object.keys(PIPES)) real.handled.add(id);
}

/** The platform's answers held past its window (wall-clock ms each): late, and out of order with
 *  those of other pipes sent meanwhile. */
class LateAnswers implements Cmd {
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
class InFlight implements Cmd {
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

class Reload implements Cmd {
  constructor(readonly maxReplicas: number | null) {}
  check = always;
  async run(_m: object, real: Real) {
    real.config = configOf(real.proxy.url, real.prefix, this.maxReplicas);
    expect(await real.daemon.reload(real.config)).toBe(true);
  }
  toString = () => `reload(max ${this.maxReplicas})`;
}

class Propagation implements Cmd {
  constructor(readonly ms: number) {}
  check = always;
  async run(_m: object, real: Real) {
    real.cloud.setPropagation({ default: this.ms, reads: 'transient' });
    await Promise.resolve();
  }
  toString = () => `propagation(${this.ms / 1000}s)`;
}

/** Losses a tick had seen whose every trace a later wipe and a restart erased. */
let lossesForgotten = 0;

class Restart implements Cmd {
  check = always;
  async run(_m: object, real: Real) {
    // Redis emptied while no replica ran (the only one restarts before a tick looked): to the
    // replica that starts, it is a new install (nothing tells them apart); its verdicts are a new
    // record's, not a loss's. That holds for every earlier loss too, seen or not: the marker was
    // the only trace of a seen one (its instant and its hold's end) and went with the last wipe,
    // the replica that had seen it keeps it only in memory, and the one that starts finds a Redis
    // with no trace of any loss.
    if (real.wipeUnseen > 0) {
      lossesForgotten += real.wipes.length - real.wipeUnseen;
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
const commands = [
  tick,
  tick,
  tick,
  tick,
  tick,
  tick,
  fc.tuple(ids, fc.constantFrom(...STATES)).map(([id, s]) => new SetState(id, s)),
  fc.tuple(ids, fc.integer({ min: 1, max: 9 })).map(([id, v]) => new ByHand(id, v)),
  fc
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

describe('the lifecycle under random platform states, failures, losses, reloads and restarts', () => {
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const p of prefixes) await cleanupPrefix(redis, p);
    redis.disconnect();
  });

  /** One sequence of commands against a fresh cloud, proxy, prefix and daemon; two ticks at the end. */
  async function runModel(cmds: Iterable<Cmd>): Promise<void> {
    // the cloud's clock is the daemon's: a change's propagation runs on the ticks' time
    let clockOf = () => T0;
    const cloud = await startCloud({
      fixtures: 'config/cloud.yaml',
      port: 0,
      rateLimit: false,
      now: () => clockOf(),
    });
    const proxy = await tamperProxy(cloud.url);
    const prefix = uniquePrefix('lifecycle-model');
    prefixes.push(prefix);
    const real: Real = {
      cloud,
      proxy,
      prefix,
      clock: T0,
      config: configOf(proxy.url, prefix, null),
      seen: new Map(),
      faults: [],
      cuts: [],
      owed: new Map(),
      unsettled: new Set(),
      tainted: new Set(),
      holding: null,
      changes: [],
      shown: new Map(),
      carriedOut: new Map(),
      store: new StateStore(redis, prefix),
      limiter: new Limiter(),
      delays: [],
      inFlight: new Map(),
      moves: [],
      wipes: [],
      wipeUnseen: 0,
      verdicts: [],
      handled: new Set(),
      violations: [],
      daemon: undefined as unknown as Daemon,
    };
    clockOf = () => real.clock;
    watch(real);
    real.daemon = startDaemon(real);
    try {
      await real.daemon.start();
      await fc.asyncModelRun(() => ({ model: {}, real }), [...cmds, new Tick(2 * MIN), new Tick(2 * MIN)]);
      await real.daemon.stop({ timeoutMs: 10_000 });
      recordedOnce(real, true);
      expect(real.violations).toEqual([]);
    } finally {
      await real.daemon.stop({ timeoutMs: 2_000 });
      await proxy.close();
      await cloud.close();
      await cleanupPrefix(redis, prefix);
    }
  }

  it(
    'never sends a change to a pipe never seen or last seen in a state that takes no scaling, nor a value outside bounds and ranges',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 24, size: 'max' }), (cmds) => runModel(cmds)),
        { numRuns: RUNS, seed: SEED, endOnFailure: true, ...(PATH !== undefined ? { path: PATH } : {}) },
      );
      expect(changesSent).toBeGreaterThan(RUNS);
      // the run cut some changes' connections, both before and after the cloud took them
      if (SEED === 11 || RUNS >= 40) expect(Math.min(cutChanges.before, cutChanges.after)).toBeGreaterThan(0);
      // and held some answers through a stall of their job (the short run's seed has one)
      if (SEED === 11 || RUNS >= 40) expect(stalls).toBeGreaterThan(0);
      console.log(
        `model: ${RUNS} runs, seed ${SEED}: ${changesSent} changes, stalls ${stalls} (${lateStalls} settled by a read first), ${lateAnswers} answers late, platform windows ${platform.windows} (most ${platform.most} of ${LIMIT.requests}, ${platform.excused} refused after someone else's spending), verdicts after a wipe ${JSON.stringify(afterWipe)}`,
      );
      // each run takes 3-6 s (the platform's window is in real time): a long run is given its time
    },
    Math.max(600_000, RUNS * 12_000),
  );

  // Found by the model (seed 11, 300 runs, path 147): a loss a tick saw (its reads rebuilt the
  // records), then Redis emptied again and the only replica restarted before a tick looked. The
  // replica that starts finds no marker: a new install to it, as when only the second wipe
  // happened. The start at 10:09, which no tick came near (10:06:50, then 10:12:50), is missed for
  // that new install; the model held it against the first loss, whose only trace the wipe erased.
  it('holds a replica started on an emptied Redis to no loss before it: to the replica, a new install', async () => {
    const before = lossesForgotten;
    await runModel([
      new LoseRedis(),
      new Tick(30_000),
      new WipeAtBoundary(10_000),
      new Restart(),
      new Tick(3 * MIN),
      new Tick(2 * MIN),
      new Tick(6 * MIN),
    ]);
    expect(lossesForgotten).toBeGreaterThan(before);
  }, 120_000);

  // Found by the model (seed 11, 300 runs, path 231): at the last tick the proxy held orders-events'
  // reconcile read 1.6 s while nightly-s3's change stalled past api.timeout, moving the clock 6 s.
  // The daemon stamps the read with the instant its answer came (10:20:56), as status tells it; the
  // model had stamped it with the instant the cloud answered (10:20:50) and found no 200 of the
  // instant status named. test/daemon/views/status.test.ts holds the case without the model.
  it('names an answer held while the clock moved at the instant it came, as the daemon does', async () => {
    const [orders, objects] = [DEMO.pipes['orders-events'], DEMO.pipes['nightly-s3']];
    await runModel([
      new Tick(3 * MIN),
      new LoseRedis(),
      new Faults([404, CUT_BEFORE, 424]),
      new SetState(objects, 'Degraded'),
      new Tick(2 * MIN),
      new SetState(orders, 'InternalError'),
      new Restart(),
      new LateAnswers([0, 1_100]),
      new WipeAtBoundary(10_000),
      new Faults([STALL_LATE, 503, STALL]),
      new Tick(30_000),
      new Propagation(90_000),
      new Restart(),
      new Reload(10),
      new ByHand(orders, 9),
      new Reload(5),
      new Tick(6 * MIN),
      new Tick(3 * MIN),
      new LateAnswers([1_600, 0, 1_600]),
      new Tick(30_000),
      new ByHand(objects, 6),
    ]);
  }, 120_000);

  // Found by the model on a loaded machine (seed 11, 300 runs, path 168; alone it passed): status
  // named replicas 2 at 10:11:06, 6 s past a tick, the move of a change stalled past api.timeout,
  // and the proxy had no 200 of that instant. The proxy notes an answer as it hands it over; on a
  // loaded machine the daemon reads it later, and another pipe's stall can move the clock between
  // the two. The daemon stamps the answer with the instant it read it, as status tells it. Here the
  // proxy holds orders-events' read 3 s after noting it, so the stall comes in between every time
  // (the model without the moves fails it as path 168 did: status at 10:20:56, the proxy's 200 at
  // 10:20:50).
  it('names an answer still on its way when a stall moved the clock at the instant it came', async () => {
    const [orders, objects] = [DEMO.pipes['orders-events'], DEMO.pipes['nightly-s3']];
    const before = lateStalls;
    await runModel([
      new Tick(3 * MIN),
      new LoseRedis(),
      new Faults([404, CUT_BEFORE, 424]),
      new SetState(objects, 'Degraded'),
      new Tick(2 * MIN),
      new SetState(orders, 'InternalError'),
      new Restart(),
      new LateAnswers([0, 1_100]),
      new WipeAtBoundary(10_000),
      new Faults([STALL_LATE, 503, STALL]),
      new Tick(30_000),
      new Propagation(90_000),
      new Restart(),
      new Reload(10),
      new ByHand(orders, 9),
      new Reload(5),
      new Tick(6 * MIN),
      new Tick(3 * MIN),
      new Tick(30_000),
      new ByHand(objects, 6),
      new InFlight(orders, 3_000),
    ]);
    expect(lateStalls).toBeGreaterThan(before);
  }, 120_000);

  // Found by the model (seed 11, 20 runs): the job's second attempt, past api.timeout, settled the
  // change with a read that found it in force (landed_late); the first attempt's 200 came after and
  // was reported too (applied). One change, one outcome: the 200 adds its audit line only.
  it('reports a change once when the read that finds it in force comes before its late 200', async () => {
    const before = lateStalls;
    await runModel([new Tick(30_000), new Faults([STALL_LATE]), new Tick(90_000)]);
    expect(lateStalls).toBeGreaterThan(before);
  }, 120_000);
});
