// The daemon's own PATCH count (api-economy.ts), in a fresh process: copies of the example's
// pipes, the daemon on a clock the bench moves tick by tick (30 s) through a span, each tick
// drained (every evaluation and apply done) before the next; a counting proxy between the daemon
// and the cloud tells change PATCHes from reads. simulate() over the same pipes and span gives the
// changes required. The first tick of the span is also the daemon's first contact (it reads each
// pipe, then decides at that same tick), as simulate() starts from the pipes as they are. A pipe
// whose kind the daemon knows is met by its first change instead of a read: when the pipe already
// had those values (nothing to change) or refuses them (a Completed pipe: 400, then a read), that
// request is the pipe's first contact, counted apart from the changes.
import { setTimeout as sleep } from 'node:timers/promises';
import { viewsFromFixtures } from '../src/cli/pipe-views.js';
import { createDaemon } from '../src/daemon/index.js';
import { simulate } from '../src/policy/index.js';
import type { PipeView } from '../src/policy/types.js';
import { cloudProcess } from './child.js';
import { countingProxy, type PatchCounts, type Scaling } from './counting-proxy.js';
import { exampleCopies } from './example-copies.js';
import { benchPrefix, connect, deletePrefix, REDIS_URL } from './redis.js';

export interface DaemonEconomyArgs {
  pipes: number;
  from: number;
  to: number;
  deadlineMs: number;
}

export interface DaemonEconomyResult {
  required: number;
  counts: PatchCounts;
  ticks: number;
  ms: number;
}

const TICK_MS = 30_000;

export async function runOnce(a: DaemonEconomyArgs): Promise<DaemonEconomyResult> {
  const { config, fixtures } = exampleCopies(a.pipes);
  const reads = viewsFromFixtures(config, fixtures, 'generated fixtures');
  const views: Record<string, PipeView | undefined> = {};
  for (const [name, r] of Object.entries(reads)) views[name] = r.refused ? undefined : (r.view ?? undefined);
  const required = simulate(config, views, a.from, a.to, TICK_MS).length;

  const cloud = await cloudProcess(fixtures, false);
  // The pipes' values before the day: a first contact sent as a change that keeps them (or that
  // the platform refuses) is told apart from a change (counting-proxy.ts).
  const start = new Map(
    fixtures.organizations
      .flatMap((g) => g.services.flatMap((s) => s.pipes))
      .map((p) => [p.id.toLowerCase(), p.scaling as Scaling] as const),
  );
  const proxy = await countingProxy(cloud.url, undefined, start);
  const prefix = benchPrefix('economy');
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  let clock = a.from;
  const daemon = createDaemon({
    config: { ...config, redis: { url: REDIS_URL, prefix } },
    prefix,
    redisUrl: REDIS_URL,
    now: () => clock,
    schedule: false,
    watch: false,
    // No rate limit: the count is the point here, not the pacing.
    api: { baseUrl: proxy.url, keys: { default: { keyId, keySecret, rateLimit: { requests: 1_000, perMs: 1_000 } } } },
  });
  const stopAt = performance.now() + a.deadlineMs;
  const drain = async () => {
    for (;;) {
      const counts = await Promise.all(
        daemon.queues().map((q) => q.getJobCounts('waiting', 'active', 'delayed', 'prioritized')),
      );
      if (counts.every((c) => Object.values(c).every((v) => v === 0))) return;
      if (performance.now() > stopAt)
        throw new Error(`daemon economy: not drained within ${a.deadlineMs} ms at ${new Date(clock).toISOString()}`);
      await sleep(2);
    }
  };
  let ticks = 0;
  const t0 = performance.now();
  try {
    await daemon.start();
    for (clock = a.from; clock < a.to; clock += TICK_MS) {
      await daemon.tick(clock);
      await drain();
      ticks += 1;
    }
    return { required, counts: structuredClone(proxy.counts), ticks, ms: performance.now() - t0 };
  } finally {
    await daemon.stop({ timeoutMs: 10_000 });
    await proxy.close();
    await cloud.close();
    const redis = connect();
    await deletePrefix(redis, prefix);
    await redis.quit();
  }
}
