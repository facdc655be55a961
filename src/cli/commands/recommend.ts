// `pipescaler recommend`: the cheapest settings of a metric policy that keep its SLO on recorded
// load, by replaying the series through the daemon's own decide() over a grid of candidates
// (src/policy/recommend.ts), and the config lines to change.
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import {
  assumedKind,
  assumedView,
  hasMetric,
  parseDuration,
  parseRangeQuery,
  pickSeries,
  type MetricPolicy,
  type RecordedSeries,
} from '../../policy/index.js';
import type { Config } from '../../config/index.js';
import {
  recommend,
  settingsDiff,
  type CandidateResult,
  type RecordedPipe as RecommendedPipe,
  type Recommendation,
} from '../../policy/index.js';
import { formatTable } from '../table.js';
import { UserError } from '../run-cli.js';
import { load, period } from './policy.js';
import { configFile, DEFAULT_CONFIG } from '../cli-input.js';

function durationFlag(flag: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === null) throw new UserError(`${flag}: ${JSON.stringify(text)} is not a duration (e.g. 30m, 2h)`);
  return ms;
}

function pickPolicy(config: Config, name: string | undefined): MetricPolicy {
  const metric = Object.values(config.policies).filter(hasMetric);
  const withReplicas = metric.filter((p) => p.metric.targetPer.replicas !== undefined);
  if (name !== undefined) {
    const p = withReplicas.find((x) => x.name === name);
    if (!p)
      throw new UserError(
        `--policy: ${JSON.stringify(name)} is not a metric policy with targetPerReplica (there: ${withReplicas.map((x) => x.name).join(', ') || 'none'})`,
      );
    return p;
  }
  const [only] = withReplicas;
  if (withReplicas.length !== 1 || only === undefined)
    throw new UserError(
      withReplicas.length === 0
        ? 'the config has no metric policy with targetPerReplica to recommend settings for'
        : `name the policy with --policy (${withReplicas.map((x) => x.name).join(', ')})`,
    );
  return only;
}

function readSeries(files: readonly string[]): RecordedSeries[] {
  return files.flatMap((file) => {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new UserError(`--metrics: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
    }
    try {
      return parseRangeQuery(text);
    } catch (err) {
      throw new UserError(`--metrics: ${file} ${(err as Error).message}`);
    }
  });
}

const minutes = (ms: number): string => (ms === 0 ? '0' : `${ms / 60_000}m`);
const r1 = (v: number): string => (Math.round(v * 10) / 10).toString();

function settingsLine(c: CandidateResult): string {
  const s = c.settings;
  return `targetPerReplica ${r1(s.targetPerReplica)}, baseline min ${s.baselineMin}, stabilization ${minutes(s.stabilizationMs)}, window mins x${s.windowMinScale}: ${r1(c.capacityHours)} capacity-hours, ${r1(c.overMinutes)} min over target`;
}

export function formatRecommendation(r: Recommendation, policy: MetricPolicy, head: string): string {
  const lines = [
    head,
    `SLO: at most ${r1(r.sloMinutes)} min over target`,
    '',
    `current:      ${settingsLine(r.current)}`,
  ];
  if (r.best === null) {
    lines.push('recommended:  keep the current config: no candidate keeps the SLO at its cost or less');
  } else if (r.best.current) {
    lines.push('recommended:  keep the current config: no cheaper candidate keeps the SLO');
  } else {
    const saved = 1 - r.best.capacityHours / r.current.capacityHours;
    lines.push(
      `recommended:  ${settingsLine(r.best)} (${(saved * 100).toFixed(1)} % less)`,
      '',
      'config diff:',
      ...settingsDiff(policy, r.best.settings).map((l) => `  ${l}`),
    );
  }
  lines.push(
    '',
    `candidates (${r.candidates.length}, cheapest first):`,
    formatTable(r.candidates, [
      { header: 'targetPerReplica', value: (c) => r1(c.settings.targetPerReplica), align: 'right' },
      { header: 'baseline min', value: (c) => c.settings.baselineMin, align: 'right' },
      { header: 'stabilization', value: (c) => minutes(c.settings.stabilizationMs), align: 'right' },
      { header: 'window mins', value: (c) => `x${c.settings.windowMinScale}`, align: 'right' },
      { header: 'capacity-hours', value: (c) => r1(c.capacityHours), align: 'right' },
      { header: 'min over target', value: (c) => r1(c.overMinutes), align: 'right' },
      {
        header: 'verdict',
        value: (c) => (c === r.best ? 'recommended' : (c.lost ?? '')) + (c.current ? ' (current)' : ''),
      },
    ]),
  );
  return lines.join('\n');
}

export function registerRecommendCommand(program: Command): void {
  program
    .command('recommend')
    .description(
      'the cheapest settings of a metric policy that keep its SLO on recorded load (replayed through decide())',
    )
    .argument('[config]', `config file (default ${DEFAULT_CONFIG})`)
    .option('-c, --config <path>', 'config file (instead of the argument)')
    .requiredOption('--metrics <file...>', 'recorded series of the policy (Prometheus range-query answers)')
    .requiredOption('--from <time>', 'ISO 8601 start (inclusive)')
    .requiredOption('--to <time>', 'ISO 8601 end (exclusive)')
    .option('--slo <duration>', "most time over target over the period (default: the current config's own)")
    .option('--policy <name>', 'the metric policy (needed when the config has several)')
    .option('--step <duration>', 'evaluation interval', '1m')
    .option('--actuation <duration>', 'how long a change takes to give capacity', '5m')
    .option('--json', 'the recommendation as JSON')
    .action(
      (
        arg: string | undefined,
        opts: {
          config?: string;
          metrics: string[];
          from: string;
          to: string;
          slo?: string;
          policy?: string;
          step: string;
          actuation: string;
          json?: boolean;
        },
      ) => {
        const file = configFile(arg, opts.config);
        const config = load(file);
        const { from, to, step } = period(opts);
        const policy = pickPolicy(config, opts.policy);
        const series = readSeries(opts.metrics);
        const pipes: RecommendedPipe[] = [];
        for (const pipe of config.pipes.filter((p) => p.policy === policy.name)) {
          const one = pickSeries(series, policy, pipe);
          const kind = assumedKind(pipe, policy)?.kind ?? 'stream';
          if (!('error' in one)) pipes.push({ name: pipe.name, series: one, view: assumedView(pipe, policy, kind) });
        }
        if (pipes.length === 0)
          throw new UserError(
            `--metrics: no recorded series matches a pipe of policy ${policy.name} (its match: ${JSON.stringify(policy.metric.match)})`,
          );
        const r = recommend(policy, pipes, {
          from,
          to,
          stepMs: step,
          actuationMs: durationFlag('--actuation', opts.actuation),
          ...(opts.slo !== undefined ? { sloMinutes: durationFlag('--slo', opts.slo) / 60_000 } : {}),
        });
        const head = `recommend: policy ${policy.name}, ${new Date(from).toISOString()} .. ${new Date(to).toISOString()} every ${opts.step}, ${pipes.length} pipe${pipes.length === 1 ? '' : 's'}: ${pipes.map((p) => p.name).join(', ')}`;
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ ...r, diff: r.best ? settingsDiff(policy, r.best.settings) : [] }, null, 2)}\n`
            : `${formatRecommendation(r, policy, head)}\n`,
        );
      },
    );
}
