// The metric names the Grafana dashboard and the alert rules read, and which of them a scrape
// lacks: shared by the coverage tests (synthetic events, and a real daemon run).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { Scrape } from './exposition-parse.js';
import { dashboardExpressions, metricNamesIn } from './promql-names.js';

/** Series Prometheus makes itself (scrape health, alert state), not the daemon. */
const SYNTHETIC = new Set(['up', 'ALERTS', 'ALERTS_FOR_STATE']);

/** Read by a rule or panel although a healthy daemon may have no sample of them (a series per
 *  cause once Redis lost state; metric-policy pipes only): a scrape without them is not a gap. */
export const OPTIONAL = new Set([
  'pipescaler_redis_state_lost',
  // only pipes of metric policies have them (test/daemon/metric-policy.test.ts asks the dashboard's panel for them)
  'pipescaler_metric_value',
  'pipescaler_metric_bounds',
  'pipescaler_metric_unavailable_total',
  // kept per pipe only under telemetry.perPipeDetail: true (test/daemon/metric-policy.test.ts turns it on)
  'pipescaler_pipe_actuation_seconds',
  // a sample only of a change not in force at its own answer: a platform that carries changes out
  // at once (the embedded cloud's default) gives none (test/telemetry/confirmation-metrics tests it)
  'pipescaler_actuation_seconds_bucket',
  // a pipe's conditions have a series while they hold (every pipe's 0 under per-pipe detail)
  'pipescaler_pipe_unconfirmed',
  'pipescaler_pipe_failing',
  'pipescaler_paused',
]);

function namesOf(exprs: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const e of exprs) for (const n of metricNamesIn(e)) if (!SYNTHETIC.has(n)) names.add(n);
  return names;
}

export function dashboardMetricNames(path = 'config/grafana/dashboards/pipescaler.json'): Set<string> {
  return namesOf(dashboardExpressions(JSON.parse(readFileSync(path, 'utf8')) as unknown));
}

export function ruleMetricNames(path = 'config/prometheus/rules.yml'): Set<string> {
  const rules = parse(readFileSync(path, 'utf8')) as { groups: { rules: { expr: string }[] }[] };
  return namesOf(rules.groups.flatMap((g) => g.rules.map((r) => r.expr)));
}

/** The names without a sample; a histogram's series are name_bucket/_sum/_count of a family typed histogram. */
export function missing(names: Iterable<string>, s: Scrape): string[] {
  const out: string[] = [];
  for (const name of names) {
    if (!s.sampleNames.has(name) && OPTIONAL.has(name)) continue;
    if (!s.sampleNames.has(name)) {
      out.push(`${name} (no sample)`);
      continue;
    }
    const hist = /^(.*)_bucket$/.exec(name);
    if (hist && s.types.get(hist[1]!) !== 'histogram') out.push(`${name} (${hist[1]} is not a histogram)`);
  }
  return out;
}

/** prom-client observes garbage collections asynchronously and has no GC sample before the first
 *  one: make young-generation garbage until `hasSample()` sees it (bounded, no fixed sleep). */
export async function untilGcObserved(hasSample: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let sink: unknown[] = [];
  while (!(await hasSample())) {
    if (Date.now() > deadline) throw new Error('no garbage collection observed');
    for (let i = 0; i < 200_000; i += 1) sink.push({ i });
    sink = [];
    await new Promise((r) => setTimeout(r, 10));
  }
}
