// The boundary runs of boundary.ts, in one fresh process: first contact, then per run a one-off
// window starts at the tick and moves every pipe's replicas to a new value.
import { setTimeout as sleep } from 'node:timers/promises';
import type { OneOffWindow, Policy } from '../src/policy/types.js';
import type { BoundaryRun, Options } from './boundary.js';
import { firstContact, NO_BEHAVIOR, startHarness, waitForPipes } from './daemon-harness.js';

const START = Date.parse('2026-11-23T08:00:00Z');
const STEP_MS = 60_000;
const WINDOW_MS = 1_000;

export async function runOnce(o: Options): Promise<BoundaryRun[]> {
  // Run k ticks at START + k minutes, inside window k, which sets replicas k + 1 (baseline 1 is
  // what generateFixtures' pipes run).
  const windows: OneOffWindow[] = Array.from({ length: o.runs }, (_, k) => ({
    kind: 'oneOff',
    name: `step-${k + 1}`,
    priority: 0,
    from: START + (k + 1) * STEP_MS,
    to: START + (k + 2) * STEP_MS,
    target: { replicas: { value: k + 2 } },
  }));
  // No lead time: this scenario measures the burst at the boundary itself (with leadTime auto the
  // scale-ups go out before it; the budget scenario measures that).
  const behavior: Policy['behavior'] = { ...NO_BEHAVIOR, scaleUp: { ...NO_BEHAVIOR.scaleUp, leadTime: 0 } };
  const policy: Policy = { name: 'boundary', baseline: { replicas: { value: 1 } }, windows, behavior };
  const h = await startHarness({
    pipes: o.pipes,
    policy,
    concurrency: 10,
    scenario: 'boundary',
    cloudRateLimit: { requests: o.ratePerSecond, perMs: WINDOW_MS },
    keyRateLimit: { requests: o.ratePerSecond, perMs: WINDOW_MS },
  });
  const deadlineMs = Math.max(120_000, (o.pipes / o.ratePerSecond) * 10_000);
  try {
    h.clock = START;
    await firstContact(h, o.pipes, deadlineMs);
    const out: BoundaryRun[] = [];
    for (let k = 0; k < o.runs; k++) {
      // Real ticks are 30 s apart: let the key's window of the previous burst (first contact or
      // the last run) expire, so a run does not start against a window already spent.
      await sleep(2 * WINDOW_MS);
      h.clock = START + (k + 1) * STEP_MS;
      await h.cloud.resetStats();
      const applied = waitForPipes(
        h.daemon,
        'decision',
        o.pipes,
        deadlineMs,
        (e) => e.result === 'applied' && e.after.replicas === k + 2,
      );
      const t0 = performance.now();
      await h.daemon.tick(h.clock);
      await applied;
      const ms = performance.now() - t0;
      const stats = await h.cloud.stats();
      const scale = stats.requests.scalePipe ?? {};
      out.push({ ms, rateLimited: scale['429'] ?? 0, patches: Object.values(scale).reduce((a, b) => a + b, 0) });
    }
    return out;
  } finally {
    await h.close();
  }
}
