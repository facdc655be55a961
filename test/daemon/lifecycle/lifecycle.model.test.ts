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
import { tamperProxy, type Answer, type TamperProxy } from '../tamper-proxy.js';

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
  violations: string[];
}

function pipeIdOf(url: string): string | undefined {
  return /\/pipes\/([0-9a-f-]{36})\/scaling/i.exec(url)?.[1]?.toLowerCase();
}

function watch(real: Real): void {
  real.proxy.tamper = async (req, upstream) => {
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
    if (cut === STALL) return stallMidChange(real, id, upstream);
    if (cut !== undefined) {
      if (cut === CUT_AFTER) await upstream();
      real.unsettled.add(id);
      real.owed.set(id, (real.owed.get(id) ?? 0) + 1);
      cutChanges[cut === CUT_BEFORE ? 'before' : 'after'] += 1;
      throw new Error('cut'); // the proxy destroys the socket: no answer
    }
    const status = real.faults.shift();
    if (status !== undefined && status !== 0) return fault(status);
    const answer = await upstream();
    if (status === 0 && answer.status === 200) {
      if (values.length > 0) real.unsettled.add(id);
      return { ...answer, text: '{"status":200,"result":' };
    }
    if (answer.status === 200 && values.length === 0) real.unsettled.delete(id);
    if (answer.status === 200) {
      const state = (JSON.parse(answer.text) as { result?: { state?: string } }).result?.state;
      if (state !== undefined) real.seen.set(id, state);
    }
    return answer;
  };
}

/** The change reaches the cloud; its job loses its lock and runs again before the answer comes. */
async function stallMidChange(real: Real, id: string, upstream: () => Promise<Answer>): Promise<Answer> {
  const answer = await upstream();
  stalls += 1;
  const name = PIPES[id]?.name;
  const queue = real.daemon.queues().find((q) => q.name.startsWith('apply-'));
  const job = queue ? (await queue.getActive()).find((j) => (j.data as { pipe?: string }).pipe === name) : undefined;
  if (!queue || !job?.id) return answer;
  real.holding = id;
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

function fault(status: number): Answer {
  const reason: Record<number, string> = {
    400: 'BAD_REQUEST: refused',
    404: 'NOT_FOUND: Unknown pipe',
    424: 'FAILED_DEPENDENCY: Service is not running. Current state: idle',
    429: 'TOO_MANY_REQUESTS',
    500: 'INTERNAL_SERVER_ERROR: boom',
    503: 'SERVICE_UNAVAILABLE: later',
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (status === 429) Object.assign(headers, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0.2' });
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
  emitter.on('outcome', (o) => {
    if (o.outcome !== 'unsettled') return;
    const id = Object.keys(PIPES).find((k) => PIPES[k]!.name === o.pipe);
    const owed = id === undefined ? 0 : (real.owed.get(id) ?? 0);
    if (id !== undefined && owed > 0) real.owed.set(id, owed - 1);
  });
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
    `faults(${this.statuses.map((s) => (s === CUT_BEFORE ? 'cutBefore' : s === CUT_AFTER ? 'cutAfter' : s === STALL ? 'stall' : s)).join(',')})`;
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
    real.seen.clear();
    real.unsettled.clear();
    for (const id of Object.keys(PIPES)) real.tainted.add(id);
    for (const id of Object.keys(PIPES)) real.handled.add(id);
  }
  toString = () => 'loseRedis';
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

class Restart implements Cmd {
  check = always;
  async run(_m: object, real: Real) {
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
    .array(fc.constantFrom(0, CUT_BEFORE, CUT_AFTER, STALL, 400, 404, 424, 429, 500, 503), {
      minLength: 1,
      maxLength: 3,
    })
    .map((s) => new Faults(s)),
  fc.constant(new LoseRedis()),
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

  it('never sends a change to a pipe never seen or last seen in a state that takes no scaling, nor a value outside bounds and ranges', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 24, size: 'max' }), async (cmds) => {
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
        } finally {
          await real.daemon.stop({ timeoutMs: 2_000 });
          await proxy.close();
          await cloud.close();
          await cleanupPrefix(redis, prefix);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true, ...(PATH !== undefined ? { path: PATH } : {}) },
    );
    expect(changesSent).toBeGreaterThan(RUNS);
    // the run cut some changes' connections, both before and after the cloud took them
    if (SEED === 11 || RUNS >= 40) expect(Math.min(cutChanges.before, cutChanges.after)).toBeGreaterThan(0);
    // and held some answers through a stall of their job (the short run's seed has one)
    if (SEED === 11 || RUNS >= 40) expect(stalls).toBeGreaterThan(0);
  }, 600_000);
});
