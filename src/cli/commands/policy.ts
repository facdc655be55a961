// `pipescaler validate | plan | simulate`: check a config, see what it decides now, and replay it
// over a period, all with the daemon's own decide().
import type { Command } from 'commander';
import { writeFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { isConfigError, didYouMean, loadConfig, type Config } from '../../config/index.js';
import { plan, simulate, describeKeyPlan, keyPlans, count, parseDuration, type PipeView } from '../../policy/index.js';
import { readPipeViews, type PipeViews } from '../pipe-views.js';
import { withReadLine } from '../running-cloud.js';
import { withSimulatedOverrides } from '../override-args.js';
import {
  planOverrideJson,
  readMeasuredActuation,
  readPlanState,
  unreadableLine,
  withPlanOverrides,
} from '../stored-overrides.js';
import { actuationFrom } from '../actuation-text.js';
import {
  formatInstant,
  formatPlan,
  formatSimulation,
  formatValidate,
  planJson,
  simulationJson,
} from '../policy-output.js';
import { renderPlanReport } from '../plan-report.js';
import { renderReport, simulationReport, skipReasons } from '../html-report.js';
import { progress } from '../progress.js';
import { UserError } from '../run-cli.js';
import { configFile, DEFAULT_CONFIG } from '../cli-input.js';
import { guardConfig } from '../output-guard.js';
import {
  formatBands,
  formatMetricPlan,
  liveReadings,
  metricJson,
  recordedMetrics,
  validateQueries,
  withReadings,
} from '../metric-cli.js';

const OVERRIDE_HELP =
  'see an override before setting it: PIPE:FIELD=VALUE[,FIELD=VALUE]@FROM..TO (ISO 8601 instants), e.g. orders-events:replicas=8@2026-11-24T16:00:00Z..2026-11-24T18:00:00Z';
/**
 * Ticks a simulation may span before it is refused as too long for its step: a year at 15 s.
 * simulate() skips quiet ticks, but a metric policy is decided at every one.
 */
const MAX_TICKS = 2_200_000;

/** `alsoIn`: folders where a relative file the config names is looked for when not next to it. */
export function load(
  file: string,
  alsoIn: readonly string[] = [],
  absentSecretFile?: (file: string, code: string) => void,
): Config {
  try {
    const config = loadConfig(file, process.env, 'all', undefined, alsoIn, absentSecretFile);
    guardConfig(config);
    return config;
  } catch (err) {
    if (!isConfigError(err)) throw err;
    const n = err.issues.length;
    throw new UserError(`${file} is not valid (${n} problem${n === 1 ? '' : 's'}):\n${err.message}`);
  }
}

/** An ISO 8601 time; without an offset it is local time. */
export function instant(flag: string, text: string): number {
  const t = DateTime.fromISO(text);
  if (!t.isValid)
    throw new UserError(`${flag}: ${JSON.stringify(text)} is not an ISO 8601 time (e.g. 2026-11-23T09:00:00+01:00)`);
  return t.toMillis();
}

/** The views decide() can work on (a pipe of an idle service too: decide() skips it, as the daemon). */
export function knownViews(views: PipeViews): Record<string, PipeView> {
  const out: Record<string, PipeView> = {};
  for (const [name, read] of Object.entries(views)) {
    if (read.view) out[name] = read.view;
  }
  return out;
}

/** Writes an HTML report; a path that cannot be written is the user's mistake. */
export function writeReport(file: string, html: string): void {
  try {
    writeFileSync(file, html);
  } catch (err) {
    throw new UserError(`--html: cannot write ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  process.stderr.write(`wrote ${file}\n`);
}

/** The config with only the pipes named by --pipe (all without it). */
export function onlyPipes(config: Config, names: readonly string[] | undefined): Config {
  if (names === undefined) return config;
  const known = new Set(config.pipes.map((p) => p.name));
  for (const name of names) {
    if (!known.has(name)) {
      throw new UserError(`--pipe: no pipe named ${JSON.stringify(name)} in the config${didYouMean(name, known)}`);
    }
  }
  return { ...config, pipes: config.pipes.filter((p) => names.includes(p.name)) };
}

/** --from, --to and --step of a simulation, checked. */
export function period(opts: { from: string; to: string; step: string }): { from: number; to: number; step: number } {
  const from = instant('--from', opts.from);
  const to = instant('--to', opts.to);
  if (to <= from) throw new UserError('--to must be after --from');
  const step = parseDuration(opts.step);
  if (step === null || step <= 0)
    throw new UserError(`--step: ${JSON.stringify(opts.step)} is not a duration above 0 (e.g. 30s, 1m)`);
  if ((to - from) / step > MAX_TICKS) {
    throw new UserError('the period is too long for this step: shorten it or use a larger --step');
  }
  return { from, to, step };
}

/** A plan of pipes it could not read is no plan of them: the command says which and exits 2
 *  (the platform unreachable made every pipe "unknown" and still exited 0). */
function failIfUnread(views: PipeViews): void {
  const unread = Object.entries(views).filter(([, v]) => v.unreadable !== undefined);
  if (unread.length === 0) return;
  const total = Object.keys(views).length;
  const list = unread
    .slice(0, 5)
    .map(([name, v]) => `${name} (${v.unreadable})`)
    .join(', ');
  throw new UserError(
    `could not read ${unread.length} of ${total} pipe${total === 1 ? '' : 's'}: ${list}${unread.length > 5 ? ', ...' : ''}`,
    2,
  );
}

export function registerPolicyCommands(program: Command): void {
  program
    .command('validate')
    .description('check a config: "ok" and its pipes, or every problem with its line')
    .argument('[config]', `config file (default ${DEFAULT_CONFIG})`)
    .option('-c, --config <path>', 'config file (instead of the argument)')
    .option('--allow-empty', 'accept a config without pipes')
    .option(
      '--offline',
      "check a deployment's config away from it: a secret file not present here is a note, not an error; no Prometheus query",
    )
    .action(async (arg: string | undefined, opts: { allowEmpty?: boolean; config?: string; offline?: boolean }) => {
      const file = configFile(arg, opts.config);
      const absent: string[] = [];
      const config = load(
        file,
        [],
        opts.offline
          ? (path, code) => absent.push(`secret file ${path} not present here (${code}): not checked`)
          : undefined,
      );
      if (config.pipes.length === 0 && !opts.allowEmpty) {
        throw new UserError(
          `${file} has no pipes: the daemon would scale nothing (a half-written file?); --allow-empty accepts it`,
        );
      }
      process.stdout.write(`${formatValidate(file, config)}\n`);
      // each secret file --offline could not read: the daemon reads it where it runs
      for (const note of [...new Set(absent)]) process.stdout.write(`note: ${note}\n`);
      // What each key's request budget affords: reconcile period, scale-down bound, boundary lead.
      process.stdout.write(`${keyPlans(config).map(describeKeyPlan).join('\n')}\n`);
      // metric queries through Prometheus' own parser, when the configured server answers
      if (opts.offline) return;
      const queries = await validateQueries(config);
      if (queries.text !== '') process.stdout.write(`${queries.text}\n`);
      if (queries.failed) process.exitCode = 1;
    });

  program
    .command('plan')
    .description('what the policies decide for every pipe at one instant, and why')
    .argument('[config]', `config file (default ${DEFAULT_CONFIG})`)
    .option('-c, --config <path>', 'config file (instead of the argument)')
    .option('--at <time>', 'ISO 8601 instant (default: now)')
    .option('--json', 'one JSON array, an object per pipe')
    .option(
      '--html <file>',
      "also write a self-contained HTML report: each key's lead slots by boundary, with the capacity each spends early and short",
    )
    .option('--pipe <name...>', 'only these pipes')
    .option('--offline', 'read nothing from the platform: assume each pipe from its declared or implied kind')
    .option('--override <spec...>', OVERRIDE_HELP)
    .action(
      async (
        arg: string | undefined,
        opts: {
          at?: string;
          json?: boolean;
          html?: string;
          pipe?: string[];
          offline?: boolean;
          config?: string;
          override?: string[];
        },
      ) => {
        const file = configFile(arg, opts.config);
        const fleet = load(file);
        const config = onlyPipes(fleet, opts.pipe);
        const at = opts.at === undefined ? Date.now() : instant('--at', opts.at);
        withSimulatedOverrides({}, opts.override, config.pipes); // checked before anything is read
        let readLine = '';
        const views = await readPipeViews(config, {
          offline: opts.offline ?? false,
          file,
          read: (line) => (readLine = line),
        });
        const readings = await liveReadings(config, at); // Prometheus, not the platform: --offline does not skip it
        // what `pipescaler override` (or onDrift) stored, as the daemon decides with it (a what-if on
        // top), and the actuation the daemon measured, as its lead plans count on it
        const { overrides: stored, estimates } = await readPlanState(config, fleet, file);
        const unread = unreadableLine(stored);
        if (unread !== null) process.stderr.write(`${unread}\n`);
        const known = withPlanOverrides(knownViews(views), stored, opts.override, config.pipes);
        const actuationOf = actuationFrom(estimates);
        // the keys' lead plans are the whole fleet's, whatever --pipe shows
        const entries = plan(config, withReadings(known.views, readings), at, fleet, {
          actuationMs: (p) => actuationOf(p)?.ms,
        });
        if (opts.html !== undefined)
          writeReport(opts.html, renderPlanReport(entries, `${file} at ${formatInstant(at)}; ${readLine}`));
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(
                planJson(
                  at,
                  entries,
                  views,
                  (e) => ({ ...planOverrideJson(known.overrides[e.pipe.name]), ...metricJson(config, e) }),
                  actuationOf,
                ),
                null,
                2,
              )}\n`
            : `${withReadLine(formatPlan(at, entries, views, known.overrides, actuationOf), readLine)}${formatMetricPlan(config, entries)}\n`,
        );
        failIfUnread(views);
      },
    );

  program
    .command('simulate')
    .description('the scaling changes the daemon would make over a period, with its behavior rules')
    .argument('[config]', `config file (default ${DEFAULT_CONFIG})`)
    .option('-c, --config <path>', 'config file (instead of the argument)')
    .requiredOption('--from <time>', 'ISO 8601 start (inclusive)')
    .requiredOption('--to <time>', 'ISO 8601 end (exclusive)')
    .option('--step <duration>', 'evaluation interval', '1m')
    .option('--json', 'one JSON array, an object per change')
    .option('--html <file>', 'also write a self-contained HTML report: a step chart per pipe and field')
    .option('--pipe <name...>', 'only these pipes')
    .option('--offline', 'read nothing from the platform: assume each pipe from its declared or implied kind')
    .option(
      '--metrics <file...>',
      'recorded metric series ([policy=]FILE, a Prometheus range-query answer) for metric policies',
    )
    .option('--override <spec...>', OVERRIDE_HELP)
    .action(
      async (
        arg: string | undefined,
        opts: {
          config?: string;
          from: string;
          to: string;
          step: string;
          json?: boolean;
          html?: string;
          pipe?: string[];
          offline?: boolean;
          metrics?: string[];
          override?: string[];
        },
      ) => {
        const file = configFile(arg, opts.config);
        const fleet = load(file);
        const config = onlyPipes(fleet, opts.pipe);
        const { from, to, step } = period(opts);
        withSimulatedOverrides({}, opts.override, config.pipes); // checked before anything is read
        let readLine = '';
        const views = await readPipeViews(config, {
          offline: opts.offline ?? false,
          file,
          read: (line) => (readLine = line),
        });
        const metricAt = opts.metrics ? recordedMetrics(config, opts.metrics) : undefined;
        // the actuation the daemon measured (the pipe's p95, its kind's), as its lead plans and plan
        // count on it; without Redis, one warning line and the configured expectation
        const measured = await readMeasuredActuation(fleet, file);
        const unread = unreadableLine(measured, 'the simulation counts');
        if (unread !== null) process.stderr.write(`${unread}\n`);
        const actuationOf = actuationFrom('estimates' in measured ? measured.estimates : null);
        const bar = progress('simulate');
        const simulated = withSimulatedOverrides(knownViews(views), opts.override, config.pipes);
        const changes = simulate(config, simulated, from, to, step, {
          ...(metricAt ? { metricAt } : {}),
          onProgress: (d, t) => bar.update(d, t),
          fleet,
          actuationMs: (p) => actuationOf(p)?.ms,
        });
        bar.end();
        const atStart = plan(config, knownViews(views), from, fleet, { actuationMs: (p) => actuationOf(p)?.ms });
        if (opts.html !== undefined) {
          const notes = Object.fromEntries(Object.entries(views).map(([name, read]) => [name, read.note]));
          const subtitle = `${file}, ${new Date(from).toISOString()} .. ${new Date(to).toISOString()}, every ${opts.step}: ${count(changes.length, 'change')}`;
          writeReport(
            opts.html,
            renderReport(
              simulationReport(
                config,
                knownViews(views),
                notes,
                changes,
                from,
                to,
                subtitle,
                skipReasons(atStart, changes),
                metricAt,
              ),
            ),
          );
        }
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(simulationJson(changes, views, config.pipes, actuationOf), null, 2)}\n`
            : `${withReadLine(formatSimulation(config, from, to, opts.step, changes, views, atStart, actuationOf), readLine)}${metricAt ? '' : formatBands(config, knownViews(views), from, to, step)}\n`,
        );
      },
    );
}
