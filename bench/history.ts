// Scaling history at fleet size: N copies of the example pipes (config/pipescaler.yaml) with 6
// weeks of outcomes each, written through HistoryStore.append (the daemon's Lua script) into a
// redis-server of this scenario's own (used_memory is the whole server's). The outcomes are the
// example schedules' own changes (simulate() at the daemon's 30 s tick over the 6 weeks, each an
// `applied` with a requestId) plus, per pipe and week, a drift found and corrected, a pause and
// its resume, a skip and a failure that repeats 5 times (collapsed). Figures: the history's Redis
// memory and bytes per entry, and one pipe's `history` over the 6 weeks (read and format as the CLI
// does, in-process: a CLI start adds node's own ~0.3 s).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { viewsFromFixtures } from '../src/cli/pipe-views.js';
import { formatHistory } from '../src/cli/history-output.js';
import { HistoryStore, type Outcome } from '../src/history/index.js';
import { simulate, type PipeView } from '../src/policy/index.js';
import { startRedisServer } from '../test/redis-servers.js';
import { exampleCopies } from './example-copies.js';
import type { Figure } from './stats.js';

export interface Options {
  readonly pipes: number;
}

const DAY_MS = 86_400_000;
const WEEKS = 6;
const TICK_MS = 30_000;
const FROM = Date.parse('2026-10-05T00:00:00Z');
const TO = FROM + WEEKS * 7 * DAY_MS;
const LIMITS = { retentionMs: WEEKS * 7 * DAY_MS, maxEntries: 2_000 };
const READS = 200;
const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

function weeklyExtras(pipe: string, key: string, week: number): Outcome[] {
  const at = FROM + week * 7 * DAY_MS + 2 * DAY_MS + 3_600_000;
  const o: Outcome[] = [
    { pipe, key, outcome: 'drift_found', at, reason: 'drift', before: { replicas: 6 }, after: { replicas: 5 } },
    { pipe, key, outcome: 'drift_corrected', at: at + 30_000, reason: 'applied', requestId: randomUUID() },
    { pipe, key, outcome: 'paused', at: at + 3_600_000, reason: 'paused', message: 'maintenance window INC-4711' },
    { pipe, key, outcome: 'skipped', at: at + 3_630_000, reason: 'paused', message: 'paused: maintenance window' },
    { pipe, key, outcome: 'resumed', at: at + 7_200_000, reason: 'resumed' },
  ];
  for (let i = 0; i < 5; i++)
    o.push({ pipe, key, outcome: 'failed', at: at + 8_000_000 + i * 30_000, reason: 'API_UNAVAILABLE' });
  return o;
}

export async function historyBench(o: Options): Promise<Figure[]> {
  const scenario = 'history';
  const server = await startRedisServer();
  const redis = new Redis(server.url, { maxRetriesPerRequest: null });
  try {
    const { config, fixtures } = exampleCopies(o.pipes);
    const reads = viewsFromFixtures(config, fixtures, 'generated fixtures');
    const views: Record<string, PipeView | undefined> = {};
    for (const [name, r] of Object.entries(reads)) views[name] = r.refused ? undefined : (r.view ?? undefined);
    const changes = simulate(config, views, FROM, TO, TICK_MS);
    const byPipe = new Map<string, Outcome[]>();
    for (const c of changes) {
      const list = byPipe.get(c.pipe) ?? [];
      list.push({
        pipe: c.pipe,
        outcome: 'applied',
        at: c.at,
        reason: c.windows.length > 0 ? 'window' : 'baseline',
        before: c.previous,
        after: c.scaling,
        windows: c.windows,
        key: 'default',
        requestId: randomUUID(),
      });
      byPipe.set(c.pipe, list);
    }
    const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? NaN);
    const before = await used();
    const store = new HistoryStore(redis, '{pipescaler-bench}');
    let written = 0;
    const t0 = performance.now();
    // pipe by pipe, in time order as the daemon writes them; many pipes at once (pipelined)
    const BATCH = 200;
    for (let i = 0; i < config.pipes.length; i += BATCH) {
      await Promise.all(
        config.pipes.slice(i, i + BATCH).map(async (p) => {
          const all = [...(byPipe.get(p.name) ?? [])];
          for (let w = 0; w < WEEKS; w++) all.push(...weeklyExtras(p.name, p.key, w));
          all.sort((a, b) => a.at - b.at);
          for (const out of all) await store.append(out, LIMITS);
          written += all.length;
        }),
      );
      if ((i / BATCH) % 10 === 0) process.stderr.write(`bench: history ${i + BATCH} pipes written\n`);
    }
    const writeS = (performance.now() - t0) / 1000;
    const entries = Number(
      await redis.eval(
        "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do n = n + redis.call('LLEN', k) end return n",
        0,
        '{pipescaler-bench}:ps:history:*',
      ),
    );
    const bytes = (await used()) - before;
    // one pipe's 6 weeks, read and formatted as `pipescaler history PIPE --since 42d` does
    const times: number[] = [];
    for (let r = 0; r < READS; r++) {
      const pipe = config.pipes[(r * 7919) % config.pipes.length]!.name;
      const s = performance.now();
      const page = await store.read(pipe, { since: TO - LIMITS.retentionMs });
      formatHistory(page.entries, 100);
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    const p95 = Math.round((times[Math.floor(times.length * 0.95)] ?? NaN) * 10) / 10;
    const perEntry = Math.round(bytes / entries);
    const note =
      `${o.pipes} copies of the example pipes, ${WEEKS} weeks (${changes.length} scheduled changes + 10 other ` +
      `outcomes per pipe and week), ${written} outcomes written through the append script in ${writeS.toFixed(0)} s ` +
      `-> ${entries} entries (repeats collapsed); own redis-server, used_memory growth`;
    return [
      {
        scenario,
        metric: 'Redis memory of 6 weeks of history',
        value: mb(bytes),
        unit: 'MB',
        n: o.pipes,
        runs: [mb(bytes)],
        goal: '<= 200 MB',
        pass: mb(bytes) <= 200,
        note,
      },
      {
        scenario,
        metric: 'bytes per history entry',
        value: perEntry,
        unit: 'B',
        n: entries,
        runs: [perEntry],
        goal: 'reported',
        pass: true,
      },
      {
        scenario,
        metric: "one pipe's history over 6 weeks, p95",
        value: p95,
        unit: 'ms',
        n: READS,
        runs: [p95],
        goal: '<= 200 ms',
        pass: p95 <= 200,
        note: `read + table of one pipe (${READS} pipes, in-process; the CLI's node start is not included), median ${Math.round(times[Math.floor(times.length / 2)] ?? NaN)} ms`,
      },
    ];
  } finally {
    redis.disconnect();
    await server.stop();
  }
}
