// Redis memory over a long run: N steady pipes at a 10 s cron, the daemon scheduling its
// own ticks on the wall clock, against a redis-server of this scenario's own (used_memory is the
// whole server's, so the shared one would count everyone's keys). Sampled every 15 s; the figure
// is used_memory at the end and its growth after the first 5 minutes (memory must follow the
// number of pipes, not time x pipes). One fresh process; --minutes shortens it.
import { Redis } from 'ioredis';
import { generatedPipeIds, generateFixtures } from '../src/cloud/index.js';
import { createDaemon } from '../src/daemon/index.js';
import type { PipeConfig, Policy } from '../src/policy/types.js';
import type { Config } from '../src/config/types.js';
import { startRedisServer } from '../test/redis-servers.js';
import { cloudProcess, inFreshProcess } from './child.js';
import { NO_BEHAVIOR } from './daemon-harness.js';
import type { Figure } from './stats.js';

export interface Options {
  pipes: number;
  cron: string;
  minutes: number;
}

export interface MemoryRun {
  /** [minutes since start, used_memory MB] */
  samples: [number, number][];
  evaluations: number;
  applies: number;
}

const scenario = 'redis memory';
const WARMUP_MIN = 5;
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

export async function redisMemory(o: Options): Promise<Figure[]> {
  const run = await inFreshProcess<MemoryRun>(
    new URL('./redis-memory.ts', import.meta.url).href,
    o,
    (o.minutes + 10) * 60_000,
  );
  const n = o.pipes;
  const end = run.samples.at(-1)![1];
  const warm = run.samples.filter(([m]) => m >= Math.min(WARMUP_MIN, o.minutes / 2));
  const growth = warm.length > 1 ? Math.max(...warm.map(([, v]) => v)) - warm[0]![1] : 0;
  const note =
    `${o.pipes} steady pipes, cron ${o.cron}, ${o.minutes} min on the wall clock, own redis-server; ` +
    `${run.evaluations} evaluations, ${run.applies} applies; samples (min, MB): ` +
    run.samples
      .filter((_, i) => i % 4 === 0 || i === run.samples.length - 1)
      .map(([m, v]) => `${m.toFixed(1)}:${v}`)
      .join(' ');
  return [
    {
      scenario,
      metric: `used_memory after ${o.minutes} min`,
      value: end,
      unit: 'MB',
      n,
      runs: [end],
      goal: '<= 50 MB',
      pass: end <= 50,
      note,
    },
    {
      scenario,
      metric: `used_memory growth from minute ${Math.min(WARMUP_MIN, o.minutes / 2)} to the end`,
      value: Math.round(growth * 10) / 10,
      unit: 'MB',
      n,
      runs: [growth],
      goal: 'flat (<= 5 MB)',
      pass: growth <= 5,
    },
  ];
}

const STEADY: Policy = {
  name: 'steady',
  baseline: { replicas: { value: 1 }, replicaCpuMillicores: { value: 250 }, replicaMemoryGb: { value: 1 } },
  windows: [],
  behavior: NO_BEHAVIOR,
};

export async function runOnce(o: Options): Promise<MemoryRun> {
  const server = await startRedisServer();
  const fixtures = generateFixtures({ streamPipes: o.pipes, rateLimit: false });
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const cloud = await cloudProcess(fixtures, false);
  const prefix = '{pipescaler-bench}';
  const pipes: PipeConfig[] = Array.from({ length: o.pipes }, (_, i) => ({
    name: `pipe-${i + 1}`,
    ...generatedPipeIds(i + 1),
    policy: STEADY.name,
    key: 'default',
    bounds: {},
  }));
  const config: Config = {
    api: {
      baseUrl: cloud.url,
      fixtures: '',
      timeoutMs: 30_000,
      keys: { default: { keyId, keySecret, rateLimit: { requests: 500, perMs: 1_000 } } },
    },
    redis: { url: server.url, prefix },
    evaluate: { cron: o.cron, reconcileMs: 600_000, concurrency: 10 },
    telemetry: { listen: '127.0.0.1:0', logLevel: 'silent' },
    dryRun: false,
    pipes,
    policies: { [STEADY.name]: STEADY },
  };
  const daemon = createDaemon({ config, prefix, redisUrl: server.url, watch: false });
  let evaluations = 0;
  let applies = 0;
  daemon.emitter.on('evaluation', () => evaluations++);
  daemon.emitter.on('apply:start', () => applies++);
  const probe = new Redis(server.url);
  const samples: [number, number][] = [];
  const t0 = Date.now();
  const sample = async () => {
    const info = await probe.info('memory');
    const used = Number(/used_memory:(\d+)/.exec(info)![1]);
    samples.push([(Date.now() - t0) / 60_000, mb(used)]);
  };
  try {
    await daemon.start();
    await sample();
    while (Date.now() - t0 < o.minutes * 60_000) {
      await new Promise((r) => setTimeout(r, 15_000));
      await sample();
      const last = samples.at(-1)!;
      if (samples.length % 4 === 0)
        process.stderr.write(
          `bench: redis memory ${last[0].toFixed(1)} min: ${last[1]} MB, ${evaluations} evaluations\n`,
        );
    }
    return { samples, evaluations, applies };
  } finally {
    await daemon.stop({ timeoutMs: 5_000 });
    probe.disconnect();
    await cloud.close();
    await server.stop();
  }
}
