// Steady tick: 10,000 pipes with nothing to change, time from the tick until every
// evaluation is done, against the floor of as many no-op BullMQ jobs through the same Redis with
// the same concurrency, job options and Worker options as the daemon's evaluations (noop-jobs.ts);
// and the daemon's peak RSS. Each run is a fresh process. The floor and the
// daemon take turns (floor, daemon, floor, daemon, ...) and each daemon run is divided by the
// floor run just before it, so a machine whose load changes during the scenario skews both alike.
import { inFreshProcess } from './child.js';
import type { NoopResult } from './noop-jobs.js';
import { median, notRun, type Figure } from './stats.js';

export interface Options {
  pipes: number;
  concurrency: number;
  runs: number;
  /** Why the daemon half cannot run, or null when it can. */
  daemonMissing: string | null;
}

const scenario = 'steady tick';

export async function steadyTick(o: Options): Promise<Figure[]> {
  const floors: NoopResult[] = [];
  const daemons: DaemonTickResult[] = [];
  for (let r = 0; r < o.runs; r++) {
    floors.push(
      await inFreshProcess<NoopResult>(
        new URL('./noop-jobs.ts', import.meta.url).href,
        { n: o.pipes, concurrency: o.concurrency, deadlineMs: 300_000 },
        360_000,
      ),
    );
    if (o.daemonMissing === null)
      daemons.push(
        await inFreshProcess<DaemonTickResult>(
          new URL('./daemon-tick.ts', import.meta.url).href,
          { pipes: o.pipes, concurrency: o.concurrency, deadlineMs: 300_000 },
          600_000,
        ),
      );
  }
  const n = o.pipes;
  const floorMs = median(floors.map((f) => f.ms));
  const figures: Figure[] = [
    {
      scenario,
      metric: 'floor: no-op BullMQ jobs, add to all done',
      value: floorMs,
      unit: 'ms',
      n,
      runs: floors.map((f) => f.ms),
      note: `concurrency ${o.concurrency}, the daemon's evaluate job and Worker options, fresh process and Redis prefix per run, ${floors.reduce((s, f) => s + f.deletedKeys, 0)} keys deleted after`,
    },
    {
      scenario,
      metric: 'floor: peak RSS',
      value: median(floors.map((f) => f.peakRssMb)),
      unit: 'MB',
      n,
      runs: floors.map((f) => f.peakRssMb),
    },
  ];
  if (o.daemonMissing !== null) {
    figures.push(notRun(scenario, 'daemon: tick to all evaluations done', n, '', o.daemonMissing));
    figures.push(notRun(scenario, 'daemon / floor', n, '<= 1.5', o.daemonMissing));
    figures.push(notRun(scenario, 'daemon: peak RSS', n, '<= 300 MB', o.daemonMissing));
    return figures;
  }
  const tickMs = daemons.map((d) => d.tickMs);
  const ratios = tickMs.map((t, r) => t / floors[r]!.ms);
  const ratio = median(ratios);
  const rss = median(daemons.map((d) => d.peakRssMb));
  const applies = daemons.reduce((a, d) => a + d.applies, 0);
  if (applies > 0) throw new Error(`steady tick applied ${applies} changes: the pipes were not steady`);
  figures.push(
    {
      scenario,
      metric: 'daemon: tick to all evaluations done',
      value: median(tickMs),
      unit: 'ms',
      n,
      runs: tickMs,
      note: `concurrency ${o.concurrency}, every decision none; cloud in a child process`,
    },
    {
      scenario,
      metric: 'daemon / floor',
      value: ratio,
      unit: 'ratio',
      n,
      runs: ratios,
      goal: '<= 1.5',
      pass: ratio <= 1.5,
      note: 'median of each daemon run over the floor run just before it',
    },
    {
      scenario,
      metric: 'daemon: peak RSS of the process',
      value: rss,
      unit: 'MB',
      n,
      runs: daemons.map((d) => d.peakRssMb),
      goal: '<= 300 MB',
      pass: rss <= 300,
      note: 'includes first contact (10,000 reads through the apply lane at 500/s)',
    },
    {
      scenario,
      metric: 'daemon: highest RSS during the tick',
      value: median(daemons.map((d) => d.tickRssMb)),
      unit: 'MB',
      n,
      runs: daemons.map((d) => d.tickRssMb),
    },
  );
  return figures;
}

export interface DaemonTickResult {
  tickMs: number;
  /** Highest RSS sampled during the measured tick. */
  tickRssMb: number;
  peakRssMb: number;
  evaluations: number;
  applies: number;
}
