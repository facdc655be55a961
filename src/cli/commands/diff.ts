// `pipescaler diff BASE HEAD --from T --to T`: what a config change would decide differently,
// pipe by pipe, and the capacity each config runs. Exit 0: the same; 2: they differ; 1: error
// (as `terraform plan -detailed-exitcode`), so CI can comment on a pull request.
import { dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { diffConfigs, plan, simulate, type DiffSide } from '../../policy/index.js';
import type { Config } from '../../config/index.js';
import { capacityLine, capacityRows, diffJson, formatDiff } from '../diff-output.js';
import { diffReport, renderReport, skipReasons } from '../html-report.js';
import { readPipeViews } from '../pipe-views.js';
import { withReadLine } from '../running-cloud.js';
import { knownViews, load, onlyPipes, period, writeReport } from './policy.js';

/** BASE and HEAD narrowed to the pipes of --pipe: a name in either config counts (added, removed). */
function narrow(base: Config, head: Config, names: readonly string[] | undefined): [Config, Config] {
  if (names === undefined) return [base, head];
  // a name in neither config is refused, with a guess at the one meant
  onlyPipes({ ...base, pipes: [...base.pipes, ...head.pipes] }, names);
  const keep = (c: Config): Config => ({ ...c, pipes: c.pipes.filter((p) => names.includes(p.name)) });
  return [keep(base), keep(head)];
}

/** One config simulated; `fleet` is the whole file, whose lead plans stay the same under --pipe. */
async function side(
  config: Config,
  fleet: Config,
  from: number,
  to: number,
  step: number,
  offline: boolean,
  readLine: (line: string) => void,
): Promise<DiffSide> {
  // on embedded, the fixtures: a diff compares the configs from the same start, run after run
  const read = await readPipeViews(config, { offline, running: false, read: readLine });
  const views = knownViews(read);
  return { config, views, changes: simulate(config, views, from, to, step, { fleet }) };
}

export function registerDiffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      'what HEAD decides differently from BASE over a period, and the capacity each runs (exit 0 same, 2 differ, 1 error)',
    )
    .argument('<base>', 'config file before the change')
    .argument('<head>', 'config file after the change')
    .requiredOption('--from <time>', 'ISO 8601 start (inclusive)')
    .requiredOption('--to <time>', 'ISO 8601 end (exclusive)')
    .option('--step <duration>', 'evaluation interval', '1m')
    .option('--json', 'one JSON object: totals and an entry per pipe')
    .option('--pipe <name...>', 'only these pipes (by name, in either config)')
    .option('--offline', 'read nothing from the platform: assume each pipe from its declared or implied kind')
    .option('--html <file>', 'also write a self-contained HTML report: base and head overlaid per pipe and field')
    .action(
      async (
        baseFile: string,
        headFile: string,
        opts: {
          from: string;
          to: string;
          step: string;
          json?: boolean;
          html?: string;
          offline?: boolean;
          pipe?: string[];
        },
      ) => {
        const { from, to, step } = period(opts);
        // An edited copy is often written elsewhere (head.yaml at the root, base.yaml from git show):
        // a relative calendar or fixtures file not next to one config is the other's.
        const baseFleet = load(baseFile, [dirname(headFile)]);
        const headFleet = load(headFile, [dirname(baseFile)]);
        const [base, head] = narrow(baseFleet, headFleet, opts.pipe);
        const offline = opts.offline ?? false;
        // one read line, the base's; the head's too when it read another fixtures file or source
        const reads = new Map<string, string>();
        const readOf = (c: Config) => (line: string) => {
          const same = line.replace(c.api.fixtures, resolve(c.api.fixtures));
          if (!reads.has(same)) reads.set(same, reads.size === 0 ? line : line.replace(/^read: /, 'head read: '));
        };
        const baseSide = await side(base, baseFleet, from, to, step, offline, readOf(base));
        const headSide = await side(head, headFleet, from, to, step, offline, readOf(head));
        const diff = diffConfigs(baseSide, headSide, from, to);
        // skipped pipes are named with the reason the head config (else the base) gives at the start
        const skips = {
          ...skipReasons(plan(base, baseSide.views, from), baseSide.changes),
          ...skipReasons(plan(head, headSide.views, from), headSide.changes),
        };
        if (opts.html !== undefined) {
          const subtitle = `${baseFile} -> ${headFile}, ${new Date(from).toISOString()} .. ${new Date(to).toISOString()}, every ${opts.step}`;
          const lines = new Map(diff.pipes.map((d) => [d.pipe, capacityLine(d)]));
          const capacity = { total: capacityRows(diff.total), line: (pipe: string) => lines.get(pipe) };
          writeReport(opts.html, renderReport(diffReport(baseSide, headSide, diff, subtitle, capacity, skips)));
        }
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(diffJson(diff), null, 2)}\n`
            : `${withReadLine(formatDiff(baseFile, headFile, opts.step, diff, skips), [...reads.values()].join('\n'))}\n`,
        );
        if (diff.differs) process.exitCode = 2;
      },
    );
}
