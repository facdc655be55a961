// `npm run bench`: every benchmark scenario, a table on stdout and bench/results.json. A scenario
// whose part of the product is missing from this checkout is listed as "not run", never estimated.
// Options: --quick (smaller N, 3 runs), --actuation-pipes <n> (the actuation scenario's size), --only <client|economy|simulate|steady|metric|forecast|recommend|boundary|redis-memory|history|budget|budget-cold|actuation|scrape|fleet> (repeatable; the
// other scenarios' figures are kept from the previous results.json, each with its measuredAt),
// --minutes N (redis-memory's length, default 30).
import { fileURLToPath } from 'node:url';
import { connect, deleteBenchLeftovers } from './redis.js';
import { machine, notRun, readResults, table, writeResults, type Figure } from './stats.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.flatMap((a, i) => (a === '--only' && args[i + 1] ? [args[i + 1]!] : []));
const wanted = (name: string) => only.length === 0 || only.includes(name);

/** Why a part is missing from this checkout, or null when it is there. */
async function missing(module: string, exportName: string, what: string): Promise<string | null> {
  try {
    const mod = (await import(module)) as Record<string, unknown>;
    return typeof mod[exportName] === 'function' ? null : `${what} missing from this checkout`;
  } catch {
    return `${what} missing from this checkout`;
  }
}

async function scenario(name: string, run: () => Promise<Figure[]>, fallback: Figure): Promise<Figure[]> {
  const t0 = performance.now();
  process.stderr.write(`bench: ${name}...\n`);
  try {
    const figures = await run();
    process.stderr.write(`bench: ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    return figures;
  } catch (err) {
    process.stderr.write(`bench: ${name} failed: ${(err as Error).stack ?? String(err)}\n`);
    return [{ ...fallback, note: `failed: ${(err as Error).message.split('\n')[0]}` }];
  }
}

const startedAt = new Date();
const m = machine();
const figures: Figure[] = [];

if (wanted('client')) {
  const why = await missing('../src/api/index.js', 'ApiClient', 'the API client (src/api/client.ts)');
  const n = quick ? 2_000 : 5_000;
  if (why) figures.push(notRun('client overhead', 'client / bare', n, '>= 0.8', why));
  else {
    const { clientOverhead } = await import('./client-overhead.js');
    figures.push(
      ...(await scenario(
        'client overhead',
        () => clientOverhead({ n, concurrency: 16, runs: quick ? 3 : 7 }),
        notRun('client overhead', 'client / bare', n, '>= 0.8', ''),
      )),
    );
  }
}

const daemonMissing = await missing('../src/daemon/index.js', 'createDaemon', 'the daemon (src/daemon createDaemon)');

if (wanted('economy')) {
  const why =
    (await missing('../src/policy/index.js', 'simulate', 'simulate() (src/policy/simulate.ts)')) ??
    (await missing('../src/config/index.js', 'loadConfig', 'the config loader')) ??
    (await missing('../src/api/index.js', 'ApiClient', 'the API client (src/api/client.ts)')) ??
    (await missing('../src/cli/pipe-views.js', 'viewsFromFixtures', 'viewsFromFixtures (src/cli/pipe-views.ts)'));
  const pipes = quick ? 100 : 1_000;
  if (why) figures.push(notRun('api economy', 'PATCH calls / changes required', pipes, '1.00', why));
  else {
    const { apiEconomy } = await import('./api-economy.js');
    figures.push(
      ...(await scenario(
        'api economy',
        () => apiEconomy({ pipes, runs: 3, daemonMissing, daemonPipes: quick ? 9 : 18 }),
        notRun('api economy', 'PATCH calls / changes required', pipes, '1.00', ''),
      )),
    );
  }
}

if (wanted('simulate')) {
  const { simulateSpeed } = await import('./simulate-speed.js');
  figures.push(
    ...(await scenario(
      'simulate',
      () => simulateSpeed({ pipes: 1_000, runs: quick ? 1 : 3 }),
      notRun('simulate', 'a year, 1,000 pipes', 1_000, '<= 10 s', ''),
    )),
  );
}

if (wanted('steady')) {
  const { steadyTick } = await import('./steady-tick.js');
  const pipes = 10_000;
  figures.push(
    ...(await scenario(
      'steady tick',
      () => steadyTick({ pipes, concurrency: 10, runs: 3, daemonMissing }),
      notRun('steady tick', 'daemon / floor', pipes, '<= 1.5', ''),
    )),
  );
}

if (wanted('metric')) {
  // needs Debian's prometheus (test/prometheus.ts starts it on a free port)
  const { metricTick } = await import('./metric.js');
  const pipes = 10_000;
  figures.push(
    ...(await scenario(
      'metric tick',
      // 5 pairs: one pair's ratio ranges 1.03-1.80 on this 2-core VM (Prometheus shares it)
      () => metricTick({ pipes, policies: 10, concurrency: 10, runs: 5 }),
      notRun('metric tick', 'metric tick / schedule-only tick', pipes, '<= 1.3', ''),
    )),
  );
}

if (wanted('forecast')) {
  // needs Debian's prometheus and promtool (the trace is backfilled into a real server)
  const { forecastBench } = await import('./forecast.js');
  figures.push(
    ...(await scenario(
      'forecast',
      () => forecastBench(),
      notRun('forecast', 'hourly-peak error, last week of a 14-day trace in Prometheus', 168, '<= 0.15', ''),
    )),
  );
}

if (wanted('recommend')) {
  const { recommendBench } = await import('./recommend.js');
  figures.push(
    ...(await scenario(
      'recommend',
      () => Promise.resolve(recommendBench()),
      notRun('recommend', 'CPU time, 28 days of 1-min data', 200, '<= 60 (>= 200 candidates)', ''),
    )),
  );
}

if (wanted('boundary')) {
  const pipes = 1_000;
  if (daemonMissing) {
    figures.push(notRun('boundary', 'time to all applied / (N / rate)', pipes, '<= 1.2', daemonMissing));
    figures.push(notRun('boundary', '429s at the cloud', pipes, '0', daemonMissing));
  } else {
    const { boundary } = await import('./boundary.js');
    figures.push(
      ...(await scenario(
        'boundary',
        () => boundary({ pipes, ratePerSecond: 100, runs: 3 }),
        notRun('boundary', 'time to all applied / (N / rate)', pipes, '<= 1.2', ''),
      )),
    );
  }
}

if (wanted('redis-memory')) {
  // Long by nature (30 minutes on the wall clock); --minutes N shortens it.
  const minutes = Number(args[args.indexOf('--minutes') + 1] ?? NaN);
  const { redisMemory } = await import('./redis-memory.js');
  figures.push(
    ...(await scenario(
      'redis memory',
      () =>
        redisMemory({
          pipes: 2_000,
          cron: '*/10 * * * * *',
          minutes: args.includes('--minutes') && minutes > 0 ? minutes : 30,
        }),
      notRun('redis memory', 'used_memory after 30 min', 2_000, '<= 50 MB', ''),
    )),
  );
}

if (wanted('history')) {
  const pipes = quick ? 1_000 : 10_000;
  const why = await missing('../src/history/index.js', 'HistoryStore', 'the scaling history (src/history)');
  if (why) figures.push(notRun('history', 'Redis memory of 6 weeks of history', pipes, '<= 200 MB', why));
  else {
    const { historyBench } = await import('./history.js');
    figures.push(
      ...(await scenario(
        'history',
        () => historyBench({ pipes }),
        notRun('history', 'Redis memory of 6 weeks of history', pipes, '<= 200 MB', ''),
      )),
    );
  }
}

// Only on request (--only budget-cold): the budget scenario's two cold starts alone (first deploy
// with an empty Redis, restart with Redis intact), about 6 minutes at 1,200 pipes.
if (only.includes('budget-cold')) {
  const pipes = quick ? 300 : 1_200;
  const { budget } = await import('./budget.js');
  figures.push(
    ...(await scenario(
      'budget',
      () => budget({ pipes, steadyMs: 0, coldOnly: true }),
      notRun('budget', 'first deploy: time to all at target / (N / rate)', pipes, '<= 2.1', ''),
    )),
  );
}

// Only on request (--only budget): it runs for about 40 minutes (30 of them the steady phase, 30
// compressed minutes: about four reconcile periods of 1,200 pipes), the platform's ratio kept.
if (only.includes('budget')) {
  const pipes = quick ? 300 : 1_200;
  if (daemonMissing)
    figures.push(notRun('budget', 'first deploy: time to all at target / (N / rate)', pipes, '<= 2.1', daemonMissing));
  else {
    const { budget } = await import('./budget.js');
    figures.push(
      ...(await scenario(
        'budget',
        () => budget({ pipes, steadyMs: quick ? 300_000 : 1_800_000 }),
        notRun('budget', 'first deploy: time to all at target / (N / rate)', pipes, '<= 2.1', ''),
      )),
    );
  }
}

// Only on request (--only actuation): about an hour and a half (a cold start and eight boundaries of 1,200
// pipes, 10x compressed as budget; the phases counting the actuation lead by their confirmation
// reads, about 9 minutes each, and each waits for the confirmation reads of the one before),
// propagation 30 s and 3 min on the platform's scale.
if (only.includes('actuation')) {
  // --actuation-pipes <n>: a size of one's own (half scale up, half down at each boundary)
  const sized = Number(args[args.indexOf('--actuation-pipes') + 1]);
  const pipes = args.includes('--actuation-pipes') && sized > 0 ? sized : quick ? 300 : 1_200;
  const metric =
    '3.0 min propagation, lead counting the measured actuation: scale-ups confirmed at target by the daemon by T';
  if (daemonMissing) figures.push(notRun('actuation', metric, pipes, '>= 0.99', daemonMissing));
  else {
    const { actuation } = await import('./actuation.js');
    figures.push(
      ...(await scenario('actuation', () => actuation({ pipes }), notRun('actuation', metric, pipes, '>= 0.99', ''))),
    );
  }
}

// Only on request (--only fleet): 10,000 pipes on 10 keys, 3 replicas on one Redis, one boundary
// with a replica killed during its lead (bench/daemon-fleet.ts); about 15 minutes at 10x.
// --fleet-pipes <n>, --fleet-keys <n>, --fleet-compression <c> (a divisor of 30), --fleet-measured
// (the plan counts the actuation measured at the cold start instead of the propagation configured),
// --fleet-no-kill (no replica killed: the same boundary for comparison), --fleet-logs <dir> (each
// replica process's whole output kept there, replica-<label>.log), --fleet-profile <dir> (each
// replica's CPU profile written there at its clean stop; the killed one writes none),
// --fleet-replicas <n> (3).
if (only.includes('fleet')) {
  const num = (flag: string, fallback: number) => {
    const v = Number(args[args.indexOf(flag) + 1]);
    return args.includes(flag) && v > 0 ? v : fallback;
  };
  const o = {
    pipes: num('--fleet-pipes', quick ? 300 : 10_000),
    keys: num('--fleet-keys', quick ? 3 : 10),
    replicas: num('--fleet-replicas', 3),
    compression: num('--fleet-compression', 10),
    measured: args.includes('--fleet-measured'),
    kill: !args.includes('--fleet-no-kill'),
    ...(args.includes('--fleet-logs') ? { logs: args[args.indexOf('--fleet-logs') + 1] } : {}),
    ...(args.includes('--fleet-profile') ? { profile: args[args.indexOf('--fleet-profile') + 1] } : {}),
  };
  const metric = 'scale-ups confirmed at target by T, the lowest key';
  if (daemonMissing) figures.push(notRun('fleet', metric, o.pipes, '>= 0.999', daemonMissing));
  else {
    const { fleet } = await import('./fleet.js');
    figures.push(...(await scenario('fleet', () => fleet(o), notRun('fleet', metric, o.pipes, '>= 0.999', ''))));
  }
}

if (wanted('scrape')) {
  // needs Debian's prometheus for its last figure (test/prometheus.ts starts it on a free port)
  const { scrapeBench } = await import('./scrape.js');
  const pipes = quick ? 2_000 : 10_000;
  figures.push(
    ...(await scenario(
      'scrape',
      () => scrapeBench({ pipes, concurrent: 200, runs: quick ? 3 : 7 }),
      notRun('scrape', 'one scrape', pipes, '<= 5 MB', ''),
    )),
  );
}

const out = fileURLToPath(new URL('./results.json', import.meta.url));
const measuredAt = new Date().toISOString();
const command = ['npm run bench --', ...args].join(' ');
const fresh = figures.map((f) => ({ ...f, measuredAt: f.measuredAt ?? measuredAt, command: f.command ?? command }));
const ran = new Set(fresh.map((f) => f.scenario));
// --only budget-cold measures part of the budget scenario: its other figures are kept (the cold
// start's old names, from before a pipe never seen was read first, are dropped).
const partial = only.includes('budget-cold') && !only.includes('budget');
// --only fleet replaces the figures of its own compression and kill ("10x: ...", "10x, no kill: ...")
// and keeps the others'.
const compressionOf = (f: Figure) => /^(\d+x[^:]*): /.exec(f.metric)?.[1];
const replaced = (f: Figure) =>
  f.scenario === 'fleet'
    ? fresh.some((x) => x.scenario === 'fleet' && compressionOf(x) === compressionOf(f))
    : partial && f.scenario === 'budget'
      ? fresh.some((x) => x.scenario === f.scenario && x.metric === f.metric) || f.metric.startsWith('cold start:')
      : ran.has(f.scenario);
const ORDER = [
  'client overhead',
  'api economy',
  'simulate',
  'steady tick',
  'metric tick',
  'forecast',
  'recommend',
  'boundary',
  'redis memory',
  'budget',
  'actuation',
  'fleet',
  'scrape',
];
const merged = [...(only.length > 0 ? readResults(out).filter((f) => !replaced(f)) : []), ...fresh].sort(
  (a, b) => ORDER.indexOf(a.scenario) - ORDER.indexOf(b.scenario),
);
console.log(table(merged, m));
writeResults(out, merged, m, startedAt);
console.log(`\nwritten: ${out}`);
const redis = connect();
const left = await deleteBenchLeftovers(redis);
await redis.quit();
if (left > 0) console.log(`deleted ${left} Redis keys a failed scenario left behind`);
