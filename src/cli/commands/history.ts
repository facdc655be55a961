// `pipescaler history` (what the daemon did to a pipe and why, from the history every replica
// writes to Redis) and `pipescaler notify test` (one test event to each sink, sent from here).
import type { Command } from 'commander';
import { didYouMean, loadConfig } from '../../config/index.js';
import {
  HistoryStore,
  entryJson,
  parseOutcomes,
  parseSince,
  type HistoryEntry,
  type Outcome,
} from '../../history/index.js';
import { messagesFor, send, toEvent } from '../../notify/index.js';
import { formatHistory } from '../history-output.js';
import { UserError } from '../run-cli.js';
import { withStore } from './daemon.js';

const DEFAULT_CONFIG = 'config/pipescaler.yaml';
const READ_BATCH = 200;

interface HistoryFlags {
  all?: boolean;
  since: string;
  outcome?: string[];
  json?: boolean;
  config: string;
}

export function registerHistoryCommands(program: Command): void {
  program
    .command('history')
    .description('what the daemon did to a pipe (or every pipe) and why: changes, failures, skips, pauses, drift')
    .argument('[pipe]', 'pipe name from the config')
    .option('--all', 'every pipe of the config, newest first')
    .option('--since <time>', 'how far back: a duration (7d, 12h) or an ISO time', '7d')
    .option('--outcome <names...>', 'only these outcomes (applied, failed, skipped, paused...), comma-separated')
    .option('--json', 'one JSON array, an object per entry')
    .option('-c, --config <path>', 'config file (for the Redis url and prefix)', DEFAULT_CONFIG)
    .action(async (pipe: string | undefined, opts: HistoryFlags) => {
      const since = parseSince(opts.since, Date.now());
      if (typeof since === 'string') throw new UserError(`--since: ${since}`);
      const outcomes = parseOutcomes(opts.outcome ?? []);
      if (typeof outcomes === 'string') throw new UserError(`--outcome: ${outcomes}`);
      await withStore(opts.config, async (state, config, prefix) => {
        const names = config.pipes.map((p) => p.name);
        if (pipe !== undefined && opts.all) throw new UserError('give a pipe or --all, not both');
        if (pipe === undefined && !opts.all) throw new UserError('name a pipe, or --all for every pipe');
        if (pipe !== undefined && !names.includes(pipe))
          throw new UserError(`no pipe "${pipe}" in ${opts.config}${didYouMean(pipe, names)}`);
        const store = new HistoryStore(state.redis, prefix);
        const entries: HistoryEntry[] = [];
        // --all: many pipes' reads at once (pipelined on the one connection), not one round trip each
        const wanted = pipe !== undefined ? [pipe] : names;
        for (let i = 0; i < wanted.length; i += READ_BATCH) {
          const pages = await Promise.all(
            wanted.slice(i, i + READ_BATCH).map((name) => store.read(name, { since, outcomes })),
          );
          for (const page of pages) entries.push(...page.entries);
        }
        entries.sort((a, b) => b.last - a.last);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(entries.map(entryJson), null, 2)}\n`);
          return;
        }
        const width = process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 100;
        process.stdout.write(`${formatHistory(entries, width)}\n`);
      });
    });

  const notify = program.command('notify').description('notification sinks (notify: in the config)');
  notify
    .command('test')
    .description('send one test event to each sink (or the one named) now, and say what it answered')
    .argument('[sink]', 'sink name from notify.sinks')
    .option('-c, --config <path>', 'config file', DEFAULT_CONFIG)
    .action(async (name: string | undefined, opts: { config: string }) => {
      const config = loadConfig(opts.config);
      const sinks = config.notify?.sinks ?? [];
      const names = sinks.map((s) => s.name);
      if (sinks.length === 0) throw new UserError(`${opts.config} has no notify.sinks`);
      if (name !== undefined && !names.includes(name))
        throw new UserError(`no sink "${name}" in ${opts.config}${didYouMean(name, names)}`);
      const outcome: Outcome = {
        pipe: config.pipes[0]?.name ?? 'test',
        outcome: 'test',
        at: Date.now(),
        reason: 'test',
        message: 'pipescaler notify test',
      };
      let failed = 0;
      for (const sink of sinks.filter((s) => name === undefined || s.name === name)) {
        const event = toEvent(outcome);
        const [message] = messagesFor(sink, { key: `test/${event.id}`, events: [event] });
        if (!message) continue;
        try {
          const r = await send(sink, message);
          process.stdout.write(
            `${sink.name} (${sink.type}): HTTP ${r.status} in ${Math.round(r.ms)} ms, event ${event.id}\n`,
          );
        } catch (err) {
          failed++;
          process.stdout.write(`${sink.name} (${sink.type}): failed: ${(err as Error).message}\n`);
        }
      }
      if (failed > 0) throw new UserError(`${failed} sink${failed === 1 ? '' : 's'} did not accept the test event`);
    });
}
