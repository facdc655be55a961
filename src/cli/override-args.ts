// What `override` and `simulate --override` take, checked in full before anything is written: a
// refused command changes nothing. Field names and values by the platform's ranges (src/api), times
// as ISO 8601 instants or durations.
import { isScalingField, KIND_FIELDS, limitViolation, SCALING_FIELDS, SCALING_LIMITS } from '../api/index.js';
import type { PipeKind, ScalingField, ScalingValues } from '../api/index.js';
import { didYouMean } from '../config/index.js';
import { parseDuration, type Override, type PipeConfig } from '../policy/index.js';
import { UserError } from './run-cli.js';
import { operatorReason } from './operator-reason.js';

/** The longest an override may last: it is an incident's tool, not a second policy. */
export const MAX_OVERRIDE_MS = 30 * 86_400_000;

export interface OverrideFlags {
  readonly set?: readonly string[];
  readonly until?: string;
  readonly for?: string;
  readonly reason?: string;
  readonly step?: readonly string[];
  readonly every?: string;
}

export interface OverrideRequest {
  readonly values: ScalingValues;
  readonly until: number;
  readonly reason: string;
  readonly ramp?: { readonly step: ScalingValues; readonly everyMs: number };
}

/** "replicas=8" -> [replicas, 8]; `flag` names where it came from in the message. */
export function parseAssignment(flag: string, text: string, check: 'value' | 'step'): [ScalingField, number] {
  const m = /^\s*([A-Za-z]+)\s*=\s*(\S+)\s*$/.exec(text);
  if (!m) throw new UserError(`${flag}: "${text}" is not FIELD=VALUE (e.g. replicas=8)`);
  const [, name = '', raw = ''] = m;
  if (!isScalingField(name)) {
    throw new UserError(
      `${flag}: unknown field "${name}"${didYouMean(name, SCALING_FIELDS)} (fields: ${SCALING_FIELDS.join(', ')})`,
    );
  }
  const value = Number(raw);
  if (raw === '' || !Number.isFinite(value)) throw new UserError(`${flag}: ${name} "${raw}" is not a number`);
  if (check === 'value') {
    const problem = limitViolation(name, value);
    if (problem !== null) throw new UserError(`${flag}: ${name} ${problem}`);
  } else if (value <= 0 || (SCALING_LIMITS[name].integer && !Number.isInteger(value))) {
    throw new UserError(
      `${flag}: a step of ${name} must be ${SCALING_LIMITS[name].integer ? 'a whole number' : 'a number'} above 0`,
    );
  }
  return [name, value];
}

/** An instant: ISO 8601 with an offset (2026-11-24T18:00:00+01:00, ...Z). */
export function parseInstant(flag: string, text: string): number {
  const t = /T\d{2}:\d{2}/.test(text) && /(Z|[+-]\d{2}:?\d{2})$/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(t)) {
    throw new UserError(`${flag}: "${text}" is not an ISO 8601 date-time with offset (e.g. 2026-11-24T18:00:00+01:00)`);
  }
  return t;
}

/**
 * The override the flags ask for at `now`, for `pipe` of `kind` (null: not known yet). Every
 * problem is a UserError naming its flag; nothing is written before this returns.
 */
export function parseOverrideFlags(flags: OverrideFlags, now: number, kind: PipeKind | null): OverrideRequest {
  const values: ScalingValues = {};
  for (const text of flags.set ?? []) {
    const [f, v] = parseAssignment('--set', text, 'value');
    if (values[f] !== undefined) throw new UserError(`--set: ${f} is given twice`);
    values[f] = v;
  }
  if (Object.keys(values).length === 0)
    throw new UserError('--set: give at least one FIELD=VALUE (e.g. --set replicas=8)');
  if (kind !== null) {
    const takes = KIND_FIELDS[kind];
    const foreign = Object.keys(values).filter((f) => !takes.includes(f as ScalingField));
    if (foreign.length > 0) {
      throw new UserError(
        `--set: a ${kind} pipe takes ${takes.length > 0 ? takes.join(', ') : 'no scaling'}, not ${foreign.join(', ')}`,
      );
    }
  }
  if ((flags.until === undefined) === (flags.for === undefined)) {
    throw new UserError(
      'give how long it lasts: --until T (e.g. 2026-11-24T18:00:00+01:00) or --for DURATION (e.g. 2h), one of them',
    );
  }
  let until: number;
  if (flags.for !== undefined) {
    const ms = parseDuration(flags.for);
    if (ms === null || ms <= 0) throw new UserError(`--for: "${flags.for}" is not a duration (e.g. 30m, 2h)`);
    until = now + ms;
  } else {
    until = parseInstant('--until', flags.until ?? '');
    if (until <= now) throw new UserError(`--until: ${new Date(until).toISOString()} is not in the future`);
  }
  if (until - now > MAX_OVERRIDE_MS) {
    throw new UserError(
      `${flags.for !== undefined ? '--for' : '--until'}: an override lasts at most 30d (change the policy for longer)`,
    );
  }
  const reason = operatorReason(flags.reason ?? 'override by operator');
  const ramp = parseRamp(flags, values);
  return { values, until, reason, ...(ramp ? { ramp } : {}) };
}

function parseRamp(flags: OverrideFlags, values: ScalingValues): OverrideRequest['ramp'] {
  const steps = flags.step ?? [];
  if (steps.length === 0 && flags.every === undefined) return undefined;
  if (steps.length === 0) throw new UserError('--every: needs --step FIELD=N (how far each step goes)');
  if (flags.every === undefined) throw new UserError('--step: needs --every DURATION (e.g. --every 5m)');
  const everyMs = parseDuration(flags.every);
  if (everyMs === null || everyMs <= 0) throw new UserError(`--every: "${flags.every}" is not a duration (e.g. 5m)`);
  const step: ScalingValues = {};
  for (const text of steps) {
    const [f, v] = parseAssignment('--step', text, 'step');
    if (values[f] === undefined) throw new UserError(`--step: ${f} is not among the --set fields`);
    step[f] = v;
  }
  return { step, everyMs };
}

/** `simulate --override PIPE:FIELD=VALUE[,FIELD=VALUE]@FROM..TO`: one pipe's override over a span. */
export function parseSimulatedOverride(
  text: string,
  pipes: readonly PipeConfig[],
): { pipe: string; values: ScalingValues; from: number; until: number } {
  const m = /^([^:]+):([^@]+)@(.+)\.\.(.+)$/.exec(text.trim());
  if (!m)
    throw new UserError(
      `--override: "${text}" is not PIPE:FIELD=VALUE@FROM..TO (e.g. orders-events:replicas=8@2026-11-24T16:00:00Z..2026-11-24T18:00:00Z)`,
    );
  const [, pipe = '', assignments = '', fromText = '', toText = ''] = m;
  if (!pipes.some((p) => p.name === pipe)) {
    throw new UserError(
      `--override: unknown pipe "${pipe}"${didYouMean(
        pipe,
        pipes.map((p) => p.name),
      )}`,
    );
  }
  const values: ScalingValues = {};
  for (const a of assignments.split(',')) {
    const [f, v] = parseAssignment('--override', a, 'value');
    values[f] = v;
  }
  const from = parseInstant('--override', fromText);
  const until = parseInstant('--override', toText);
  if (until <= from) throw new UserError(`--override: ${toText} is not after ${fromText}`);
  return { pipe, values, from, until };
}

/** The views with each `--override` attached to its pipe (a later one for the same pipe wins). */
export function withSimulatedOverrides<V extends { readonly override?: Override }>(
  views: Readonly<Record<string, V>>,
  texts: readonly string[] | undefined,
  pipes: readonly PipeConfig[],
): Record<string, V> {
  const out: Record<string, V> = { ...views };
  for (const [i, text] of (texts ?? []).entries()) {
    const o = parseSimulatedOverride(text, pipes);
    const view = out[o.pipe];
    if (view === undefined) continue; // not read: simulate and plan leave it out anyway
    const override: Override = {
      id: `simulated-${i + 1}`,
      values: o.values,
      setAt: o.from,
      until: o.until,
      reason: 'simulated override',
      source: 'operator',
      mode: 'set',
    };
    out[o.pipe] = { ...view, override };
  }
  return out;
}
