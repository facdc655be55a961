// API economy (issue 6): a simulated week of the shipped example policies (config/pipescaler.yaml)
// over 1,000 pipes, each a copy of one of the example's pipes (same service, kind, state, scaling
// and policy) under a generated name and id. Counts the scaling changes simulate() requires, then
// replays each change as one PATCH through ApiClient against the embedded cloud (its own process,
// rate limit off) and counts the PATCHes the cloud saw, against a naive daemon that PATCHes every
// pipe at every 30 s tick. The daemon's own PATCH count over a week is not measured here: a week
// of 30 s ticks through BullMQ would take hours.
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../src/api/index.js';
import { viewsFromFixtures } from '../src/cli/pipe-views.js';
import { loadFixtures, seqUuid } from '../src/cloud/index.js';
import { loadConfig, simulate } from '../src/policy/index.js';
import type { Config, PipeConfig, PipeView } from '../src/policy/types.js';
import { cloudProcess } from './child.js';
import { median, type Figure } from './stats.js';

const CONFIG = fileURLToPath(new URL('../config/pipescaler.yaml', import.meta.url));
const WEEK_MS = 7 * 24 * 3_600_000;
const TICK_MS = 30_000;
// The week of the example's Black Friday window (its one-off event), Monday 00:00 UTC.
const FROM = Date.parse('2026-11-23T00:00:00Z');
const COPY_BASE = 0xd3000000;

export interface Options {
  pipes: number;
  /** Replays of the simulated changes through the client (the simulation is pure: run once). */
  runs: number;
}

export async function apiEconomy(o: Options): Promise<Figure[]> {
  const example = loadConfig(CONFIG, { ...process.env, PIPESCALER_BASE_URL: 'embedded' });
  const fixtures = structuredClone(loadFixtures(example.api.fixtures));
  const pipes: PipeConfig[] = [];
  for (let i = 0; i < o.pipes; i++) {
    const model = example.pipes[i % example.pipes.length]!;
    const service = fixtures.organizations.flatMap((g) => g.services).find((s) => s.id.toLowerCase() === model.serviceId)!;
    const original = service.pipes.find((p) => p.id.toLowerCase() === model.pipeId)!;
    const pipeId = seqUuid(COPY_BASE, i + 1);
    service.pipes.push({ ...structuredClone(original), id: pipeId, name: `${original.name}-copy-${i + 1}` });
    pipes.push({ ...model, name: `${model.name}-${i + 1}`, pipeId });
  }
  const config: Config = { ...example, pipes };
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
        await client.scalePipe({ organizationId: p.organizationId, serviceId: p.serviceId, pipeId: p.pipeId }, c.scaling);
      }
      const seen = (await cloud.stats()).requests.scalePipe ?? {};
      const non200 = Object.entries(seen).filter(([s]) => s !== '200').reduce((n, [, v]) => n + v, 0);
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
  return [
    { scenario, metric: 'scaling changes required (simulate)', value: required, unit: 'changes', n, runs: [required], note: `${note}; pure and deterministic: 1 run (${(simulateMs / 1000).toFixed(0)} s)` },
    { scenario, metric: 'PATCHes made replaying them (ApiClient -> cloud)', value: made, unit: 'PATCH', n, runs: patches, note: 'all 200; the daemon\'s own count needs the daemon' },
    { scenario, metric: 'PATCHes / changes required', value: made / required, unit: 'ratio', n, runs: patches.map((p) => p / required), goal: '1.00', pass: made === required },
    { scenario, metric: 'naive: PATCH every pipe every tick', value: naive, unit: 'PATCH', n, runs: [], note: '20,160 per pipe-week, by construction' },
    { scenario, metric: 'naive / pipescaler', value: naive / made, unit: 'x', n, runs: patches.map((p) => naive / p) },
  ];
}

