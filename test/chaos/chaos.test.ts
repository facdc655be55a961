// The chaos suite, small: the same harness as `npm run chaos` with fewer pipes and boundaries, so
// it fits in CI (about 1.5 minutes). Runs the built daemon: `npx tsc -p .` (or `npm test`) first.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runChaos } from '../../bench/chaos/chaos.js';
import { FULL_PARAMS, type ChaosParams } from '../../bench/chaos/scenario.js';
import { formatSummary } from '../../bench/chaos/summary.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

const CI_PARAMS: ChaosParams = {
  ...FULL_PARAMS,
  pipes: 36,
  boundaries: 5,
  boundaryEveryMs: 5_000,
  keys: 2,
  rateLimit: { requests: 30, windowMs: 1_000 },
  leadMs: 6_000,
  convergeTimeoutMs: 90_000,
  seed: 6,
};

describe('chaos (CI size)', () => {
  it('every pipe converges through faults, a replica SIGKILL and a Redis restart, nothing out of range', async () => {
    expect(existsSync(`${root}/dist/cli/main.js`), 'build first: npx tsc -p .').toBe(true);
    const result = await runChaos(CI_PARAMS, { cwd: root });
    process.stdout.write(`\n${formatSummary(result.summary)}`);
    expect(result.failures).toEqual([]);
    const s = result.summary;
    expect(s.converged.pipes).toBe(s.converged.of);
    expect(s.outOfRange).toBe(0);
    expect(s.kills).toBe(1);
    expect(s.redisRestarts).toBe(1);
    expect(s.unhandled).toBe(0);
    // The faults were really there, and hit the scaling changes themselves.
    expect(s.faults.error500 ?? 0).toBeGreaterThan(0);
    expect(s.faults.error503 ?? 0).toBeGreaterThan(0);
    expect(s.faults.reset ?? 0).toBeGreaterThan(0);
    expect(s.faults.error429 ?? 0).toBeGreaterThan(0);
    expect(s.patches.retried).toBeGreaterThan(0);
  }, 180_000);
});
