// A reload in the middle of a key's requests. The fleet bench saw 158 429s (all reads, every key at
// once) a window after a SIGHUP: the reload keeps each key's lane and budget as they were (the same
// lane, the same hash in Redis, no pipe enqueued again), but parsing the config of 10,000 pipes holds
// the process' event loop for about 2 s (2.2 s measured on the test machine). Requests the budget had
// marked as sent just before went out after it, while the other replicas had gone on sending a
// window or more of their own: the late ones reached the platform in a window already full. Here a
// small fleet's config is padded with unused policies until its parse takes several of the key's
// windows, another replica (a process of its own) keeps the key busy, and the reload comes right
// after a mark, before its request is written. Real time; the cloud in a process of its own.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { cloudProcess } from '../../bench/child.js';
import { generatedPipeIds, generateFixtures } from '../../src/cloud/index.js';
import { parseConfig } from '../../src/config/index.js';
import { createDaemon, DaemonEmitter, refOf } from '../../src/daemon/index.js';
import { KeyBudget } from '../../src/daemon/lanes/budget.js';
import { redisKeys } from '../../src/daemon/store/redis-keys.js';
import type { ReplicaArgs } from './budget-replica.js';
import { FAST_WORKERS, REDIS_URL, cleanupPrefix, drained, uniquePrefix, until } from './helpers.js';

const prefix = uniquePrefix('reloadstall');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-reloadstall-'));
const N = 30;
const LIMIT = { requests: 10, perMs: 200 };
const env = { RELOAD_STALL_SECRET: 'bench-secret-1-1' };

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

/** The fleet's config, with `padding` unused policies (a large config's parse, without its pipes). */
function configText(baseUrl: string, padding: number): string {
  return stringify(
    {
      api: {
        baseUrl,
        timeout: '5s',
        keyId: 'bench-key-1-1',
        keySecret: '${RELOAD_STALL_SECRET}',
        rateLimit: { requests: LIMIT.requests, per: `${LIMIT.perMs}ms` },
      },
      redis: { url: REDIS_URL, prefix },
      evaluate: { cron: '*/30 * * * * *', reconcile: '24h' },
      telemetry: { listen: '127.0.0.1:0', logLevel: 'silent' },
      pipes: Array.from({ length: N }, (_, i) => ({
        name: `stream-${i + 1}`,
        ...generatedPipeIds(i + 1),
        policy: 'two',
      })),
      policies: {
        two: { baseline: { replicas: 2, replicaCpuMillicores: 250, replicaMemoryGb: 1 } },
        ...Object.fromEntries(
          Array.from({ length: padding }, (_, i) => [`pad-${i}`, { baseline: { replicas: 1 + (i % 5) } }]),
        ),
      },
    },
    { lineWidth: 0 },
  );
}

/** The padding whose parse takes at least `ms` on this machine (doubled until it does). */
function paddingFor(baseUrl: string, ms: number): { padding: number; parseMs: number } {
  for (let padding = 2_000; ; padding *= 2) {
    const text = configText(baseUrl, padding);
    const started = performance.now();
    parseConfig(text, { file: join(dir, 'probe.yaml'), env });
    const parseMs = performance.now() - started;
    if (parseMs >= ms || padding >= 64_000) return { padding, parseMs };
  }
}

describe('a reload while requests are on their way', () => {
  it('whose parse holds the process for windows: the requests marked before it are not sent after it, and the platform answers no 429', async () => {
    const cloud = await cloudProcess(
      generateFixtures({ streamPipes: N, rateLimit: { requests: LIMIT.requests, per: `${LIMIT.perMs}ms` } }),
      LIMIT,
    );
    const path = join(dir, 'fleet.yaml');
    const { padding, parseMs } = paddingFor(cloud.url, 3 * LIMIT.perMs);
    writeFileSync(path, configText(cloud.url, padding));
    const daemon = createDaemon({
      config: path,
      env,
      redis,
      prefix,
      emitter: new DaemonEmitter(),
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    // every pipe seen at 1 replica: each takes one change to 2, 30 changes in three windows
    for (const p of daemon.config().pipes) {
      await daemon.store.write(p.name, {
        kind: 'stream',
        state: 'Running',
        applied: { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 },
        lastReadAt: Date.now(),
        ref: refOf(p),
      });
    }
    // the other replica keeps the key's every window full
    const replicaArgs: ReplicaArgs = {
      redisUrl: REDIS_URL,
      budgetKey: redisKeys(prefix).budget('bench-key-1-1'),
      limit: LIMIT,
      baseUrl: cloud.url,
      keyId: 'bench-key-1-1',
      keySecret: env.RELOAD_STALL_SECRET,
      pipe: generatedPipeIds(1),
    };
    const other = fork(fileURLToPath(new URL('./budget-replica.ts', import.meta.url)), [JSON.stringify(replicaArgs)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    // the reload comes right after this replica's first mark, before its request is written
    // the unspied send, called on each budget (Reflect.get: not a method taken off an object by mistake)
    const send = Reflect.get<KeyBudget, 'send'>(KeyBudget.prototype, 'send');
    const reload: { done?: Promise<boolean>; stallMs?: number } = {};
    const spy = vi.spyOn(KeyBudget.prototype, 'send').mockImplementation(async function (this: KeyBudget, ...args) {
      const unit = await send.apply(this, args);
      if (unit.waitMs === 0 && !reload.done) {
        const started = performance.now();
        reload.done = daemon.reload();
        reload.stallMs = performance.now() - started;
      }
      return unit;
    });
    let otherSent: number | undefined;
    try {
      await once(other, 'message');
      await daemon.start();
      await daemon.tick(Date.now());
      await until(() => reload.done !== undefined, 20_000, 'the reload');
      expect(await reload.done).toBe(true);
      await drained([daemon], 30_000);
      other.send('stop');
      otherSent = Number((await once(other, 'message'))[0]);
    } finally {
      spy.mockRestore();
      if (other.exitCode === null) other.kill();
      await daemon.stop({ timeoutMs: 2_000 });
    }
    const stats = await cloud.stats();
    await cloud.close();
    // the reload held the process for more than a window while the other replica sent (else this case shows nothing)
    expect(reload.stallMs, `the parse took ${parseMs.toFixed(0)} ms`).toBeGreaterThan(LIMIT.perMs);
    expect(otherSent).toBeGreaterThan(2 * LIMIT.requests);
    expect(stats.rateLimited).toBe(0);
    expect(stats.requests.scalePipe).toEqual({ 200: N + (otherSent ?? 0) });
  }, 90_000);
});
