// Scrape: the telemetry of 10,000 pipes (20 policies, 10 API keys), fed through the daemon's own
// event path (startDaemonTelemetry, test/telemetry/fleet-events.ts: every per-pipe event of a
// steady tick, twice). Figures: one scrape's bytes and lines and the series per pipe (default and
// per-pipe detail), the CPU of one render, and 200 concurrent scrapes from another process: renders
// made, the event loop's longest stall, peak RSS. Then 3 replicas (3 telemetry servers, each with
// every pipe, as replicas have after a while) scraped with a bearer token by a real Prometheus:
// its active series. Command: npm run bench -- --only scrape
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Gauge, Registry } from 'prom-client';
import { DaemonEmitter } from '../src/daemon/model/events.js';
import { createLogger, startDaemonTelemetry, type DaemonTelemetry } from '../src/telemetry/index.js';
import { renderRegistry } from '../src/telemetry/fast-exposition.js';
import { startPrometheus } from '../test/prometheus.js';
import { emitFleetTick, fleetPipes, type FleetPipe } from '../test/telemetry/fleet-events.js';
import { median, type Figure } from './stats.js';

const scenario = 'scrape';
const COMMAND = 'npm run bench -- --only scrape';

export interface Options {
  readonly pipes: number;
  readonly concurrent: number;
  readonly runs: number;
}

interface Replica {
  readonly emitter: DaemonEmitter;
  readonly telemetry: DaemonTelemetry;
  readonly registry: Registry;
  readonly renders: () => number;
}

async function replica(pipes: readonly FleetPipe[], perPipeDetail: boolean, token?: string): Promise<Replica> {
  const emitter = new DaemonEmitter();
  const registry = new Registry();
  let renders = 0;
  new Gauge({
    name: 'bench_renders',
    help: 'renders of this registry',
    registers: [registry],
    collect() {
      renders += 1;
      this.set(renders);
    },
  });
  const config = {
    pipes,
    evaluate: { reconcileMs: 600_000 },
    telemetry: {
      listen: '127.0.0.1:0',
      perPipeDetail,
      ...(token !== undefined ? { auth: { type: 'bearer' as const, token } } : {}),
    },
    api: { keys: Object.fromEntries(pipes.map((p) => [p.key, {}])) },
  };
  const telemetry = await startDaemonTelemetry({
    emitter,
    logger: createLogger({ level: 'silent', pretty: false }),
    config: () => config,
    queues: () => [],
    registry,
  });
  emitFleetTick(emitter, pipes, 0);
  emitFleetTick(emitter, pipes, 1);
  return { emitter, telemetry, registry, renders: () => renders };
}

function seriesPerPipe(text: string): number {
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const pipe = /[{,]pipe="([^"]*)"/.exec(line)?.[1];
    if (pipe !== undefined) counts.set(pipe, (counts.get(pipe) ?? 0) + 1);
  }
  return Math.max(0, ...counts.values());
}

const samples = (text: string): number => text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;

/** `n` scrapes at once from a child process (so its buffers are not this process's RSS). */
function burst(url: string, n: number): Promise<{ ok: number; bytes: number; ms: number }> {
  const script = `
    const http = require('node:http');
    const agent = new http.Agent({ keepAlive: false, maxSockets: ${n} });
    const t0 = Date.now();
    let ok = 0, bytes = 0, done = 0;
    for (let i = 0; i < ${n}; i++) {
      http.get(${JSON.stringify(`${url}/metrics`)}, { agent }, (res) => {
        res.on('data', (c) => { bytes += c.length; });
        res.on('end', () => { if (res.statusCode === 200) ok++; if (++done === ${n}) finish(); });
      }).on('error', () => { if (++done === ${n}) finish(); });
    }
    function finish() { process.stdout.write(JSON.stringify({ ok, bytes, ms: Date.now() - t0 })); }
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as { ok: number; bytes: number; ms: number })
        : reject(new Error(`exit ${code}`)),
    );
  });
}

const mb = (bytes: number): number => Math.round((bytes / 2 ** 20) * 100) / 100;

export async function scrapeBench(o: Options): Promise<Figure[]> {
  const n = o.pipes;
  const pipes = fleetPipes({ pipes: n, policies: 20, keys: 10 });
  const figures: Figure[] = [];
  const fig = (f: Omit<Figure, 'scenario' | 'n'> & { n?: number }): void => {
    figures.push({ scenario, n, ...f, note: f.note === undefined ? COMMAND : `${f.note}; ${COMMAND}` });
  };

  const r = await replica(pipes, false);
  const text = await (await fetch(`${r.telemetry.url}/metrics`)).text();
  const bytes = Buffer.byteLength(text);
  const perPipe = seriesPerPipe(text);
  fig({
    metric: 'one scrape',
    value: mb(bytes),
    unit: 'MB',
    runs: [],
    goal: '<= 5 MB',
    pass: bytes <= 5 * 2 ** 20,
    note: `${samples(text)} samples`,
  });
  fig({
    metric: 'series per pipe, at most',
    value: perPipe,
    unit: 'series',
    runs: [],
    goal: '<= 10',
    pass: perPipe <= 10,
  });

  // concurrent scrapes from another process, while a 100 ms ticker and the event-loop monitor
  // watch for stalls and RSS is sampled
  // past the 1 s a render answers scrapes on new connections: the burst makes its own
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const rendersBefore = r.renders();
  const loop = monitorEventLoopDelay({ resolution: 10 });
  let rss = process.memoryUsage().rss;
  const rssBefore = rss;
  let lateMax = 0;
  let expected = performance.now() + 100;
  const ticker = setInterval(() => {
    const t = performance.now();
    lateMax = Math.max(lateMax, t - expected);
    expected = t + 100;
    rss = Math.max(rss, process.memoryUsage().rss);
  }, 100);
  loop.enable();
  const answer = await burst(r.telemetry.url, o.concurrent);
  loop.disable();
  clearInterval(ticker);
  rss = Math.max(rss, process.memoryUsage().rss);
  const renders = r.renders() - rendersBefore;
  const stallMs = Math.round(loop.max / 1e6);
  fig({
    metric: `renders for ${o.concurrent} concurrent scrapes`,
    value: renders,
    unit: 'renders',
    n: o.concurrent,
    runs: [],
    goal: '<= 2',
    pass: renders <= 2 && answer.ok === o.concurrent,
    note: `${answer.ok} answered 200, ${mb(answer.bytes)} MB in ${answer.ms} ms`,
  });
  fig({
    metric: `longest event-loop stall during ${o.concurrent} concurrent scrapes`,
    value: stallMs,
    unit: 'ms',
    n: o.concurrent,
    runs: [],
    goal: '< 1000 ms (no tick delayed)',
    pass: stallMs < 1000,
    note: `a 100 ms ticker was at most ${Math.round(lateMax)} ms late`,
  });
  fig({
    metric: `peak RSS during ${o.concurrent} concurrent scrapes`,
    value: Math.round(rss / 2 ** 20),
    unit: 'MB',
    n: o.concurrent,
    runs: [],
    goal: '< 400 MB',
    pass: rss < 400 * 2 ** 20,
    note: `${Math.round(rssBefore / 2 ** 20)} MB before (10,000 pipes' registry); the whole process, sampled every 100 ms`,
  });
  // the CPU of one render: what prom-client and the encoding cost the daemon per scrape
  const cpu: number[] = [];
  const wall: number[] = [];
  const renderOnce = async (): Promise<{ cpu: number; wall: number }> => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    Buffer.from(await renderRegistry(r.registry), 'utf8');
    const c = process.cpuUsage(c0);
    return { cpu: Math.round((c.user + c.system) / 1000), wall: Math.round(performance.now() - t0) };
  };
  for (let i = 0; i < o.runs; i += 1) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    Buffer.from(await renderRegistry(r.registry), 'utf8');
    wall.push(Math.round(performance.now() - t0));
    const c = process.cpuUsage(c0);
    cpu.push(Math.round((c.user + c.system) / 1000));
  }
  fig({
    metric: 'CPU of one render (values unchanged since the last)',
    value: median(cpu),
    unit: 'ms',
    runs: cpu,
    goal: '<= 100 ms',
    pass: median(cpu) <= 100,
    note: `wall ${median(wall)} ms; the registry's text (src/telemetry/fast-exposition.ts) and its UTF-8 encoding, in-process`,
  });
  const changed: number[] = [];
  for (let i = 0; i < o.runs; i += 1) {
    emitFleetTick(r.emitter, pipes, 2 + i); // every pipe's replicas move
    changed.push((await renderOnce()).cpu);
  }
  fig({
    metric: 'CPU of one render after a tick that changed every pipe',
    value: median(changed),
    unit: 'ms',
    runs: changed,
    goal: '<= 100 ms',
    pass: median(changed) <= 100,
  });

  await r.telemetry.close();

  // per-pipe detail, for comparison (the audit's ~28 series per pipe)
  {
    const r = await replica(pipes, true);
    const text = await (await fetch(`${r.telemetry.url}/metrics`)).text();
    fig({
      metric: 'one scrape with telemetry.perPipeDetail: true',
      value: mb(Buffer.byteLength(text)),
      unit: 'MB',
      runs: [],
      goal: 'reported',
      note: `${samples(text)} samples, ${seriesPerPipe(text)} series per pipe at most`,
    });
    await r.telemetry.close();
  }

  // 3 replicas scraped by a real Prometheus, with a bearer token
  const token = 'bench-telemetry-token';
  const replicas = [await replica(pipes, false, token), await replica(pipes, false, token)];
  replicas.push(await replica(pipes, false, token));
  const targets = replicas.map((x) => x.telemetry.url.replace('http://', ''));
  const prom = await startPrometheus({
    targets: [{ job: 'pipescaler', targets, bearerToken: token }],
    scrapeInterval: '5s',
  });
  try {
    await prom.waitFor('count(up{job="pipescaler"} == 1)', (s) => s[0]?.value === 3, 60_000);
    await prom.waitFor('count(scrape_samples_scraped{job="pipescaler"})', (s) => s[0]?.value === 3, 60_000);
    const [all] = await prom.query('count({job="pipescaler"})');
    const [piped] = await prom.query('count({job="pipescaler", pipe!=""})');
    const status = (await (await fetch(`${prom.url}/api/v1/status/tsdb`)).json()) as {
      data: { headStats: { numSeries: number } };
    };
    const active = all?.value ?? 0;
    fig({
      metric: 'active series of 3 replicas in Prometheus',
      value: active,
      unit: 'series',
      n,
      runs: [],
      goal: 'reported',
      note: `${Math.round(((piped?.value ?? 0) / n) * 10) / 10} per pipe with a pipe label (3 replicas), ${Math.round((active / n) * 10) / 10} per pipe in all; head series ${status.data.headStats.numSeries} (up and scrape_* included); Debian's prometheus 2.42, bearer token`,
    });
  } finally {
    await prom.stop();
    for (const x of replicas) await x.telemetry.close();
  }
  return figures;
}
