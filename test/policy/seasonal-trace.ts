// A load with daily and weekly seasonality, noise and bursts, made by the tests and the bench
// (deterministic: a seeded generator). Weekdays ramp from a night floor to a business-hours
// plateau (08:00-09:00 UTC up, 17:00-19:00 down) with a lunch dip; weekends stay at a third of it.
// Noise is multiplicative (sd `noise`); bursts of 10-30 min add 40-80 % a few times a day.
import { seeded } from '../../bench/chaos/chaos.js';
import { DAY_MS } from '../../src/policy/forecast.js';

export interface TraceOptions {
  readonly from: number;
  readonly to: number;
  readonly stepMs: number;
  readonly seed?: number;
  /** Night floor and weekday plateau (default 200 and 1,000). */
  readonly floor?: number;
  readonly peak?: number;
  /** Standard deviation of the multiplicative noise (default 0.04). */
  readonly noise?: number;
  /** Bursts per day on average (default 2). */
  readonly burstsPerDay?: number;
  /** Growth per week of the whole load (default 0.02: +2 %). */
  readonly weeklyGrowth?: number;
}

export type TracePoint = readonly [number, number];

const smooth = (x: number): number => (x <= 0 ? 0 : x >= 1 ? 1 : x * x * (3 - 2 * x));

/** The noise-free seasonal value at `t` (what a perfect forecast would predict). */
export function seasonalValue(t: number, o: Pick<TraceOptions, 'floor' | 'peak' | 'weeklyGrowth' | 'from'>): number {
  const floor = o.floor ?? 200;
  const peak = o.peak ?? 1_000;
  const d = new Date(t);
  const weekday = d.getUTCDay(); // 0 Sunday
  const hour = (t % DAY_MS) / 3_600_000;
  const rise = smooth(hour - 8);
  const fall = 1 - smooth((hour - 17) / 2);
  const lunch = 1 - 0.15 * smooth(1 - Math.abs(hour - 12.5) / 0.75);
  const business = Math.min(rise, fall) * lunch;
  const scale = weekday === 0 || weekday === 6 ? 1 / 3 : 1;
  const growth = 1 + (o.weeklyGrowth ?? 0.02) * ((t - (o.from ?? 0)) / (7 * DAY_MS));
  return (floor + (peak - floor) * business * scale) * growth;
}

/** The trace: [epoch ms, value] every stepMs in [from, to). */
export function seasonalTrace(o: TraceOptions): TracePoint[] {
  const random = seeded(o.seed ?? 26);
  const gauss = (): number => {
    const u = Math.max(1e-12, random());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
  };
  const bursts: { from: number; to: number; factor: number }[] = [];
  const days = Math.ceil((o.to - o.from) / DAY_MS);
  for (let i = 0; i < days * (o.burstsPerDay ?? 2); i++) {
    const start = o.from + random() * (o.to - o.from);
    bursts.push({ from: start, to: start + (10 + 20 * random()) * 60_000, factor: 1.4 + 0.4 * random() });
  }
  const out: TracePoint[] = [];
  for (let t = o.from; t < o.to; t += o.stepMs) {
    let v = seasonalValue(t, o) * (1 + (o.noise ?? 0.04) * gauss());
    for (const b of bursts) if (t >= b.from && t < b.to) v *= b.factor;
    out.push([t, Math.max(0, v)]);
  }
  return out;
}
