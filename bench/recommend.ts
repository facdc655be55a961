// Recommend scenario (`npm run bench -- --only recommend`): `recommend` over 28 days of 1-minute
// data (the seasonal trace of the forecast scenario) for a metric policy with a business-hours
// window: >= 200 candidates replayed through decide(). The figure is the CPU time of this process
// (user + system: the replay is single-threaded JavaScript, so it is the time on one core however
// busy the shared machine is), the wall time in the note; and whether the winner costs no more
// than the current config.
import { DAY_MS } from '../src/policy/forecast.js';
import { recommend, type RecordedPipe } from '../src/policy/recommend.js';
import type { Policy } from '../src/policy/types.js';
import { seasonalTrace } from '../test/policy/seasonal-trace.js';
import type { Figure } from './stats.js';

const scenario = 'recommend';
const FROM = Date.parse('2026-10-26T00:00:00Z');
const TO = FROM + 28 * DAY_MS;

const policy: Policy = {
  name: 'lag',
  baseline: { replicas: { min: 2, max: 30 } },
  windows: [
    {
      kind: 'recurring',
      name: 'business-hours',
      priority: 0,
      target: { replicas: { min: 6, max: 30 } },
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      start: { hour: 8, minute: 0 },
      end: { hour: 19, minute: 0 },
      timezone: 'Europe/Berlin',
      exclude: [],
    },
  ],
  behavior: {
    scaleUp: { maxStep: {}, cooldownMs: 0, leadTime: 0 },
    scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 600_000 },
  },
  metric: {
    query: 'orders_in_per_second',
    match: {},
    targetPer: { replicas: 90 },
    onError: { kind: 'hold' },
    staleAfterMs: 120_000,
    tolerance: 0.1,
  },
};

export function recommendBench(): Figure[] {
  const points = seasonalTrace({ from: FROM, to: TO, stepMs: 60_000 });
  const pipes: RecordedPipe[] = [
    {
      name: 'orders',
      series: { labels: {}, points },
      view: {
        kind: 'stream',
        state: 'Running',
        applied: { replicas: 2 },
        bounds: {},
        lastChange: {},
        recommendations: [],
        endpoints: {},
      },
    },
  ];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = recommend(policy, pipes, { from: FROM, to: TO, stepMs: 60_000 });
  const wall = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) / 1e6;
  const n = r.candidates.length;
  const best = r.best;
  const cheaper = best === null || best.capacityHours <= r.current.capacityHours;
  return [
    {
      scenario,
      metric: 'CPU time, 28 days of 1-min data',
      value: cpu,
      unit: 's',
      n,
      runs: [],
      goal: '<= 60 (>= 200 candidates)',
      pass: cpu <= 60 && n >= 200,
      note: `${n} candidates, ${points.length.toLocaleString('en')} points; wall ${wall.toFixed(1)} s on the shared machine`,
    },
    {
      scenario,
      metric: 'recommended / current capacity-hours',
      value: best ? best.capacityHours / r.current.capacityHours : 1,
      unit: 'ratio',
      n,
      runs: [],
      goal: '<= 1.00',
      pass: cheaper,
      note: best
        ? `${best.capacityHours.toFixed(0)} vs ${r.current.capacityHours.toFixed(0)} capacity-hours; ${best.overMinutes} vs ${r.current.overMinutes} min over target (SLO: the current's)`
        : 'keep the current config',
    },
  ];
}
