// The chaos suite, small: the same harness as `npm run chaos` with fewer pipes and boundaries, so
// it fits in CI. Two runs side by side (about 1.5 minutes together): Redis comes back empty in
// one, with its data in the other (then the SIGKILLed replica's in-flight jobs must be recovered
// as stalled jobs). Runs the built daemon: `npm run build` (or `npm test`) first.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runChaos } from '../../bench/chaos/chaos.js';
import { FULL_PARAMS, type ChaosParams } from '../../bench/chaos/scenario.js';
import { formatSummary } from '../../bench/chaos/summary.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const CI_PARAMS: ChaosParams = {
  ...FULL_PARAMS,
  pipes: 32,
  boundaries: 5,
  boundaryEveryMs: 5_000,
  keys: 2,
  rateLimit: { requests: 30, perMs: 1_000 },
  leadMs: 6_000,
  // A stalled job waits out BullMQ's lock (30 s) and the next stalled check (30 s).
  convergeTimeoutMs: 100_000,
};

async function chaos(params: ChaosParams): Promise<void> {
  expect(existsSync(`${root}/dist/cli/main.js`), 'build first: npm run build').toBe(true);
  const result = await runChaos(params, { cwd: root });
  process.stdout.write(`\n${formatSummary(result.summary)}`);
  expect(result.failures).toEqual([]);
  const s = result.summary;
  expect(s.converged.pipes).toBe(s.converged.of);
  expect(s.outOfRange).toBe(0);
  expect(s.kills).toBe(1);
  expect(s.redisRestarts).toBe(1);
  expect(s.unhandled).toBe(0);
  expect(s.cleanExits.ok).toBe(s.cleanExits.of);
  // The faults were really there and hit the scaling changes themselves.
  expect(s.faults.error500 ?? 0).toBeGreaterThan(0);
  expect(s.faults.error503 ?? 0).toBeGreaterThan(0);
  expect(s.faults.reset ?? 0).toBeGreaterThan(0);
  expect(s.faults.error429 ?? 0).toBeGreaterThan(0);
  expect(s.patches.retried).toBeGreaterThan(0);
}

describe('chaos (CI size)', () => {
  it.concurrent(
    'converges through faults, a replica SIGKILL and an empty Redis restart; nothing out of range',
    async () => {
      await chaos({ ...CI_PARAMS, redisKeepsData: false, seed: 6 });
    },
    170_000,
  );

  it.concurrent(
    'converges through faults, a replica SIGKILL and a Redis restart that keeps its data',
    async () => {
      await chaos({ ...CI_PARAMS, redisKeepsData: true, seed: 7 });
    },
    170_000,
  );
});
