// A real Prometheus of a test's own (Debian's `prometheus` binary), on a free local port, with a
// generated config and its TSDB in a temp dir: for tests that prove what the dashboard's
// expressions and the alert rules show, which promtool's synthetic series cannot. Stopped by its
// own pid; its dir is removed at stop. `backfill` loads a history before it starts (OpenMetrics
// text turned into TSDB blocks by promtool), for tests that read weeks of a metric.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { freePort, kill } from './redis-servers.js';

export const PROMETHEUS_BIN = process.env.PROMETHEUS_BIN ?? 'prometheus';
export const PROMTOOL_BIN = process.env.PROMTOOL_BIN ?? 'promtool';

export interface ScrapeJob {
  readonly job: string;
  /** host:port of each target */
  readonly targets: readonly string[];
  readonly metricsPath?: string;
  /** Sent as `Authorization: Bearer <token>` (the scrape config's `authorization`). */
  readonly bearerToken?: string;
}

export interface PrometheusOptions {
  /** Scrape targets: host:port strings (one job named `pipescaler`) or explicit jobs. */
  readonly targets: readonly string[] | readonly ScrapeJob[];
  /** Prometheus duration, default `1s`. */
  readonly scrapeInterval?: string;
  /** Prometheus duration, default `1s`. */
  readonly evaluationInterval?: string;
  /** Rule files to load, by path. */
  readonly ruleFiles?: readonly string[];
  /** Rule files to load, by content (written into the temp dir). */
  readonly rules?: readonly string[];
  /** OpenMetrics text (ending `# EOF`) loaded as TSDB blocks before the server starts. */
  readonly backfill?: string;
  /** --storage.tsdb.retention.time, default 1h; a backfilled history needs it longer than its span. */
  readonly retention?: string;
  /** host:port of Alertmanagers to send the alerts to (the `alerting` block). */
  readonly alertmanagers?: readonly string[];
}

/** OpenMetrics text of gauges: one family, its series' points (epoch ms, value), sorted by time. */
export function openMetricsGauge(
  name: string,
  series: readonly { labels: Record<string, string>; points: readonly (readonly [number, number])[] }[],
): string {
  const lines = [`# TYPE ${name} gauge`];
  for (const s of series) {
    const labels = Object.entries(s.labels)
      .map(([k, v]) => `${k}="${v}"`)
      .join(',');
    for (const [t, v] of s.points) lines.push(`${name}{${labels}} ${v} ${(t / 1000).toFixed(3)}`);
  }
  lines.push('# EOF', '');
  return lines.join('\n');
}

export interface Sample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

export interface RangeSeries {
  readonly metric: Record<string, string>;
  /** [unix seconds, value] */
  readonly values: readonly (readonly [number, number])[];
}

export interface PromAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly state: 'pending' | 'firing' | 'inactive';
  readonly activeAt?: string;
  readonly value: string;
}

export interface PrometheusServer {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Instant query; a scalar comes back as one sample without labels. */
  query(expr: string, time?: number): Promise<Sample[]>;
  /** Range query; start/end in unix seconds, step in seconds. */
  queryRange(expr: string, start: number, end: number, step: number): Promise<RangeSeries[]>;
  /** Pending and firing alerts (GET /api/v1/alerts). */
  alerts(): Promise<PromAlert[]>;
  /** Last scrape health of every target (GET /api/v1/targets). */
  targets(): Promise<{ scrapeUrl: string; health: string; lastError: string }[]>;
  /** Polls `expr` until `pred` holds for its result (bounded; throws with the last result). */
  waitFor(expr: string, pred: (r: Sample[]) => boolean, timeoutMs?: number): Promise<Sample[]>;
  /** Kill the process but keep its dir and port, for restart(): an outage of the server. */
  halt(): Promise<void>;
  /** Start it again after halt(), same port, config and data; waits until ready. */
  restart(): Promise<void>;
  /** Kill it and remove its dir. */
  stop(): Promise<void>;
}

function configYaml(o: PrometheusOptions, ruleFiles: readonly string[]): string {
  const jobs: ScrapeJob[] =
    o.targets.length > 0 && typeof o.targets[0] === 'string'
      ? [{ job: 'pipescaler', targets: o.targets as readonly string[] }]
      : [...(o.targets as readonly ScrapeJob[])];
  // JSON is valid YAML: no quoting questions.
  const config = {
    global: {
      scrape_interval: o.scrapeInterval ?? '1s',
      scrape_timeout: o.scrapeInterval ?? '1s',
      evaluation_interval: o.evaluationInterval ?? '1s',
    },
    rule_files: ruleFiles,
    ...(o.alertmanagers ? { alerting: { alertmanagers: [{ static_configs: [{ targets: o.alertmanagers }] }] } } : {}),
    scrape_configs: jobs.map((j) => ({
      job_name: j.job,
      metrics_path: j.metricsPath ?? '/metrics',
      ...(j.bearerToken !== undefined ? { authorization: { type: 'Bearer', credentials: j.bearerToken } } : {}),
      static_configs: [{ targets: j.targets }],
    })),
  };
  return JSON.stringify(config, null, 2);
}

async function api<T>(base: string, path: string, params: Record<string, string> = {}): Promise<T> {
  const qs = new URLSearchParams(params).toString();
  const res = await fetch(`${base}${path}${qs ? `?${qs}` : ''}`);
  const body = (await res.json()) as { status: string; data: T; error?: string; errorType?: string };
  if (body.status !== 'success') {
    throw new Error(
      `prometheus ${path} ${JSON.stringify(params)}: ${body.errorType ?? res.status}: ${body.error ?? ''}`,
    );
  }
  return body.data;
}

type QueryData =
  | { resultType: 'vector'; result: { metric: Record<string, string>; value: [number, string] }[] }
  | { resultType: 'scalar'; result: [number, string] }
  | { resultType: 'matrix' | 'string'; result: unknown };

async function waitReady(base: string, child: ChildProcess, out: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`prometheus exited ${child.exitCode ?? child.signalCode}: ${out().slice(-2000)}`);
    }
    try {
      const res = await fetch(`${base}/-/ready`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`prometheus not ready within 20 s: ${out().slice(-2000)}`);
}

/** Starts Prometheus and waits until /-/ready answers 200. */
export async function startPrometheus(o: PrometheusOptions): Promise<PrometheusServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `pstest-prom-${port}-`));
  const ruleFiles = [...(o.ruleFiles ?? []).map((p) => resolve(p))];
  (o.rules ?? []).forEach((content, i) => {
    const path = join(dir, `rules-${i}.yml`);
    writeFileSync(path, content);
    ruleFiles.push(path);
  });
  const configPath = join(dir, 'prometheus.yml');
  writeFileSync(configPath, configYaml(o, ruleFiles));
  if (o.backfill !== undefined) {
    const input = join(dir, 'backfill.om');
    writeFileSync(input, o.backfill);
    // 2 h blocks (Debian's promtool 2.42 has no --max-block-duration): Prometheus compacts them
    execFileSync(PROMTOOL_BIN, ['tsdb', 'create-blocks-from', 'openmetrics', '-q', input, join(dir, 'data')], {
      stdio: 'pipe',
    });
    rmSync(input);
  }
  const args = [
    `--config.file=${configPath}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    `--storage.tsdb.retention.time=${o.retention ?? '1h'}`,
    '--log.level=warn',
  ];
  let out = '';
  const onData = (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000);
  };
  const launch = (): ChildProcess => {
    const c = spawn(PROMETHEUS_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout.on('data', onData);
    c.stderr.on('data', onData);
    c.once('error', (e) => {
      out += `\nspawn error: ${e.message}`;
    });
    return c;
  };
  let child: ChildProcess | null = launch();
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base, child, () => out);
  } catch (e) {
    await kill(child);
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }

  const server: PrometheusServer = {
    port,
    url: base,
    dir,
    async query(expr, time) {
      const params: Record<string, string> = { query: expr };
      if (time !== undefined) params.time = String(time);
      const data = await api<QueryData>(base, '/api/v1/query', params);
      if (data.resultType === 'vector') {
        return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
      }
      if (data.resultType === 'scalar') return [{ metric: {}, value: Number(data.result[1]) }];
      throw new Error(`prometheus query ${expr}: unexpected result type ${data.resultType}`);
    },
    async queryRange(expr, start, end, step) {
      const data = await api<{
        resultType: string;
        result: { metric: Record<string, string>; values: [number, string][] }[];
      }>(base, '/api/v1/query_range', { query: expr, start: String(start), end: String(end), step: String(step) });
      return data.result.map((r) => ({ metric: r.metric, values: r.values.map(([t, v]) => [t, Number(v)] as const) }));
    },
    async alerts() {
      const data = await api<{ alerts: PromAlert[] }>(base, '/api/v1/alerts');
      return data.alerts;
    },
    async targets() {
      const data = await api<{ activeTargets: { scrapeUrl: string; health: string; lastError: string }[] }>(
        base,
        '/api/v1/targets',
      );
      return data.activeTargets.map(({ scrapeUrl, health, lastError }) => ({ scrapeUrl, health, lastError }));
    },
    async waitFor(expr, pred, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const last = await server.query(expr);
        if (pred(last)) return last;
        if (Date.now() > deadline) {
          throw new Error(
            `prometheus: ${expr} did not reach the condition within ${timeoutMs} ms; last: ${JSON.stringify(last)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async halt() {
      const c = child;
      child = null;
      await kill(c);
    },
    async restart() {
      if (child) return;
      const c = launch();
      child = c;
      await waitReady(base, c, () => out);
    },
    async stop() {
      const c = child;
      child = null;
      await kill(c);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

export interface Rule {
  alert?: string;
  expr: string;
  for?: string;
}
export interface RuleFile {
  groups: { name: string; rules: Rule[] }[];
}

function seconds(d: string): number {
  let s = 0;
  for (const [, n, u] of d.matchAll(/(\d+)(ms|s|m|h|d)/g))
    s += Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[u as 'ms' | 's' | 'm' | 'h' | 'd'];
  return s;
}

/** rules.yml with every `for:` divided by `scale` (at least 1 s): 2m -> 2s at the default 60;
 *  the expressions stay as shipped. */
export function scaledRules(text: string, scale = 60): { text: string; shipped: RuleFile; scaled: RuleFile } {
  const shipped = parse(text) as RuleFile;
  const scaled = parse(text) as RuleFile;
  for (const g of scaled.groups)
    for (const r of g.rules) if (r.for !== undefined) r.for = `${Math.max(1, Math.round(seconds(r.for) / scale))}s`;
  return { text: stringify(scaled), shipped, scaled };
}
