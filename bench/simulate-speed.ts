// simulate() speed: the example policies (config/pipescaler.yaml) over 1,000 pipes, a week and a
// year at the daemon's 30 s tick. simulate() skips the ticks where nothing can change and shares
// one timeline between pipes that start alike (the copies of one example pipe); the "distinct"
// figure gives every pipe its own timeline, to time the event-driven engine without the sharing.
import { viewsFromFixtures } from '../src/cli/pipe-views.js';
import { simulate } from '../src/policy/index.js';
import type { PipeView } from '../src/policy/types.js';
import { exampleCopies } from './example-copies.js';
import { median, type Figure } from './stats.js';

const DAY_MS = 24 * 3_600_000;
const TICK_MS = 30_000;
const FROM = Date.parse('2026-11-23T00:00:00Z');
/** Pipes of the no-sharing figure: each is a timeline of its own (about 0.1-0.2 s a year). */
const DISTINCT = 100;

export interface Options {
  pipes: number;
  runs: number;
}

function timed(run: () => number): { seconds: number; changes: number } {
  const t0 = performance.now();
  const changes = run();
  return { seconds: (performance.now() - t0) / 1000, changes };
}

export async function simulateSpeed(o: Options): Promise<Figure[]> {
  const { config, fixtures } = exampleCopies(o.pipes);
  const reads = viewsFromFixtures(config, fixtures, 'generated fixtures');
  const views: Record<string, PipeView | undefined> = {};
  for (const [name, r] of Object.entries(reads)) views[name] = r.refused ? undefined : (r.view ?? undefined);
  // A change time long before the period: no behavior effect, but no two pipes start alike.
  const distinct: Record<string, PipeView | undefined> = {};
  config.pipes.slice(0, DISTINCT).forEach((p, i) => {
    const v = views[p.name];
    distinct[p.name] = v && { ...v, lastChange: { up: FROM - 30 * DAY_MS - i } };
  });

  const scenario = 'simulate';
  const figures: Figure[] = [];
  const cases = [
    { metric: 'a week, 1,000 pipes (economy scenario)', days: 7, views, goal: 5 },
    { metric: 'a year, 1,000 pipes', days: 365, views, goal: 10 },
    { metric: `a year, ${DISTINCT} of the pipes, no shared timelines`, days: 365, views: distinct, goal: undefined },
  ];
  for (const c of cases) {
    const runs: number[] = [];
    let changes = 0;
    for (let r = 0; r < o.runs; r++) {
      const t = timed(() => simulate(config, c.views, FROM, FROM + c.days * DAY_MS, TICK_MS).length);
      runs.push(t.seconds);
      changes = t.changes;
    }
    const value = median(runs);
    figures.push({
      scenario,
      metric: c.metric,
      value,
      unit: 's',
      n: c.views === distinct ? DISTINCT : o.pipes,
      runs,
      ...(c.goal !== undefined ? { goal: `<= ${c.goal} s`, pass: value <= c.goal } : {}),
      note: `30 s ticks from ${new Date(FROM).toISOString().slice(0, 10)}, ${changes} changes`,
    });
  }
  return figures;
}
