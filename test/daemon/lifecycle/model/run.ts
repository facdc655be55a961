// The model's one builder: a sequence of commands (generated, or a kept case's as fast-check
// printed it) against a fresh cloud, proxy, key prefix and daemon, with the invariants held after
// every command and at the end.
import fc from 'fast-check';
import { expect } from 'vitest';
import { startCloud } from '../../../../src/cloud/index.js';
import { StateStore, type Daemon } from '../../../../src/daemon/index.js';
import { cleanupPrefix, uniquePrefix } from '../../helpers.js';
import { tamperProxy } from '../../tamper-proxy.js';
import {
  ByHand,
  Faults,
  InFlight,
  LateAnswers,
  LoseRedis,
  Propagation,
  Reload,
  Restart,
  SetState,
  Tick,
  WipeAtBoundary,
  type Cmd,
} from './commands.js';
import { startDaemon } from './daemon.js';
import { recordedByKey, recordedOnce } from './invariants.js';
import { watch } from './proxy.js';
import {
  CUT_AFTER,
  CUT_BEFORE,
  CUT_LATE,
  MIN,
  PIPES,
  STALL,
  STALL_LATE,
  STATES,
  T0,
  configOf,
  redis,
} from './setup.js';
import { Limiter, type Real } from './state.js';

const prefixes: string[] = [];

/** Removes every prefix the runs used and closes the model's Redis connection (afterAll). */
export async function closeModel(): Promise<void> {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
}

/** One sequence of commands against a fresh cloud, proxy, prefix and daemon; two ticks at the end. */
export async function runModel(cmds: Iterable<Cmd>): Promise<void> {
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
    losses: 0,
    verdicts: [],
    recorded: new Map(),
    heldLate: [],
    landedLate: [],
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
    await recordedByKey(real, true);
    expect(real.violations).toEqual([]);
  } finally {
    await real.daemon.stop({ timeoutMs: 2_000 });
    await proxy.close();
    await cloud.close();
    await cleanupPrefix(redis, prefix);
  }
}

/** A fault as the `faults(...)` command prints it. */
const FAULT_NAMES: Readonly<Record<string, number>> = {
  cutBefore: CUT_BEFORE,
  cutAfter: CUT_AFTER,
  cutLate: CUT_LATE,
  stall: STALL,
  stallLate: STALL_LATE,
};

/** A pipe's id by the name the commands print. */
function idOf(name: string): string {
  const pipe = Object.values(PIPES).find((p) => p.name === name);
  if (!pipe) throw new Error(`no pipe named ${name} in the model`);
  return pipe.pipeId;
}

/** The commands of a sequence as fast-check printed it (each command's toString, comma-separated;
 *  a replayPath comment is ignored): what a kept case pastes from the failing run. */
export function fromPrinted(printed: string): Cmd[] {
  const text = printed.replace(/\/\*.*?\*\//g, '').trim();
  const parts = text.match(/[A-Za-z]+(\([^)]*\))?/g) ?? [];
  return parts.map((part) => {
    const [, name, inner = ''] = /^([A-Za-z]+)(?:\((.*)\))?$/.exec(part)!;
    const args = inner.split(',').map((a) => a.trim());
    const n = (a: string | undefined) => Number((a ?? '').replace(/[^0-9.]/g, ''));
    switch (name) {
      case 'tick':
        return new Tick(n(args[0]) * 1000);
      case 'state':
        if (!(STATES as readonly string[]).includes(args[1] ?? '')) throw new Error(`unknown state in ${part}`);
        return new SetState(idOf(args[0]!), args[1] as (typeof STATES)[number]);
      case 'byHand':
        return new ByHand(idOf(args[0]!), n(args[1]));
      case 'faults':
        return new Faults(args.map((a) => FAULT_NAMES[a] ?? n(a)));
      case 'loseRedis':
        return new LoseRedis();
      case 'wipeAtBoundary':
        return new WipeAtBoundary(n(args[0]) * 1000);
      case 'late':
        return new LateAnswers(args.map(n));
      case 'inFlight':
        return new InFlight(idOf(args[0]!), n(args[1]));
      case 'reload':
        return new Reload(args[0] === 'max null' ? null : n(args[0]));
      case 'propagation':
        return new Propagation(n(args[0]) * 1000);
      case 'restartReplica':
        return new Restart();
      default:
        throw new Error(`no command prints as ${part}`);
    }
  });
}

/** Runs a kept case: the sequence fast-check printed for it, through the same builder. */
export function runPrinted(printed: string): Promise<void> {
  return runModel(fromPrinted(printed));
}
