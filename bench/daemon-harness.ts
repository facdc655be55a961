// What the daemon scenarios share: N generated stream pipes in the embedded cloud (its own
// process), a Config for them written in code (one policy, one key), the daemon on a unique Redis
// prefix with a clock the bench sets, and a way to wait for N events of a kind.
import { generatedPipeIds, generateFixtures } from '../src/cloud/index.js';
import { createDaemon, type Daemon, type DaemonEvents } from '../src/daemon/index.js';
import type { PipeConfig, Policy } from '../src/policy/types.js';
import type { Config } from '../src/config/types.js';
import { cloudProcess, type CloudProcess } from './child.js';
import { benchPrefix, connect, deletePrefix, REDIS_URL } from './redis.js';

export interface Harness {
  readonly daemon: Daemon;
  readonly cloud: CloudProcess;
  readonly prefix: string;
  /** The instant the daemon's decide() and ticks read. */
  clock: number;
  close(): Promise<number>;
}

export interface HarnessOptions {
  pipes: number;
  policy: Policy;
  /** The cloud's limit per key; false for none. */
  cloudRateLimit: { requests: number; perMs: number } | false;
  /** The daemon's idea of the key's limit (its apply lane's limiter). */
  keyRateLimit: { requests: number; perMs: number };
  concurrency: number;
  scenario: string;
  /** Changes to the generated config before the daemon starts (more policies, labels, metrics). */
  configure?: (config: Config) => Config;
}

export async function startHarness(o: HarnessOptions): Promise<Harness> {
  const fixtures = generateFixtures({ streamPipes: o.pipes, rateLimit: false });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const cloud = await cloudProcess(fixtures, o.cloudRateLimit);
  const prefix = benchPrefix(o.scenario);
  const pipes: PipeConfig[] = Array.from({ length: o.pipes }, (_, i) => ({
    name: `pipe-${i + 1}`,
    ...generatedPipeIds(i + 1),
    policy: o.policy.name,
    key: 'default',
    bounds: {},
  }));
  const config: Config = {
    api: {
      baseUrl: cloud.url,
      fixtures: '',
      timeoutMs: 30_000,
      keys: { default: { keyId, keySecret, rateLimit: o.keyRateLimit } },
    },
    redis: { url: REDIS_URL, prefix },
    evaluate: { cron: '*/30 * * * * *', reconcileMs: 600_000, concurrency: o.concurrency },
    telemetry: { listen: '127.0.0.1:0', logLevel: 'silent' },
    dryRun: false,
    pipes,
    policies: { [o.policy.name]: o.policy },
  };
  const h = {
    clock: Date.parse('2026-11-23T08:00:00Z'),
    cloud,
    prefix,
  } as Harness;
  const daemon = createDaemon({
    config: o.configure ? o.configure(config) : config,
    prefix,
    redisUrl: REDIS_URL,
    now: () => h.clock,
    schedule: false,
    watch: false,
  });
  Object.assign(h, {
    daemon,
    async close() {
      await daemon.stop({ timeoutMs: 10_000 });
      await cloud.close();
      const redis = connect();
      try {
        return await deletePrefix(redis, prefix);
      } finally {
        await redis.quit();
      }
    },
  });
  await daemon.start();
  return h;
}

/** Resolves when `count` distinct pipes have emitted `event` (optionally filtered), or rejects at the deadline. */
export function waitForPipes<K extends 'evaluation' | 'applied' | 'decision'>(
  daemon: Daemon,
  event: K,
  count: number,
  deadlineMs: number,
  filter: (e: DaemonEvents[K]) => boolean = () => true,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const seen = new Set<string>();
    const timer = setTimeout(() => {
      daemon.emitter.off(event, on);
      reject(new Error(`${seen.size}/${count} pipes emitted ${event} within ${deadlineMs} ms`));
    }, deadlineMs);
    const on = (e: DaemonEvents[K]) => {
      if (!filter(e)) return;
      seen.add(e.pipe);
      if (seen.size === count) {
        clearTimeout(timer);
        daemon.emitter.off(event, on);
        resolve();
      }
    };
    daemon.emitter.on(event, on);
  });
}

/** First contact: the daemon reads every pipe once (through its apply lanes) before it decides. */
export async function firstContact(h: Harness, pipes: number, deadlineMs: number): Promise<void> {
  const read = waitForPipes(h.daemon, 'applied', pipes, deadlineMs);
  await h.daemon.tick(h.clock);
  await read;
}

export const NO_BEHAVIOR: Policy['behavior'] = {
  scaleUp: { maxStep: {}, cooldownMs: 0 },
  scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 0 },
};
