// The chaos suite, small: the same harness as `npm run chaos` with fewer pipes and boundaries, so
// it fits in CI. Two runs side by side (about 1.5 minutes together): Redis comes back empty in
// one, with its data in the other (then the SIGKILLed replica's in-flight jobs must be recovered
// as stalled jobs). Runs the built daemon: `npm run build` (or `npm test`) first. The checks of
// checks/ are all printed; HELD are the ones each run must pass (the others do not hold yet:
// bench/chaos/README.md).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runChaos } from '../../bench/chaos/chaos.js';
import { CHECK_NAMES, checkFailures, type CheckName } from '../../bench/chaos/checks/index.js';
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
  // The tail is a pipe whose change hit a streak of injected failures: BullMQ's backoff from the
  // key's window, doubling up to the reconcile period (30 s), or a killed replica's job waiting out
  // its lock (10 s) and the next stalled check (5 s) and then its request's time (api.timeout,
  // 10 s) before a read settles it. Three lost sends in a row on one pipe took past 100 s in about
  // 1-2 % of runs.
  convergeTimeoutMs: 170_000,
};

/** The checks of checks/ each CI run is held to: all of them. `recorded` holds since the logger
 *  writes each line to stdout as it is logged (a change answered 200 to the replica SIGKILLed 300 ms
 *  after a boundary had lost its line from the logger's buffer). `verdicts` holds again: its 3
 *  `missed` of a fresh-clone run were the daemon's (an evaluation held up by the SIGKILL judged
 *  starts by a confirmation newer than their deadline; the record now keeps the ones it replaced),
 *  and a start the daemon had read nothing of (a first-contact read answered to the killed replica)
 *  is `excluded` as `unseen`, not missed. See bench/chaos/README.md. */
const HELD: readonly CheckName[] = CHECK_NAMES;

async function chaos(params: ChaosParams): Promise<void> {
  expect(existsSync(`${root}/dist/cli/main.js`), 'build first: npm run build').toBe(true);
  const result = await runChaos(params, { cwd: root, held: HELD });
  process.stdout.write(`\n${formatSummary(result.summary)}`);
  const notHeld = checkFailures(
    result.checks,
    CHECK_NAMES.filter((c) => !HELD.includes(c)),
  );
  if (notHeld.length > 0) process.stdout.write(`\nnot asserted (does not hold yet):\n- ${notHeld.join('\n- ')}\n`);
  expect(result.failures).toEqual([]);
  const s = result.summary;
  expect(s.converged.pipes).toBe(s.converged.of);
  expect(s.outOfRange).toBe(0);
  expect(s.kills).toBe(1);
  expect(s.redisRestarts).toBe(params.redisRestarts.length);
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
      await chaos({ ...CI_PARAMS, redisRestarts: ['empty'], seed: 6 });
    },
    240_000,
  );

  it.concurrent(
    'converges through faults, a replica SIGKILL and a Redis restart that keeps its data',
    async () => {
      await chaos({ ...CI_PARAMS, redisRestarts: ['keep'], seed: 7 });
    },
    240_000,
  );
});
