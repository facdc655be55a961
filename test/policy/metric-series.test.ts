// The bounds band of a metric policy (metricBandSpans): simulate prints it without --metrics, and
// simulate --html draws it. Spans change only where the winning window does; with a step a boundary
// takes effect at the first evaluation tick at or after it, as simulate's ticks see it.
import { describe, expect, it } from 'vitest';
import { metricBands, metricBandSpans } from '../../src/policy/metric-series.js';
import { metricBounds } from '../../src/policy/metric.js';
import { resolveTarget } from '../../src/policy/target.js';
import { activeWindows } from '../../src/policy/windows.js';
import type { MetricSpec, Policy } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { at, oneOff, policy, recurring } from './build.js';

const spec: MetricSpec = {
  query: 'lag',
  match: {},
  targetPer: { replicas: 100 },
  onError: { kind: 'hold' },
  staleAfterMs: 120_000,
  tolerance: 0.1,
};
const lag: Policy = policy({
  name: 'lag',
  baseline: { replicas: { min: 1, max: 4 } },
  windows: [
    recurring({
      name: 'business-hours',
      days: ['mon', 'tue', 'wed', 'thu', 'fri'],
      start: '08:00',
      end: '20:00',
      timezone: 'Europe/Berlin',
      target: { replicas: { min: 3, max: 10 } },
    }),
    // a fixed set is min = max; a higher priority wins the overlap
    oneOff({
      name: 'freeze',
      from: '2026-11-24T12:00:30Z',
      to: '2026-11-24T13:00:00Z',
      priority: 5,
      target: { replicas: { value: 6 } },
    }),
  ],
  metric: spec,
});

describe('metricBandSpans', () => {
  it("gives the baseline's bounds, the window's and a fixed set's, at the exact boundaries", () => {
    const spans = metricBandSpans(lag, 'replicas', at('2026-11-24T00:00:00Z'), at('2026-11-25T00:00:00Z'));
    expect(
      spans.map((s) => [
        new Date(s.from).toISOString().slice(11, 19),
        new Date(s.to).toISOString().slice(11, 19),
        s.min,
        s.max,
        s.windows.join(),
      ]),
    ).toEqual([
      ['00:00:00', '07:00:00', 1, 4, ''],
      ['07:00:00', '12:00:30', 3, 10, 'business-hours'],
      ['12:00:30', '13:00:00', 6, 6, 'freeze'],
      ['13:00:00', '19:00:00', 3, 10, 'business-hours'],
      ['19:00:00', '00:00:00', 1, 4, ''],
    ]);
  });

  it('with a step, moves a boundary to the first tick at or after it, as stepping sees it', () => {
    const from = at('2026-11-24T11:00:00Z');
    const to = at('2026-11-24T14:00:00Z');
    const spans = metricBandSpans(lag, 'replicas', from, to, 60_000);
    expect(spans.map((s) => [new Date(s.from).toISOString().slice(11, 19), s.min, s.max])).toEqual([
      ['11:00:00', 3, 10],
      ['12:01:00', 6, 6],
      ['13:00:00', 3, 10],
    ]);
    // metricBands (simulate's text) says the same as resolving the bounds at every tick
    const config = { pipes: [{ name: 'p', policy: 'lag' }], policies: { lag } } as unknown as Config;
    const stepped: string[] = [];
    for (let t = from, last = ''; t < to; t += 60_000) {
      const { active, winners } = activeWindows(lag.windows, t);
      const b = metricBounds(resolveTarget(lag, active, winners, {}).target.replicas, 'replicas');
      const id = `${b.min}..${b.max}`;
      if (id !== last) stepped.push(`${new Date(t).toISOString().slice(11, 16)} ${id}`);
      last = id;
    }
    expect(
      metricBands(config, { p: 'stream' }, from, to, 60_000).map(
        (b) => `${new Date(b.from).toISOString().slice(11, 16)} ${b.min}..${b.max}`,
      ),
    ).toEqual(stepped);
  });
});
