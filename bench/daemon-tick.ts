// One steady-tick run of the daemon (steady-tick.ts), in a fresh process: N stream pipes whose
// scaling already is the policy's baseline, first contact done, one warm tick, then the measured
// tick: from daemon.tick() until every pipe's evaluation event. Nothing may be applied.
import type { Policy } from '../src/policy/types.js';
import { firstContact, NO_BEHAVIOR, startHarness, waitForPipes } from './daemon-harness.js';
import type { DaemonTickResult } from './steady-tick.js';

export interface DaemonTickArgs {
  pipes: number;
  concurrency: number;
  deadlineMs: number;
}

// generateFixtures' stream pipes run 1 replica, 250 millicores, 1 GB.
const STEADY: Policy = {
  name: 'steady',
  baseline: { replicas: { value: 1 }, replicaCpuMillicores: { value: 250 }, replicaMemoryGb: { value: 1 } },
  windows: [],
  behavior: NO_BEHAVIOR,
};

export async function runOnce(args: DaemonTickArgs): Promise<DaemonTickResult> {
  const h = await startHarness({
    pipes: args.pipes,
    policy: STEADY,
    cloudRateLimit: false,
    concurrency: args.concurrency,
    scenario: 'steady',
    // Only first contact goes through the lane; a high limit keeps that setup short.
    keyRateLimit: { requests: 500, perMs: 1_000 },
  });
  let applies = 0;
  h.daemon.emitter.on('apply:start', () => applies++);
  try {
    await firstContact(h, args.pipes, args.deadlineMs);
    const contactApplies = applies;
    let tickMs = 0;
    let tickRssMb = 0;
    for (const measured of [false, true]) {
      h.clock += 30_000;
      const done = waitForPipes(h.daemon, 'evaluation', args.pipes, args.deadlineMs);
      // The process's peak includes first contact; this is the steady tick's own high-water mark.
      let rss = process.memoryUsage.rss();
      const sampler = setInterval(() => (rss = Math.max(rss, process.memoryUsage.rss())), 10);
      const t0 = performance.now();
      await h.daemon.tick(h.clock);
      await done;
      clearInterval(sampler);
      if (measured) {
        tickMs = performance.now() - t0;
        tickRssMb = Math.round(Math.max(rss, process.memoryUsage.rss()) / 2 ** 20);
      }
    }
    return {
      tickMs,
      tickRssMb,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      evaluations: args.pipes,
      applies: applies - contactApplies,
    };
  } finally {
    await h.close();
  }
}
