// The fleet of the lead-time tests: N stream pipes on one key against the embedded cloud's own
// limiter (10 per 1 s, the platform's ratio compressed), half under policy 'up', half 'down', both
// at 2 replicas; the daemon's cron ticks every second. `boundary(T)` is the config whose windows
// flip at T: the up pipes to 4, the down pipes to 1.
import type { Redis } from 'ioredis';
import { generatedPipeIds, generateFixtures, startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';
import { createDaemon, type Daemon, type DaemonEmitter } from '../../src/daemon/index.js';
import type { PipeConfig } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { FAST_WORKERS, oneOff, policy, testConfig, until } from './helpers.js';

export const LEAD_RATE = { requests: 10, perMs: 1_000 };

export interface LeadFleet {
  readonly cloud: EmbeddedCloud;
  readonly pipes: readonly PipeConfig[];
  readonly ups: readonly PipeConfig[];
  readonly downs: readonly PipeConfig[];
  readonly config: Config;
  readonly boundary: (T: number) => Config;
}

export async function leadFleet(
  n: number,
  prefix: string,
  evaluate: Partial<Config['evaluate']> = {},
): Promise<LeadFleet> {
  const fixtures = generateFixtures({ streamPipes: n, rateLimit: { requests: LEAD_RATE.requests, per: '1s' } });
  const cloud = await startCloud({ fixtures, port: 0 });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const pipes: PipeConfig[] = Array.from({ length: n }, (_, i) => ({
    name: `stream-${i + 1}`,
    ...generatedPipeIds(i + 1),
    policy: i % 2 === 0 ? 'up' : 'down',
    key: 'default',
    bounds: {},
  }));
  const base = testConfig({
    baseUrl: cloud.url,
    prefix,
    pipes,
    keys: { default: { keyId, keySecret } },
    rateLimit: LEAD_RATE,
    policies: { up: policy('up', { replicas: 2 }), down: policy('down', { replicas: 2 }) },
  });
  const config: Config = { ...base, evaluate: { ...base.evaluate, cron: '* * * * * *', ...evaluate } };
  return {
    cloud,
    pipes,
    ups: pipes.filter((p) => p.policy === 'up'),
    downs: pipes.filter((p) => p.policy === 'down'),
    config,
    boundary: (T) => ({
      ...config,
      policies: {
        up: policy('up', { replicas: 2 }, [oneOff('peak', T, T + 3_600_000, { replicas: 4 })]),
        down: policy('down', { replicas: 2 }, [oneOff('quiet', T, T + 3_600_000, { replicas: 1 })]),
      },
    }),
  };
}

/** The fleet's daemon started, once every pipe is at the baseline (first contact: 1 -> 2). */
export async function startLeadDaemon(
  fleet: LeadFleet,
  redis: Redis,
  prefix: string,
  emitter: DaemonEmitter,
): Promise<Daemon> {
  const { config, cloud, pipes } = fleet;
  const daemon = createDaemon({
    config,
    redis,
    prefix,
    emitter,
    now: () => Date.now(),
    watch: false,
    workerOptions: FAST_WORKERS,
  });
  await daemon.start();
  await until(
    () => pipes.every((p) => cloud.store.pipe(p.pipeId)!.scaling.replicas === 2),
    30_000,
    'every pipe at the baseline',
  );
  return daemon;
}
