// validate, plan and simulate on metric policies, with a real Prometheus scraping a gauge exporter.
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGaugeExporter, type GaugeExporter } from '../gauge-exporter.js';
import { PROMETHEUS_BIN, openMetricsGauge, startPrometheus, type PrometheusServer } from '../prometheus.js';
import { seasonalTrace } from '../policy/seasonal-trace.js';
import { DAY_MS } from '../../src/policy/forecast.js';
import { requireTool } from '../require-tool.js';

const hasPrometheus = requireTool(PROMETHEUS_BIN, 'prometheus');

const BIN = 'dist/cli/main.js';
let prom: PrometheusServer;
let exporter: GaugeExporter;

// Asynchronous: the exporter runs in this process, and a blocked event loop would fail its scrapes
// (Prometheus then marks the series stale and the CLI would find no sample).
function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { encoding: 'utf8', env: { ...process.env, TZ: 'UTC', ...env }, timeout: 60_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  exporter = await startGaugeExporter();
  exporter.set('kafka_consumergroup_lag', { consumergroup: 'pipescaler-orders-lag', topic: 'orders' }, 420_000);
  prom = await startPrometheus({ targets: [{ job: 'lag', targets: [exporter.target] }] });
  await prom.waitFor('kafka_consumergroup_lag', (r) => r.length === 1, 20_000);
}, 60_000);
afterAll(async () => {
  await prom?.stop();
  await exporter?.close();
});

describe.skipIf(!hasPrometheus)('metric policies in the CLI', () => {
  it('validate checks each query through the server', async () => {
    const ok = await run(['validate'], { PROMETHEUS_URL: prom.url });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('metric queries:\n  policy orders-by-lag: query parses');
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-metric-'));
    const text = spawnSync('cat', ['config/pipescaler.yaml'], { encoding: 'utf8' })
      .stdout.replace(
        'sum by (consumergroup) (kafka_consumergroup_lag)',
        'sum by (consumergroup (kafka_consumergroup_lag)',
      )
      .replace('fixtures: cloud.yaml', `fixtures: ${process.cwd()}/config/cloud.yaml`)
      .replace('{ calendar: holidays/de-2027.ics }', `{ calendar: ${process.cwd()}/config/holidays/de-2027.ics }`);
    writeFileSync(join(dir, 'p.yaml'), text);
    const bad = await run(['validate', join(dir, 'p.yaml')], { PROMETHEUS_URL: prom.url });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(
      /policy orders-by-lag: query does not parse: Prometheus refused the query \(400\): .*parse error/,
    );
  });

  it('plan shows the query, the live value, the recommendation and the bounds', async () => {
    const r = await run(['plan', '--pipe', 'orders-lag', '--at', '2026-11-24T10:00:00Z'], { PROMETHEUS_URL: prom.url });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('metric: metric 420000 / 50000 per unit: replicas 9 (within 3..10)');
    expect(r.stdout).toContain(
      'metrics:\n  orders-lag: sum by (consumergroup) (kafka_consumergroup_lag)\n    value 420000 -> replicas 9, bounds 3..10',
    );
    const j = await run(['plan', '--pipe', 'orders-lag', '--at', '2026-11-24T22:00:00Z', '--json'], {
      PROMETHEUS_URL: prom.url,
    });
    expect((JSON.parse(j.stdout) as { metric: unknown }[])[0]!.metric).toEqual({
      query: 'sum by (consumergroup) (kafka_consumergroup_lag)',
      field: 'replicas',
      value: 420000,
      bounds: { min: 1, max: 4 },
      recommended: 4,
    });
  });

  it('simulate --metrics replays a recorded range query; without it shows the bounds band', async () => {
    const t0 = Date.parse('2026-11-24T08:00:00Z') / 1000; // 09:00 in Berlin: business hours
    // one point a minute, as query_range with step=60 returns: 100000, then 480000 from 08:10, 10 from 08:30, NaN 08:50-08:59
    const lag = (m: number): string => (m < 10 ? '100000' : m < 30 ? '480000' : m >= 50 && m < 60 ? 'NaN' : '10');
    const values = Array.from({ length: 90 }, (_, m) => [t0 + m * 60, lag(m)]);
    const file = join(mkdtempSync(join(tmpdir(), 'pipescaler-metric-')), 'lag.json');
    writeFileSync(
      file,
      JSON.stringify({
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            { metric: { consumergroup: 'pipescaler-orders-lag' }, values },
            { metric: { consumergroup: 'someone-else' }, values: [[t0, '1']] },
          ],
        },
      }),
    );
    const r = await run([
      'simulate',
      '--pipe',
      'orders-lag',
      '--from',
      '2026-11-24T08:00:00Z',
      '--to',
      '2026-11-24T09:30:00Z',
      '--metrics',
      file,
      '--json',
    ]);
    expect(r.stderr).toBe('');
    const changes = (JSON.parse(r.stdout) as { at: string; scaling: { replicas: number } }[]).map((c) => [
      c.at.slice(11, 16),
      c.scaling.replicas,
    ]);
    // up to 3 (the window's min); lag 480000 asks for 10: maxStep 3 a minute to 9, where 480000 is within 10% of
    // 9 x 50000 (tolerance: no step to 10); lag 10 at 08:30: down after 5 min of stabilization, 2 a step every 2 min;
    // the NaN at 08:50 holds
    expect(changes).toEqual([
      ['08:00', 3],
      ['08:10', 6],
      ['08:11', 9],
      ['08:35', 7],
      ['08:37', 5],
      ['08:39', 3],
    ]);
    expect(changes.at(-1)![1]).toBe(3);
    expect(changes.every(([, v]) => (v as number) >= 3 && (v as number) <= 10)).toBe(true);
    const band = await run([
      'simulate',
      '--pipe',
      'orders-lag',
      '--from',
      '2026-11-24T00:00:00Z',
      '--to',
      '2026-11-25T00:00:00Z',
    ]);
    expect(band.stdout).toContain(
      'orders-lag  from Tue 2026-11-24 07:00 +00:00 (2026-11-24T07:00Z)  replicas 3..10  (business-hours)',
    );
    expect(band.stdout).toContain(
      'orders-lag  from Tue 2026-11-24 19:00 +00:00 (2026-11-24T19:00Z)  replicas 1..4  (baseline)',
    );
  });
});

describe.skipIf(!hasPrometheus)('plan with a forecast', () => {
  // a real Prometheus holding two weeks of the lag, backfilled up to now; the example config with
  // metric.forecast added to its metric policy (written beside a copy of its relative files)
  let history: PrometheusServer;
  let config: string;
  let dir: string;
  // A fixed phase of the week, Monday 00:00 UTC of this week (1970-01-05 was a Monday): the seeded
  // trace, and so the forecast's score, are the same at every run, whatever the time of day.
  const MONDAY = 4 * DAY_MS;
  const now = Math.floor((Date.now() - MONDAY) / (7 * DAY_MS)) * 7 * DAY_MS + MONDAY;
  beforeAll(async () => {
    const from = now - 14 * DAY_MS;
    history = await startPrometheus({
      targets: [],
      retention: '30d',
      backfill: openMetricsGauge('kafka_consumergroup_lag', [
        {
          labels: { consumergroup: 'pipescaler-orders-lag' },
          // the fixed weeks up to `now`, then on to the present (a trace of its own, so the bursts
          // before `now` do not move with the time of the run)
          points: [
            ...seasonalTrace({ from, to: now + 1, stepMs: 60_000, floor: 20_000, peak: 300_000 }),
            ...seasonalTrace({ from: now + 60_000, to: Date.now() + 1, stepMs: 60_000, floor: 20_000, peak: 300_000 }),
          ],
        },
      ]),
    });
    await history.waitFor('count(kafka_consumergroup_lag)', (r) => r[0]?.value === 1, 30_000);
    dir = mkdtempSync(join(tmpdir(), 'pipescaler-forecast-'));
    cpSync('config', dir, { recursive: true });
    config = join(dir, 'pipescaler.yaml');
    const text = readFileSync(config, 'utf8').replace(
      '      staleAfter: 2m\n',
      '      staleAfter: 30m\n      forecast: { history: 14d, horizon: 2h, mode: forecastOnly }\n',
    );
    writeFileSync(config, text);
  }, 120_000);
  afterAll(async () => {
    await history?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the forecast, what it would set and its score; forecastOnly changes nothing', async () => {
    const at = new Date(now).toISOString();
    const r = await run(['plan', config, '--pipe', 'orders-lag', '--at', at], { PROMETHEUS_URL: history.url });
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      /\n {4}forecast \(forecastOnly\): peak [\d.]+ -> \d+: not applied, hourly-peak error \d+\.\d % over the last week/,
    );
    const error = Number(/hourly-peak error (\d+\.\d) %/.exec(r.stdout)?.[1]);
    expect(error).toBeLessThanOrEqual(15);
    const j = await run(['plan', config, '--pipe', 'orders-lag', '--at', at, '--json'], {
      PROMETHEUS_URL: history.url,
    });
    const metric = (JSON.parse(j.stdout) as { metric: { recommended: number; value: number; forecast: object } }[])[0]!
      .metric;
    expect(metric.forecast).toMatchObject({ mode: 'forecastOnly', raised: false, recommended: expect.any(Number) });
  }, 60_000);

  it('simulate --metrics --html overlays the load, the replayed forecast and the capacity', async () => {
    const from = Date.parse('2026-11-02T00:00:00Z');
    const points = seasonalTrace({ from, to: from + 15 * DAY_MS, stepMs: 60_000, floor: 20_000, peak: 300_000 });
    const file = join(dir, 'lag.json');
    writeFileSync(
      file,
      JSON.stringify({
        status: 'success',
        data: {
          resultType: 'matrix',
          result: [
            {
              metric: { consumergroup: 'pipescaler-orders-lag' },
              values: points.map(([t, v]) => [t / 1000, String(Math.round(v))]),
            },
          ],
        },
      }),
    );
    const html = join(dir, 'report.html');
    const day = new Date(from + 14 * DAY_MS).toISOString();
    const end = new Date(from + 15 * DAY_MS).toISOString();
    const r = await run([
      'simulate',
      config,
      '--pipe',
      'orders-lag',
      '--from',
      day,
      '--to',
      end,
      '--metrics',
      file,
      '--html',
      html,
    ]);
    expect(r.code).toBe(0);
    const page = readFileSync(html, 'utf8');
    expect(page).toMatch(/<path class="load-actual" d="M[\d.]+,[\d.]+ L/);
    expect(page).toMatch(/<path class="load-forecast" d="M[\d.]+,[\d.]+ L/);
    expect(page).toContain('<path class="head"');
    expect(page).toContain('forecast / target</span>');
  }, 60_000);
});
