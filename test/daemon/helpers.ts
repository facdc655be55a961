// Shared by the daemon tests: unique Redis prefixes and their cleanup, a normalized Config built
// in code, and bounded waits on events and on drained queues (never a sleep for correctness).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll } from 'vitest';
import type { ScalingValues } from '../../src/api/index.js';
import { generatedPipeIds, generateFixtures, startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { createDaemon, type Daemon, type DaemonEmitter, type DaemonEvents } from '../../src/daemon/index.js';
import type { Behavior, PipeConfig, Policy, Target, Window } from '../../src/policy/types.js';
import type { ApiKeyConfig, Config } from '../../src/config/types.js';
import { TEST_REDIS_URL } from '../test-redis.js';

/** The test Redis (test/test-redis.ts: PIPESCALER_TEST_REDIS_URL). */
export const REDIS_URL = TEST_REDIS_URL;

const runFile = promisify(execFile);

export function uniquePrefix(name: string): string {
  return `pstest-${name}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

async function deleteMatching(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** Delete every key under the prefix (ours and BullMQ's). */
export async function cleanupPrefix(redis: Redis, prefix: string): Promise<void> {
  await deleteMatching(redis, `${prefix}:*`);
}

/** The daemon's own keys (`<prefix>:ps:*`, the marker with them) deleted, BullMQ's kept: as a Redis
 *  that lost the daemon's state while its queues live on leaves them. */
export async function wipeState(redis: Redis, prefix: string): Promise<void> {
  await deleteMatching(redis, `${prefix}:ps:*`);
}

/** A test file's Redis connection and prefixes: after its tests every key under each prefix it
 *  handed out is deleted and the connection closed. */
export function testRedis(): { readonly redis: Redis; readonly prefix: (name: string) => string } {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const prefixes: string[] = [];
  afterAll(async () => {
    for (const p of prefixes) await cleanupPrefix(redis, p);
    redis.disconnect();
  });
  return {
    redis,
    prefix: (name) => {
      const p = uniquePrefix(name);
      prefixes.push(p);
      return p;
    },
  };
}

export function target(values: ScalingValues): Target {
  return Object.fromEntries(Object.entries(values).map(([f, v]) => [f, { value: v }]));
}

export const NO_BEHAVIOR: Behavior = {
  scaleUp: { maxStep: {}, cooldownMs: 0 },
  scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 0 },
};

export function policy(
  name: string,
  baseline: ScalingValues,
  windows: Window[] = [],
  behavior: Behavior = NO_BEHAVIOR,
): Policy {
  return { name, baseline: target(baseline), windows, behavior };
}

/** A policy at `baseline` with one one-off window `[from, from + 1 h)` at `peak`, no step, cooldown or
 *  stabilization, and the scale-up's lead time `leadMs`. */
export function peakPolicy(
  name: string,
  from: number,
  leadMs: number,
  baseline: ScalingValues = { replicas: 2 },
  peak: ScalingValues = { replicas: 4 },
): Policy {
  const behavior = { ...NO_BEHAVIOR, scaleUp: { ...NO_BEHAVIOR.scaleUp, leadTime: leadMs } };
  return policy(name, baseline, [oneOff(name, from, from + 3_600_000, peak)], behavior);
}

export function oneOff(name: string, from: number, to: number, values: ScalingValues, priority = 0): Window {
  return { kind: 'oneOff', name, from, to, priority, target: target(values) };
}

/** The ids of the demo organization of config/cloud.yaml (also in test/api/demo.ts). */
export const DEMO = {
  org: '5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b',
  analytics: 'a1000000-0000-4000-8000-000000000001',
  staging: 'a1000000-0000-4000-8000-000000000002',
  keyId: 'pipescaler-demo-key',
  keySecret: 'demo-secret-change-me',
  pipes: {
    'orders-events': 'b1000000-0000-4000-8000-000000000001',
    clickstream: 'b1000000-0000-4000-8000-000000000002',
    'payments-msk': 'b1000000-0000-4000-8000-000000000003',
    'nightly-s3': 'b1000000-0000-4000-8000-000000000005',
  },
} as const;

/** What orders-events (DEMO.pipes) runs in config/cloud.yaml. */
export const ORDERS_SCALING = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 } as const;

export function demoPipe(name: keyof typeof DEMO.pipes, policyName: string, key = 'default'): PipeConfig {
  return {
    name,
    organizationId: DEMO.org,
    serviceId: DEMO.analytics,
    pipeId: DEMO.pipes[name],
    policy: policyName,
    key,
    bounds: {},
  };
}

/** The first n stream pipes of generated fixtures (src/cloud generateFixtures), as a config names them. */
export function generatedPipes(n: number, policyName: string, key = 'default'): PipeConfig[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `stream-${i + 1}`,
    ...generatedPipeIds(i + 1),
    policy: policyName,
    key,
    bounds: {},
  }));
}

/** The embedded cloud of config/cloud.yaml (the demo pipes, DEMO) over HTTP with no rate limit, on the
 *  test's clock (default the wall clock). */
export function demoCloud(now?: () => number): Promise<EmbeddedCloud> {
  return startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false, ...(now ? { now } : {}) });
}

/** An embedded cloud over HTTP on the test's clock with generated stream pipes, one a name (in order),
 *  each with its propagation delay (none: at once), all on `policyName` and the key `default`. */
export async function streamCloud(
  now: () => number,
  names: readonly string[],
  policyName: string,
  propagation: readonly (number | string)[] = [],
): Promise<{
  readonly cloud: EmbeddedCloud;
  readonly pipes: PipeConfig[];
  readonly keys: TestConfigOptions['keys'];
  /** The replicas the platform runs for the pipe at index i. */
  readonly replicas: (i: number) => number | null | undefined;
}> {
  const fixtures = generateFixtures({ streamPipes: names.length });
  fixtures.propagation = {
    pipes: Object.fromEntries(propagation.map((p, i) => [generatedPipeIds(i + 1).pipeId, p])),
  };
  const cloud = await startCloud({ fixtures, port: 0, rateLimit: false, now });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const pipes = names.map((name, i) => ({
    name,
    ...generatedPipeIds(i + 1),
    policy: policyName,
    key: 'default',
    bounds: {},
  }));
  const replicas = (i: number) => cloud.store.pipe(generatedPipeIds(i + 1).pipeId)?.scaling.replicas;
  return { cloud, pipes, keys: { default: { keyId, keySecret } }, replicas };
}

export interface TestConfigOptions {
  readonly baseUrl: string;
  readonly pipes: readonly PipeConfig[];
  readonly policies: Readonly<Record<string, Policy>>;
  readonly keys?: Readonly<Record<string, Pick<ApiKeyConfig, 'keyId' | 'keySecret'> & Partial<ApiKeyConfig>>>;
  readonly rateLimit?: ApiKeyConfig['rateLimit'];
  readonly prefix: string;
  readonly dryRun?: boolean;
  readonly reconcileMs?: number;
}

export function testConfig(o: TestConfigOptions): Config {
  const rateLimit = o.rateLimit ?? { requests: 1000, perMs: 1000 };
  const keys = o.keys ?? { default: { keyId: DEMO.keyId, keySecret: DEMO.keySecret } };
  return {
    api: {
      baseUrl: o.baseUrl,
      fixtures: 'config/cloud.yaml',
      timeoutMs: 5_000,
      keys: Object.fromEntries(Object.entries(keys).map(([n, k]) => [n, { rateLimit, ...k }])),
    },
    redis: { url: REDIS_URL, prefix: o.prefix },
    evaluate: { cron: '*/30 * * * * *', reconcileMs: o.reconcileMs ?? 600_000, concurrency: 10 },
    telemetry: { listen: '127.0.0.1:0', logLevel: 'silent' },
    dryRun: o.dryRun ?? false,
    pipes: o.pipes,
    policies: o.policies,
  };
}

export interface TestDaemonOptions {
  readonly config: Config;
  readonly redis: Redis;
  readonly prefix: string;
  readonly now: () => number;
  readonly emitter?: DaemonEmitter;
}

/** A daemon as the tests run it, not started: on the test's clock, its ticks driven by the test (no
 *  cron), no config watch, FAST_WORKERS. */
export function testDaemon(o: TestDaemonOptions): Daemon {
  return createDaemon({ ...o, schedule: false, watch: false, workerOptions: FAST_WORKERS });
}

/** A pipe of the daemon's config by name: operator state (pauses, overrides) goes by its ids. */
export function pipeOf(daemon: Daemon, name: string): PipeConfig {
  const found = daemon.config().pipes.find((p) => p.name === name);
  if (!found) throw new Error(`no pipe ${name} in the daemon's config`);
  return found;
}

/** Test worker settings: a killed worker's job comes back in about a second, not thirty. */
export const FAST_WORKERS = { stalledInterval: 1_000, lockDuration: 2_000, drainDelay: 1 } as const;

/** Resolve with the first event matching `pred`, or reject after timeoutMs. */
export function waitForEvent<K extends keyof DaemonEvents>(
  emitter: DaemonEmitter,
  event: K,
  pred: (p: DaemonEvents[K]) => boolean = () => true,
  timeoutMs = 20_000,
): Promise<DaemonEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${event}`));
    }, timeoutMs);
    const listener = (p: DaemonEvents[K]) => {
      if (!pred(p)) return;
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(p);
    };
    emitter.on(event, listener);
  });
}

/** Poll until `check` holds (bounded): for conditions that have no event of their own. */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const PENDING = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/** Every queue of every daemon empty twice in a row (a job may enqueue the next in between). */
export async function drained(daemons: readonly Daemon[], timeoutMs = 20_000): Promise<void> {
  let quiet = 0;
  await until(
    async () => {
      let pending = 0;
      for (const d of daemons) {
        for (const q of d.queues()) {
          const counts = await q.getJobCounts(...PENDING);
          pending += Object.values(counts).reduce((a, b) => a + b, 0);
        }
      }
      quiet = pending === 0 ? quiet + 1 : 0;
      return quiet >= 2;
    },
    timeoutMs,
    'queues to drain',
  );
}

/** Collect every event of a kind while a test runs. */
export function collect<K extends keyof DaemonEvents>(emitter: DaemonEmitter, event: K): DaemonEvents[K][] {
  const out: DaemonEvents[K][] = [];
  emitter.on(event, (p) => out.push(p));
  return out;
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built CLI (`npm run build` first) with `args` and `-c config`, in this environment plus `env`. */
export async function runCli(
  env: Readonly<Record<string, string>>,
  args: readonly string[],
  config = 'config/pipescaler.yaml',
): Promise<CliResult> {
  try {
    const { stdout, stderr } = await runFile(process.execPath, ['dist/cli/main.js', ...args, '-c', config], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as CliResult;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
