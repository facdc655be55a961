// API economy: a simulated week of the shipped example policies (config/pipescaler.yaml)
// over 1,000 pipes, each a copy of one of the example's pipes (same service, kind, state, scaling
// and policy) under a generated name and id. Counts the scaling changes simulate() requires, then
// replays each change as one PATCH through ApiClient against the embedded cloud (its own process,
// rate limit off) and counts the PATCHes the cloud saw, against a naive daemon that PATCHes every
// pipe at every 30 s tick. The daemon's own count is taken over one day (daemon-economy.ts): a
// week of drained 30 s ticks through BullMQ takes too long for a bench.
import { ApiClient } from '../src/api/index.js';
import { viewsFromFixtures } from '../src/cli/pipe-views.js';
import { simulate } from '../src/policy/index.js';
import type { PipeView } from '../src/policy/types.js';
import { cloudProcess } from './child.js';
import { inFreshProcess } from './child.js';
import type { DaemonEconomyResult } from './daemon-economy.js';
import { exampleCopies } from './example-copies.js';
import { median, type Figure } from './stats.js';

const WEEK_MS = 7 * 24 * 3_600_000;
const TICK_MS = 30_000;
// The week of the example's Black Friday window (its one-off event), Monday 00:00 UTC.
const FROM = Date.parse('2026-11-23T00:00:00Z');

export interface Options {
  pipes: number;
  /** Replays of the simulated changes through the client (the simulation is pure: run once). */
  runs: number;
  /** Why the daemon's own count cannot be taken, or null when it can. */
  daemonMissing: string | null;
  /** Pipes and span of the daemon's own count (a day of 30 s ticks, each drained). */
  daemonPipes: number;
}

// Black Friday in the example (its one-off window, business hours, the nightly batch).
const DAEMON_FROM = Date.parse('2026-11-27T00:00:00Z');
const DAEMON_TO = DAEMON_FROM + 24 * 3_600_000;

export async function apiEconomy(o: Options): Promise<Figure[]> {
  const { example, config, fixtures, pipes } = exampleCopies(o.pipes);
  // Views exactly as `pipescaler simulate` reads them; a pipe whose service refuses changes
  // (idle, stopped) is left out as simulate leaves it out.
  const reads = viewsFromFixtures(config, fixtures, 'generated fixtures');
  const views: Record<string, PipeView | undefined> = {};
  for (const [name, r] of Object.entries(reads)) views[name] = r.refused ? undefined : (r.view ?? undefined);

  const t0 = performance.now();
  const changes = simulate(config, views, FROM, FROM + WEEK_MS, TICK_MS);
  const simulateMs = performance.now() - t0;

  const byName = new Map(pipes.map((p) => [p.name, p]));
  const { keyId, keySecret } = fixtures.apiKeys[0]!;
  const patches: number[] = [];
  for (let r = 0; r < o.runs; r++) {
    // A fresh cloud per replay, so every replay starts from the fixtures' scaling.
    const cloud = await cloudProcess(fixtures, false);
    const client = new ApiClient({ baseUrl: cloud.url, keyId, keySecret, retry: false });
    try {
      for (const c of changes) {
        const p = byName.get(c.pipe)!;
        await client.scalePipe(
          { organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId },
          c.scaling,
        );
      }
      const seen = (await cloud.stats()).requests.scalePipe ?? {};
      const non200 = Object.entries(seen)
        .filter(([s]) => s !== '200')
        .reduce((n, [, v]) => n + v, 0);
      if (non200 > 0) throw new Error(`replay: ${non200} PATCHes were not 200: ${JSON.stringify(seen)}`);
      patches.push(seen['200'] ?? 0);
    } finally {
      await client.close();
      await cloud.close();
    }
  }

  const scenario = 'api economy';
  const n = o.pipes;
  const required = changes.length;
  const naive = o.pipes * (WEEK_MS / TICK_MS);
  const made = median(patches);
  const note = `week from ${new Date(FROM).toISOString().slice(0, 10)}, 30 s ticks, ${example.pipes.length} example pipes copied to ${n}`;
  const figures: Figure[] = [
    {
      scenario,
      metric: 'scaling changes required (simulate)',
      value: required,
      unit: 'changes',
      n,
      runs: [required],
      note: `${note}; pure and deterministic: 1 run (${(simulateMs / 1000).toFixed(0)} s)`,
    },
    {
      scenario,
      metric: 'PATCHes made replaying them (ApiClient -> cloud)',
      value: made,
      unit: 'PATCH',
      n,
      runs: patches,
      note: 'all 200',
    },
    {
      scenario,
      metric: 'replayed PATCHes / changes required',
      value: made / required,
      unit: 'ratio',
      n,
      runs: patches.map((p) => p / required),
      goal: '1.00',
      pass: made === required,
    },
    {
      scenario,
      metric: 'naive: PATCH every pipe every tick',
      value: naive,
      unit: 'PATCH',
      n,
      runs: [],
      note: '20,160 per pipe-week, by construction',
    },
    { scenario, metric: 'naive / pipescaler', value: naive / made, unit: 'x', n, runs: patches.map((p) => naive / p) },
  ];
  const day = `${new Date(DAEMON_FROM).toISOString().slice(0, 10)}, 2,880 ticks of 30 s, each drained`;
  if (o.daemonMissing !== null) {
    figures.push({
      scenario,
      metric: 'daemon: change PATCHes / changes required',
      value: null,
      unit: '',
      n: o.daemonPipes,
      runs: [],
      goal: '1.00',
      note: `not run: ${o.daemonMissing}`,
    });
    return figures;
  }
  const d = await inFreshProcess<DaemonEconomyResult>(
    new URL('./daemon-economy.ts', import.meta.url).href,
    { pipes: o.daemonPipes, from: DAEMON_FROM, to: DAEMON_TO, deadlineMs: 1_500_000 },
    1_800_000,
  );
  const sum = (r: Record<string, number>, ok: (status: number) => boolean) =>
    Object.entries(r)
      .filter(([s]) => ok(Number(s)))
      .reduce((a, [, v]) => a + v, 0);
  const ok2xx = sum(d.counts.changes, (s) => s >= 200 && s < 300);
  const failed = sum(d.counts.changes, (s) => s >= 300);
  const statuses = Object.entries(d.counts.changes)
    .map(([s, v]) => `${v} x ${s}`)
    .join(', ');
  const dn = o.daemonPipes;
  // A pipe of known kind is met by its first change: one the pipe already had, or one a Completed
  // pipe refuses (400, then a read), is the contact's request, not a change (counting-proxy.ts).
  const contacts = sum(d.counts.contacts, () => true);
  const contactNote =
    contacts === 0
      ? 'none'
      : `${Object.entries(d.counts.contacts)
          .map(([s, v]) => `${v} x ${s}`)
          .join(', ')}: values the pipe already had (2xx) or a Completed pipe's refusal (400, then a read)`;
  figures.push(
    {
      scenario,
      metric: 'daemon: changes required (simulate, same pipes and day)',
      value: d.required,
      unit: 'changes',
      n: dn,
      runs: [d.required],
      note: `${day}; deterministic: 1 run (${(d.ms / 1000).toFixed(0)} s)`,
    },
    {
      scenario,
      metric: 'daemon: change PATCHes that succeeded / required',
      value: ok2xx / d.required,
      unit: 'ratio',
      n: dn,
      runs: [ok2xx / d.required],
      goal: '1.00',
      pass: ok2xx === d.required,
      note: `${ok2xx} PATCHes 2xx`,
    },
    {
      scenario,
      metric: 'daemon: all change PATCHes / required',
      value: (ok2xx + failed) / d.required,
      unit: 'ratio',
      n: dn,
      runs: [(ok2xx + failed) / d.required],
      goal: '1.00',
      pass: failed === 0 && ok2xx === d.required,
      note: statuses,
    },
    {
      scenario,
      metric: 'daemon: reads (empty PATCH) over the day',
      value: sum(d.counts.reads, () => true),
      unit: 'PATCH',
      n: dn,
      runs: [sum(d.counts.reads, () => true)],
      note: 'first contact and reconcile',
    },
    {
      scenario,
      metric: 'daemon: first contacts sent as changes that changed nothing',
      value: contacts,
      unit: 'PATCH',
      n: dn,
      runs: [contacts],
      note: contactNote,
    },
  );
  return figures;
}
