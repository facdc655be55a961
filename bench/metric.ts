// Metric tick: 10,000 pipes on metric policies, one tick, a real Prometheus (Debian's)
// answering from a gauge exporter that holds every pipe's lag. Figures: the queries Prometheus
// served per tick (goal: one per metric policy, whatever the number of pipes) and the tick's time
// to all evaluated over the schedule-only steady tick's (same harness, same N). Fresh process per run.
import { startGaugeExporter } from '../test/gauge-exporter.js';
import { startPrometheus } from '../test/prometheus.js';
import { inFreshProcess } from './child.js';
import type { DaemonTickResult } from './steady-tick.js';
import { policyName, type MetricTickResult } from './metric-tick.js';
import { median, type Figure } from './stats.js';

export interface Options {
  pipes: number;
  policies: number;
  concurrency: number;
  runs: number;
}

const scenario = 'metric tick';

export async function metricTick(o: Options): Promise<Figure[]> {
  const n = o.pipes;
  const exporter = await startGaugeExporter();
  // 50 per pipe against 100 per replica: every pipe stays at its 1 replica (a steady tick)
  for (let i = 0; i < n; i++)
    exporter.set('kafka_consumergroup_lag', { consumergroup: `cg-${i + 1}`, policy: policyName(i % o.policies) }, 50);
  const prom = await startPrometheus({ targets: [{ job: 'lag', targets: [exporter.target] }], scrapeInterval: '5s' });
  try {
    await prom.waitFor('count(kafka_consumergroup_lag)', (r) => r[0]?.value === n, 60_000);
    const schedule: DaemonTickResult[] = [];
    const metric: MetricTickResult[] = [];
    for (let r = 0; r < o.runs; r++) {
      schedule.push(
        await inFreshProcess<DaemonTickResult>(
          new URL('./daemon-tick.ts', import.meta.url).href,
          { pipes: n, concurrency: o.concurrency, deadlineMs: 300_000 },
          600_000,
        ),
      );
      metric.push(
        await inFreshProcess<MetricTickResult>(
          new URL('./metric-tick.ts', import.meta.url).href,
          { pipes: n, policies: o.policies, concurrency: o.concurrency, deadlineMs: 300_000, prometheusUrl: prom.url },
          600_000,
        ),
      );
    }
    const bad = metric.reduce((a, m) => a + m.applies + m.unavailable, 0);
    if (bad > 0) throw new Error(`the metric tick was not steady: ${bad} applies or unavailable metrics`);
    const ratios = metric.map((m, i) => m.tickMs / schedule[i]!.tickMs);
    const ratio = median(ratios);
    const queries = Math.max(...metric.map((m) => m.queries));
    return [
      {
        scenario,
        metric: 'Prometheus queries per tick',
        value: queries,
        unit: 'queries',
        n,
        runs: metric.map((m) => m.queries),
        goal: `= ${o.policies} (metric policies)`,
        pass: metric.every((m) => m.queries === o.policies),
        note: `${o.policies} metric policies of ${n / o.policies} pipes; counted by Prometheus (/api/v1/query served); daemon's own count ${metric.map((m) => m.daemonQueries).join(', ')}`,
      },
      {
        scenario,
        metric: 'schedule-only tick to all evaluated',
        value: median(schedule.map((s) => s.tickMs)),
        unit: 'ms',
        n,
        runs: schedule.map((s) => s.tickMs),
        note: `concurrency ${o.concurrency}, the steady tick's harness`,
      },
      {
        scenario,
        metric: 'metric tick to all evaluated',
        value: median(metric.map((m) => m.tickMs)),
        unit: 'ms',
        n,
        runs: metric.map((m) => m.tickMs),
        note: `concurrency ${o.concurrency}, every decision none (tolerance), Prometheus ${prom.url.replace(/:\d+$/, '')} in its own process; slowest query of each measured tick ${metric.map((m) => m.slowestQueryMs).join(', ')} ms`,
      },
      {
        scenario,
        metric: 'metric tick / schedule-only tick',
        value: ratio,
        unit: 'ratio',
        n,
        runs: ratios,
        goal: '<= 1.3',
        pass: ratio <= 1.3,
      },
    ];
  } finally {
    await prom.stop();
    await exporter.close();
  }
}
