// Boundary convergence: N pipes all changing at one instant (a one-off window starts),
// the cloud's limit raised to `ratePerSecond` per key and the daemon's key configured to match.
// Time from the tick until every pipe's change is applied, against the ideal N / rate, and the
// 429s the cloud answered meanwhile. All runs in one fresh process, after one first contact.
import { inFreshProcess } from './child.js';
import { median, type Figure } from './stats.js';

export interface Options {
  pipes: number;
  ratePerSecond: number;
  runs: number;
}

export interface BoundaryRun {
  ms: number;
  rateLimited: number;
  patches: number;
}

const scenario = 'boundary';

export async function boundary(o: Options): Promise<Figure[]> {
  const runs = await inFreshProcess<BoundaryRun[]>(new URL('./daemon-boundary.ts', import.meta.url).href, o, 1_800_000);
  const idealMs = (o.pipes / o.ratePerSecond) * 1000;
  const n = o.pipes;
  const ms = runs.map((r) => r.ms);
  const ratios = ms.map((m) => m / idealMs);
  const ratio = median(ratios);
  const limited = runs.map((r) => r.rateLimited);
  const note = `${o.ratePerSecond} req/s per key at the cloud and in the daemon; ideal N/rate = ${idealMs} ms`;
  return [
    { scenario, metric: 'tick to all applied', value: median(ms), unit: 'ms', n, runs: ms, note },
    {
      scenario,
      metric: 'time to all applied / (N / rate)',
      value: ratio,
      unit: 'ratio',
      n,
      runs: ratios,
      goal: '<= 1.2',
      pass: ratio <= 1.2,
    },
    {
      scenario,
      metric: '429s at the cloud',
      value: median(limited),
      unit: '429',
      n,
      runs: limited,
      goal: '0',
      pass: limited.every((x) => x === 0),
    },
    {
      scenario,
      metric: 'PATCHes at the cloud',
      value: median(runs.map((r) => r.patches)),
      unit: 'PATCH',
      n,
      runs: runs.map((r) => r.patches),
    },
  ];
}
