// The zod schema of config/pipescaler.yaml: validates the parsed YAML and turns it into the
// normalized shapes of types.ts. Every object is strict (unknown keys are errors with a
// did-you-mean); cross references and secrets are checked in refs.ts and secrets.ts.
import { z } from 'zod';
import {
  PLATFORM_RATE_LIMIT,
  SCALABLE_KINDS,
  SCALING_FIELDS,
  SCALING_LIMITS,
  type ScalingField,
  type ScalingValues,
} from '../api/index.js';
import {
  ACTUATION_DEFAULTS,
  formatDuration,
  MAX_LEAD_MS,
  type Behavior,
  type Bounds,
  type FieldTarget,
  type PipeConfig,
  type Policy,
  type Target,
  type Window,
} from '../policy/index.js';
import { metricSchema, pipeLabels, prometheusSchema } from './metric.js';
import { historySchema, notifySchema } from './notify.js';
import { redisSchema } from './redis.js';
import { telemetryAuthSchema } from './telemetry-auth.js';
import { freezesSchema, onDriftSchema, overridesAllowed } from './freeze.js';
import { timingOf, timingShape } from './window-timing.js';
import { didYouMean } from './did-you-mean.js';
import {
  cronExpression,
  durationMs,
  field,
  leadTime,
  listenAddress,
  localDate,
  lowerName,
  nonEmptyString,
  positiveDurationMs,
  scalingValue,
  stepValue,
  uuid,
} from './fields.js';

/** A strict object whose unknown-key issue carries one message per key, in the order of `keys`. */
export function strict<S extends z.ZodRawShape>(shape: S) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? iss.keys.map((k) => `unknown key "${k}"${didYouMean(k, known)}`).join('\n')
        : undefined,
  });
}

const perField = <T extends z.ZodType>(make: (f: ScalingField) => T) =>
  strict(
    Object.fromEntries(SCALING_FIELDS.map((f) => [f, make(f).optional()])) as Record<ScalingField, z.ZodOptional<T>>,
  );

const compact = <T>(rec: Partial<Record<ScalingField, T | undefined>>): Partial<Record<ScalingField, T>> =>
  Object.fromEntries(Object.entries(rec).filter(([, v]) => v !== undefined));

/** `{min?, max?}` of one field, each within the platform range, min not above max. */
const rangeOf = (f: ScalingField) =>
  strict({ min: scalingValue(f).optional(), max: scalingValue(f).optional() }).superRefine((r, ctx) => {
    if (r.min !== undefined && r.max !== undefined && r.min > r.max) {
      ctx.addIssue({ code: 'custom', path: ['min'], message: `min ${r.min} is above max ${r.max}` });
    }
  });

/** Window `bounds`: a missing side is the platform's own limit. */
const targetBounds = perField(rangeOf).transform((b): Target =>
  compact(
    Object.fromEntries(
      Object.entries(b).map(([f, r]) => [
        f,
        {
          min: r.min ?? SCALING_LIMITS[f as ScalingField].min,
          max: r.max ?? SCALING_LIMITS[f as ScalingField].max,
        },
      ]),
    ),
  ),
);

/** Window `set`: a fixed value per field. A `{min, max}` there is a range, which is `bounds`: say so. */
const setField = (f: ScalingField) =>
  z.unknown().transform((v, ctx): number => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      ctx.addIssue({
        code: 'custom',
        message: `set takes a fixed ${f}; for a range write bounds: { ${f}: { min: ..., max: ... } }`,
      });
      return z.NEVER;
    }
    const r = scalingValue(f).safeParse(v);
    if (r.success) return r.data;
    for (const i of r.error.issues) ctx.addIssue(i as never);
    return z.NEVER;
  });
const fixedValues = perField(setField);

/** Policy `baseline`: per field a fixed value, or `{min, max}`. */
const baselineField = (f: ScalingField) =>
  z.unknown().transform((v, ctx): FieldTarget => {
    if (typeof v === 'object' && v !== null) {
      const r = rangeOf(f).safeParse(v);
      if (r.success) return { min: r.data.min ?? SCALING_LIMITS[f].min, max: r.data.max ?? SCALING_LIMITS[f].max };
      for (const i of r.error.issues) ctx.addIssue(i as never);
      return z.NEVER;
    }
    const r = scalingValue(f).safeParse(v);
    if (r.success) return { value: r.data };
    for (const i of r.error.issues) ctx.addIssue(i as never);
    return z.NEVER;
  });
const baseline = perField(baselineField).transform((t): Target => compact(t));

const window = strict({
  name: lowerName('window name').optional(),
  priority: z.number({ error: 'must be an integer' }).int({ error: 'must be an integer' }).optional(),
  ...timingShape,
  // target
  set: fixedValues.optional(),
  bounds: targetBounds.optional(),
}).transform((w, ctx): Window => {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  const target: Record<string, FieldTarget> = {};
  for (const [f, v] of Object.entries(compact(w.set ?? {}))) target[f] = { value: v };
  for (const [f, r] of Object.entries(w.bounds ?? {})) {
    if (target[f]) issue('bounds', `${f} is both in set and in bounds; keep one`);
    target[f] = r;
  }
  if (w.set === undefined && w.bounds === undefined)
    issue('set', 'a window needs set (fixed values) or bounds (min/max)');
  else if (Object.keys(target).length === 0) issue('set', 'the window sets no field');
  // an unnamed window is named after its position by the policy below
  return { name: w.name ?? '', priority: w.priority ?? 0, target, ...timingOf(w, ctx, 'window') };
});

const direction = {
  maxStep: perField(stepValue)
    .transform((s): ScalingValues => compact(s))
    .optional(),
  cooldown: durationMs().optional(),
};
const behavior = strict({
  scaleUp: strict({ ...direction, leadTime: leadTime.optional() }).optional(),
  scaleDown: strict({ ...direction, stabilization: durationMs().optional() }).optional(),
  onDrift: onDriftSchema(strict).optional(),
  overrides: overridesAllowed.optional(),
}).transform((b): Behavior => ({
  scaleUp: {
    maxStep: b.scaleUp?.maxStep ?? {},
    cooldownMs: b.scaleUp?.cooldown ?? 0,
    leadTime: b.scaleUp?.leadTime ?? 'auto',
  },
  scaleDown: {
    maxStep: b.scaleDown?.maxStep ?? {},
    cooldownMs: b.scaleDown?.cooldown ?? 0,
    stabilizationMs: b.scaleDown?.stabilization ?? 0,
  },
  ...(b.onDrift !== undefined ? { onDrift: b.onDrift } : {}),
  ...(b.overrides !== undefined ? { overrides: b.overrides } : {}),
}));

const policy = strict({
  baseline: baseline.optional(),
  windows: z.array(window).optional(),
  exclude: z.array(localDate).optional(),
  behavior: behavior.optional(),
  metric: metricSchema(strict).optional(),
  freezes: freezesSchema(strict).optional(),
});

const policies = z.record(z.string(), policy).transform((rec): Record<string, Policy> => {
  const out: Record<string, Policy> = {};
  for (const [name, p] of Object.entries(rec)) {
    const windows: Window[] = (p.windows ?? []).map((w, i) => {
      const named: Window = w.name === '' ? { ...w, name: `window-${i + 1}` } : w;
      if (named.kind !== 'recurring' || !p.exclude?.length) return named;
      return { ...named, exclude: [...new Set([...named.exclude, ...p.exclude])].sort() };
    });
    out[name] = {
      name,
      baseline: p.baseline ?? {},
      windows,
      behavior: p.behavior ?? {
        scaleUp: { maxStep: {}, cooldownMs: 0, leadTime: 'auto' },
        scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 0 },
      },
      ...(p.metric ? { metric: p.metric } : {}),
      ...(p.freezes && p.freezes.length > 0 ? { freezes: p.freezes } : {}),
    };
  }
  return out;
});

const pipeBounds = perField(rangeOf).transform((b): Bounds => compact(b));

const pipe = strict({
  name: lowerName('pipe name'),
  organizationId: uuid,
  serviceId: uuid,
  pipeId: uuid,
  policy: nonEmptyString,
  key: nonEmptyString.optional(),
  bounds: pipeBounds.optional(),
  labels: pipeLabels.optional(),
  kind: z
    .enum(SCALABLE_KINDS, { error: `must be one of ${SCALABLE_KINDS.join(', ')} (a database pipe takes no scaling)` })
    .optional(),
  paused: nonEmptyString.optional(),
}).transform((p): PipeConfig => {
  const { kind, ...rest } = p;
  return {
    ...rest,
    key: p.key ?? 'default',
    bounds: p.bounds ?? {},
    labels: p.labels ?? {},
    ...(kind ? { kind } : {}),
  };
});

const rateLimit = strict({
  requests: z
    .number({ error: 'must be an integer' })
    .int({ error: 'must be an integer' })
    .min(1, { error: 'must be at least 1' }),
  per: positiveDurationMs(),
}).transform((r) => ({ requests: r.requests, perMs: r.per }));

const baseUrl = field<string>((v) => {
  if (v === 'embedded') return { ok: v };
  if (typeof v === 'string' && /^https?:\/\//.test(v) && URL.canParse(v)) return { ok: v.replace(/\/+$/, '') };
  return 'must be "embedded" or an http(s) URL of the platform\'s API';
});

const keyFields = {
  keyId: nonEmptyString.optional(),
  keySecret: z.string({ error: 'must be a string' }).optional(),
  keySecretFile: nonEmptyString.optional(),
  rateLimit: rateLimit.optional(),
};

const api = strict({
  baseUrl: baseUrl.optional(),
  fixtures: nonEmptyString.optional(),
  timeout: positiveDurationMs().optional(),
  maxResponseBytes: z
    .number({ error: 'must be an integer (bytes)' })
    .int({ error: 'must be an integer (bytes)' })
    .min(1024, { error: 'must be at least 1024 (bytes)' })
    .optional(),
  // a key with no 2xx for this long checks in with one services list; 0 turns it off
  checkEvery: durationMs().optional(),
  ...keyFields,
  // pool: pipes that name the pool (key: <pool>) are spread over its keys (key-pool.ts)
  keys: z.record(z.string(), strict({ ...keyFields, pool: lowerName('pool name').optional() })).optional(),
});

// evaluate.actuation: what leadTime auto counts on between sending a scale-up and seeing it at target.
const actuation = strict({
  expected: durationMs().optional(),
  max: positiveDurationMs()
    .refine((ms) => ms <= MAX_LEAD_MS, 'must be at most 24h')
    .optional(),
  minSamples: z
    .number({ error: 'must be an integer' })
    .int({ error: 'must be an integer' })
    .min(1, { error: 'must be at least 1' })
    .max(50, { error: "must be at most 50 (a pipe's last 50 actuations are kept)" })
    .optional(),
  // false: the lead plan counts on `expected` only, whatever the daemon measured
  measured: z.boolean({ error: 'must be true or false' }).optional(),
  // the soonest a confirmation read follows a change (default 15s): the answer itself was a read,
  // and the live platform's transient 0/null values last a few seconds
  firstRead: positiveDurationMs().optional(),
}).superRefine((a, ctx) => {
  const max = a.max ?? ACTUATION_DEFAULTS.maxMs;
  if (a.expected !== undefined && a.expected > max)
    ctx.addIssue({
      code: 'custom',
      path: ['expected'],
      message: `must be at most max (${formatDuration(max)}): the plan never counts on more`,
    });
  if (a.firstRead !== undefined && a.firstRead > max)
    ctx.addIssue({
      code: 'custom',
      path: ['firstRead'],
      message: `must be at most max (${formatDuration(max)}): a change is unconfirmed by then`,
    });
});

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const configSchema = strict({
  api: api.optional(),
  redis: redisSchema(strict).optional(),
  evaluate: strict({
    cron: cronExpression.optional(),
    reconcile: positiveDurationMs().optional(),
    concurrency: z
      .number({ error: 'must be an integer' })
      .int({ error: 'must be an integer' })
      .min(1, { error: 'must be at least 1' })
      .max(1000, { error: 'must be at most 1000' })
      .optional(),
    readShare: z
      .number({ error: 'must be a number' })
      .gt(0, { error: 'must be above 0' })
      .max(0.9, { error: 'must be at most 0.9 (changes need the rest)' })
      .optional(),
    actuation: actuation.optional(),
  }).optional(),
  telemetry: strict({
    listen: listenAddress.optional(),
    logLevel: field<(typeof LOG_LEVELS)[number]>((v) =>
      (LOG_LEVELS as readonly unknown[]).includes(v)
        ? { ok: v as (typeof LOG_LEVELS)[number] }
        : `must be one of ${LOG_LEVELS.join(', ')}${typeof v === 'string' ? didYouMean(v, LOG_LEVELS) : ''}`,
    ).optional(),
    perPipeDetail: z.boolean({ error: 'must be true or false' }).optional(),
    auth: telemetryAuthSchema(strict).optional(),
  }).optional(),
  dryRun: z.boolean({ error: 'must be true or false' }).optional(),
  metrics: strict({ prometheus: prometheusSchema(strict).optional() }).optional(),
  pipes: z.array(pipe).optional(),
  policies: policies.optional(),
  history: historySchema(strict).optional(),
  notify: notifySchema(strict).optional(),
});

export type ParsedConfig = z.output<typeof configSchema>;

export const DEFAULTS = {
  baseUrl: 'embedded',
  fixtures: 'config/cloud.yaml',
  timeoutMs: 30_000,
  rateLimit: PLATFORM_RATE_LIMIT,
  redisUrl: 'redis://127.0.0.1:6379',
  redisPrefix: 'pipescaler',
  cron: '*/30 * * * * *',
  reconcileMs: 600_000,
  concurrency: 10,
  readShare: 0.25,
  listen: '127.0.0.1:9464',
  logLevel: 'info',
} as const;
