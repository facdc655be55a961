// `pipescaler validate | plan | simulate`: check a config, see what it decides now, and replay it
// over a period, all with the daemon's own decide().
import type { Command } from 'commander';
import { DateTime } from 'luxon';
import { isConfigError } from '../../policy/config-errors.js';
import { parseDuration } from '../../policy/durations.js';
import { loadConfig } from '../../policy/load-config.js';
import { plan } from '../../policy/plan.js';
import { simulate } from '../../policy/simulate.js';
import type { Config, PipeView } from '../../policy/types.js';
import { readPipeViews, type PipeViews } from '../pipe-views.js';
import { formatPlan, formatSimulation, formatValidate, planJson, simulationJson } from '../policy-output.js';
import { UserError } from '../run-cli.js';

const DEFAULT_CONFIG = 'config/pipescaler.yaml';
/** Decisions a simulation may take before it is refused as too long for its step. */
const MAX_DECISIONS = 5_000_000;

function load(file: string): Config {
  try {
    return loadConfig(file);
  } catch (err) {
    if (!isConfigError(err)) throw err;
    const n = err.issues.length;
    throw new UserError(`${file} is not valid (${n} problem${n === 1 ? '' : 's'}):\n${err.message}`);
  }
}

/** An ISO 8601 time; without an offset it is local time. */
function instant(flag: string, text: string): number {
  const t = DateTime.fromISO(text);
  if (!t.isValid) throw new UserError(`${flag}: ${JSON.stringify(text)} is not an ISO 8601 time (e.g. 2026-11-23T09:00:00+01:00)`);
  return t.toMillis();
}

/** The views decide() can work on; for simulate, without pipes whose every change is refused. */
function knownViews(views: PipeViews, simulating = false): Record<string, PipeView> {
  const out: Record<string, PipeView> = {};
  for (const [name, read] of Object.entries(views)) {
    if (read.view && !(simulating && read.refused)) out[name] = read.view;
  }
  return out;
}

export function registerPolicyCommands(program: Command): void {
  program
    .command('validate')
    .description('check a config: "ok" and its pipes, or every problem with its line')
    .argument('[config]', 'config file', DEFAULT_CONFIG)
    .action((file: string) => {
      process.stdout.write(`${formatValidate(file, load(file))}\n`);
    });

  program
    .command('plan')
    .description('what the policies decide for every pipe at one instant, and why')
    .argument('[config]', 'config file', DEFAULT_CONFIG)
    .option('--at <time>', 'ISO 8601 instant (default: now)')
    .option('--json', 'one JSON object per pipe')
    .action(async (file: string, opts: { at?: string; json?: boolean }) => {
      const config = load(file);
      const at = opts.at === undefined ? Date.now() : instant('--at', opts.at);
      const views = await readPipeViews(config);
      const entries = plan(config, knownViews(views), at);
      process.stdout.write(opts.json
        ? `${JSON.stringify(planJson(at, entries, views), null, 2)}\n`
        : `${formatPlan(at, entries, views)}\n`);
    });

  program
    .command('simulate')
    .description('the scaling changes the daemon would make over a period, with its behavior rules')
    .argument('[config]', 'config file', DEFAULT_CONFIG)
    .requiredOption('--from <time>', 'ISO 8601 start (inclusive)')
    .requiredOption('--to <time>', 'ISO 8601 end (exclusive)')
    .option('--step <duration>', 'evaluation interval', '1m')
    .option('--json', 'one JSON object per change')
    .action(async (file: string, opts: { from: string; to: string; step: string; json?: boolean }) => {
      const config = load(file);
      const from = instant('--from', opts.from);
      const to = instant('--to', opts.to);
      if (to <= from) throw new UserError('--to must be after --from');
      const step = parseDuration(opts.step);
      if (step === null || step <= 0) throw new UserError(`--step: ${JSON.stringify(opts.step)} is not a duration above 0 (e.g. 30s, 1m)`);
      if (((to - from) / step) * Math.max(1, config.pipes.length) > MAX_DECISIONS) {
        throw new UserError('the period is too long for this step: shorten it or use a larger --step');
      }
      const views = await readPipeViews(config);
      const changes = simulate(config, knownViews(views, true), from, to, step);
      process.stdout.write(opts.json
        ? `${JSON.stringify(simulationJson(changes), null, 2)}\n`
        : `${formatSimulation(config, from, to, opts.step, changes, views, plan(config, knownViews(views), from))}\n`);
    });
}
