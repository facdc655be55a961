// `pipescaler override`: an operator's values for a pipe that stand in for its policy's target
// until they expire (policy/override.ts), kept in Redis under the pipe's identity so every replica
// applies them at its next tick and a restart keeps them. Every argument is checked before the
// one write: a refused command changes nothing.
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { assumedKind, describeValues, type Override, type OverrideRamp, type PipeConfig } from '../../policy/index.js';
import type { StateStore, StoredOverrideValue } from '../../daemon/index.js';
import { parseOverrideFlags, type OverrideFlags } from '../override-args.js';
import { UserError } from '../run-cli.js';
import { formatValues } from '../scaling-text.js';
import { configPipe, withStore } from './daemon.js';

const DEFAULT_CONFIG = 'config/pipescaler.yaml';
const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

interface Opts extends OverrideFlags {
  readonly list?: boolean;
  readonly cancel?: boolean;
  readonly config: string;
}

export function registerOverrideCommand(program: Command): void {
  program
    .command('override')
    .description("set a pipe's scaling for a while, whatever its policy says (--list, --cancel)")
    .argument('[pipe]', 'pipe name from the config')
    .option('--set <field=value>', 'a field and its value (repeat for more), e.g. replicas=8', collect)
    .option('--until <time>', 'ends at this ISO 8601 instant, e.g. 2026-11-24T18:00:00+01:00')
    .option('--for <duration>', 'ends after this long, e.g. 2h')
    .option('--reason <text>', 'why, shown in status, plan and logs')
    .option('--step <field=n>', 'ramp: move this far per step (repeat per field)', collect)
    .option('--every <duration>', 'ramp: one step each this long, e.g. 5m')
    .option('--list', 'the overrides in force (and those of pipes no longer in the config)')
    .option('--cancel', "end the pipe's override now")
    .option('-c, --config <path>', 'config file (for the Redis url and prefix)', DEFAULT_CONFIG)
    .action(async (pipe: string | undefined, opts: Opts) => {
      await withStore(opts.config, async (store, config) => {
        const now = Date.now();
        if (opts.list) {
          if (pipe !== undefined || opts.cancel || opts.set)
            throw new UserError('--list takes no pipe, --set or --cancel');
          process.stdout.write(await listOverrides(store, config.pipes, now));
          return;
        }
        if (pipe === undefined) throw new UserError('give a pipe name (or --list)');
        const target = configPipe(config, pipe);
        if (opts.cancel) {
          if (opts.set || opts.until || opts.for || opts.step || opts.every)
            throw new UserError('--cancel takes only the pipe name');
          const was = await store.operator.cancelOverride(target);
          process.stdout.write(
            was && was.until > now
              ? `cancelled the override of ${pipe} (${formatValues(was.values)}: ${was.reason}); its policy applies from the next tick\n`
              : `${pipe} has no override in force: nothing to cancel\n`,
          );
          return;
        }
        const rec = await store.read(pipe);
        // the kind as read, else declared, else implied by the policy's fields
        const policy = config.policies[target.policy];
        const kind = rec.kind ?? target.kind ?? (policy ? (assumedKind(target, policy)?.kind ?? null) : null);
        const request = parseOverrideFlags(opts, now, kind);
        const override: Override = {
          id: randomUUID(),
          values: request.values,
          setAt: now,
          until: request.until,
          reason: request.reason,
          source: 'operator',
          mode: 'set',
          ...(request.ramp ? { ramp: { ...request.ramp, start: rampStart(rec.applied, request.values) } } : {}),
        };
        const previous = await store.operator.setOverride(target, override, now);
        process.stdout.write(describeSet(target, override, previous, now));
      });
    });
}

/** What the pipe has now, for the fields the ramp moves (a field never read jumps at once). */
function rampStart(applied: OverrideRamp['start'], values: Override['values']): OverrideRamp['start'] {
  return Object.fromEntries(
    Object.keys(values).flatMap((f) => {
      const v = applied[f as keyof typeof applied];
      return v === undefined ? [] : [[f, v]];
    }),
  );
}

function describeSet(pipe: PipeConfig, o: Override, previous: StoredOverrideValue | null, now: number): string {
  const lines = [
    `override ${pipe.name}: ${formatValues(o.values)} until ${new Date(o.until).toISOString()}: ${o.reason}`,
  ];
  if (o.ramp)
    lines.push(
      `  ramps by ${formatValues(o.ramp.step)} every ${o.ramp.everyMs / 1000}s from ${formatValues(o.ramp.start)}`,
    );
  const outside = Object.entries(o.values).flatMap(([f, v]) => {
    const b = pipe.bounds[f as keyof PipeConfig['bounds']];
    if (b?.max !== undefined && v > b.max)
      return [`${f} ${v} is above the pipe's bound max ${b.max}: it is held at ${b.max}`];
    if (b?.min !== undefined && v < b.min)
      return [`${f} ${v} is below the pipe's bound min ${b.min}: it is held at ${b.min}`];
    return [];
  });
  for (const line of outside) lines.push(`  note: ${line} (pipes[].bounds)`);
  if (previous && previous.until > now) {
    lines.push(
      `  supersedes ${describeValues(previous.values)} until ${new Date(previous.until).toISOString()}: ${previous.reason}`,
    );
  }
  lines.push('  in force from the next tick of a running daemon (pipescaler status shows it)');
  return `${lines.join('\n')}\n`;
}

async function listOverrides(store: StateStore, pipes: readonly PipeConfig[], now: number): Promise<string> {
  const live = (await store.operator.overrides(pipes)).filter((o) => o.override.until > now);
  const orphans = (await store.operator.orphans(pipes)).filter((o) => o.override && o.override.until > now);
  if (live.length === 0 && orphans.length === 0) return 'no overrides in force\n';
  const line = (name: string, o: StoredOverrideValue) =>
    `${name}: ${formatValues(o.values)} until ${new Date(o.until).toISOString()} (${o.source === 'manual' ? 'by hand, onDrift' : 'operator'}): ${o.reason}`;
  return (
    [
      ...live.map((l) => line(l.pipe, l.override)),
      ...orphans.flatMap((o) =>
        o.override ? [`orphaned ${line(`${o.ref} (was ${o.name ?? '?'})`, o.override)}`] : [],
      ),
    ].join('\n') + '\n'
  );
}
