// A model-based test of the lifecycle's safety invariants (fast-check commands), against the
// embedded cloud over HTTP and the real Redis: random sequences of platform states, changes made by
// hand, 4xx/5xx/429 answers, answers that cannot be read, connections cut (before the request
// reaches the cloud, or after the cloud carried it out: the answer lost; in kept cases also before,
// the cloud carrying it out minutes later, after a newer change of the pipe), Redis state loss, config
// reloads and replica restarts, with ticks in between. A proxy in front of the cloud watches every
// request and holds the invariants:
// - no change reaches a pipe pipescaler never saw (since its state was last lost), nor one whose
//   last seen state takes no scaling;
// - no value outside the current config's bounds or the platform's ranges is ever sent;
// - after a change whose answer could not be read or whose connection was cut (its outcome
//   unknown), the daemon records it `unsettled` and the pipe's next request is a read;
// - with propagation injected (a change in effect 90 s after its 200), no change is sent again
//   while it is on its way (the pipe is confirming, or its change's connection was cut after the
//   cloud took it), unless someone changed the pipe by hand or Redis lost pipescaler's state meanwhile;
// - a change whose job outlives its lock (a stall: the proxy holds its answer, the lock goes, BullMQ
//   runs the job again) is never sent again by that second attempt;
// - no drift is found of a pipe that nobody changed by hand and whose state Redis never lost: the
//   daemon's own changes (answered, cut, unreadable, stalled, carried out after a newer one within
//   15 minutes of their send) are never someone else's;
// - every change the cloud answered 200 is recorded once: one outcome, and one audit line by its
//   Idempotency-Key (its 200's `applied`, a read's `landed_late`, or else one `outcome_unknown`);
// - verdicts agree with the reads: after a wipe, met only on a read that showed the target, never
//   late or missed; `excluded` (unseen) only for a start the pipe had not been read by since the
//   last loss, and such a start never late, nor missed with no read by its deadline;
// - status states as the platform's only what a 200 that reached the daemon showed then.
// `npm test` runs a short fixed-seed run; PIPESCALER_MODEL_RUNS=300 (npm run model) a long one, and
// PIPESCALER_MODEL_SEED with PIPESCALER_MODEL_PATH replays one sequence. The commands, the proxy's
// side, the invariants and the builder are in model/ (its README); the sequences it once failed on
// are kept in lifecycle.kept-cases.test.ts.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { commands } from './model/commands.js';
import { closeModel, runModel } from './model/run.js';
import { LIMIT, stats } from './model/setup.js';

const RUNS = Number(process.env.PIPESCALER_MODEL_RUNS ?? 6);
// the short run's seed has changes cut before and after the cloud took them (20261124 had none)
const SEED = Number(process.env.PIPESCALER_MODEL_SEED ?? 11);
/** Replays one counterexample: the `path` fast-check printed with its seed. */
const PATH = process.env.PIPESCALER_MODEL_PATH;

describe('the lifecycle under random platform states, failures, losses, reloads and restarts', () => {
  afterAll(closeModel);

  it(
    'never sends a change to a pipe never seen or last seen in a state that takes no scaling, nor a value outside bounds and ranges',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.commands(commands, { maxCommands: 24, size: 'max' }), (cmds) => runModel(cmds)),
        { numRuns: RUNS, seed: SEED, endOnFailure: true, ...(PATH !== undefined ? { path: PATH } : {}) },
      );
      expect(stats.changesSent).toBeGreaterThan(RUNS);
      // the run cut some changes' connections, both before and after the cloud took them
      if (SEED === 11 || RUNS >= 40)
        expect(Math.min(stats.cutChanges.before, stats.cutChanges.after)).toBeGreaterThan(0);
      // and held some answers through a stall of their job (the short run's seed has one)
      if (SEED === 11 || RUNS >= 40) expect(stats.stalls).toBeGreaterThan(0);
      console.log(
        `model: ${RUNS} runs, seed ${SEED}: ${stats.changesSent} changes, stalls ${stats.stalls} (${stats.lateStalls} settled by a read first), ${stats.lateAnswers} answers late, platform windows ${stats.platform.windows} (most ${stats.platform.most} of ${LIMIT.requests}, ${stats.platform.excused} refused after someone else's spending), verdicts after a wipe ${JSON.stringify(stats.afterWipe)}, unseen ${stats.unseen}, changes recorded by ${JSON.stringify(stats.recorded)}`,
      );
      // each run takes 3-6 s (the platform's window is in real time): a long run is given its time
    },
    Math.max(600_000, RUNS * 12_000),
  );

  // Found by the model (seed 11, 300 runs, path 147): a loss a tick saw (its reads rebuilt the
  // records), then Redis emptied again and the only replica restarted before a tick looked. The
  // replica that starts finds no marker: a new install to it, as when only the second wipe
  // happened. The start at 10:09, which no tick came near (10:06:50, then 10:12:50), is missed for
});
