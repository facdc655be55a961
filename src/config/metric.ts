// The config schema of metric-driven scaling: `metrics.prometheus` (where to query) and
// `policies.*.metric` (what to query and how a value becomes a recommendation).
import { z } from 'zod';
import { SCALING_FIELDS, type ScalingValues } from '../api/index.js';
import type { ForecastSpec, MetricFallback, MetricSpec } from '../policy/index.js';
import type { PrometheusConfig } from './types.js';
import { field, nonEmptyString, positiveDurationMs, scalingValue } from './fields.js';

// A function, not an import of config-schema's strict(): that module imports this one.
export type Strict = <S extends z.ZodRawShape>(shape: S) => z.ZodObject<S, z.core.$strict>;

export const METRIC_DEFAULTS = { timeoutMs: 5_000, staleAfterMs: 120_000, tolerance: 0.1 } as const;

const HOUR = 3_600_000;
/** `metric.forecast` defaults: two weeks teach both seasons; 15 min keeps a 2 h forecast fresh at
 *  one range query per policy; the platform's changes take effect within about 5 min. */
export const FORECAST_DEFAULTS = {
  historyMs: 14 * 24 * HOUR,
  horizonMs: 2 * HOUR,
  refreshMs: 15 * 60_000,
  actuationMs: 5 * 60_000,
} as const;
/** 30 days of 5-min points stay under Prometheus' 11,000 points per series of a range query. */
const MAX_HISTORY_MS = 30 * 24 * HOUR;
const MAX_HORIZON_MS = 48 * HOUR;

function forecastSchema(strict: Strict) {
  return strict({
    history: positiveDurationMs()
      .refine((ms) => ms >= 24 * HOUR && ms <= MAX_HISTORY_MS, 'must be from 1d to 30d')
      .optional(),
    horizon: positiveDurationMs()
      .refine((ms) => ms <= MAX_HORIZON_MS, 'must be at most 48h')
      .optional(),
    mode: z.enum(['forecastOnly', 'scale'], { error: 'must be forecastOnly or scale' }).optional(),
    refresh: positiveDurationMs().optional(),
    actuation: positiveDurationMs().optional(),
  })
    .superRefine((f, ctx) => {
      const horizon = f.horizon ?? FORECAST_DEFAULTS.horizonMs;
      const refresh = f.refresh ?? FORECAST_DEFAULTS.refreshMs;
      const actuation = f.actuation ?? FORECAST_DEFAULTS.actuationMs;
      if (refresh + actuation > horizon)
        ctx.addIssue({
          code: 'custom',
          path: [f.refresh !== undefined ? 'refresh' : 'horizon'],
          message: `refresh (${refresh / 60_000} min) + actuation (${actuation / 60_000} min) must fit in the horizon (${horizon / 60_000} min): a forecast must still see past the actuation time when the next one comes`,
        });
    })
    .transform((f): ForecastSpec => ({
      historyMs: f.history ?? FORECAST_DEFAULTS.historyMs,
      horizonMs: f.horizon ?? FORECAST_DEFAULTS.horizonMs,
      mode: f.mode ?? 'forecastOnly',
      refreshMs: f.refresh ?? FORECAST_DEFAULTS.refreshMs,
      actuationMs: f.actuation ?? FORECAST_DEFAULTS.actuationMs,
    }));
}

const httpUrl = field<string>((v) =>
  typeof v === 'string' && /^https?:\/\//.test(v) && URL.canParse(v)
    ? { ok: v.replace(/\/+$/, '') }
    : 'must be an http(s) URL of a Prometheus server, e.g. http://127.0.0.1:9090',
);

const positiveNumber = (what: string) =>
  field<number>((v) =>
    typeof v === 'number' && Number.isFinite(v) && v > 0 ? { ok: v } : `${what} must be a number above 0`,
  );

/** 0.1, or "10%". */
const tolerance = field<number>((v) => {
  const n = typeof v === 'string' && /^\d+(\.\d+)?%$/.test(v) ? Number(v.slice(0, -1)) / 100 : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 && n < 1
    ? { ok: n }
    : 'must be a fraction from 0 to below 1 (0.1) or a percentage ("10%")';
});

export function prometheusSchema(strict: Strict) {
  return strict({
    url: httpUrl,
    timeout: positiveDurationMs().optional(),
    bearerTokenFile: nonEmptyString.optional(),
    basicAuth: strict({ username: nonEmptyString, passwordFile: nonEmptyString }).optional(),
    headers: z.record(z.string(), z.string({ error: 'must be a string' })).optional(),
  })
    .superRefine((p, ctx) => {
      if (p.bearerTokenFile !== undefined && p.basicAuth !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['basicAuth'], message: 'give bearerTokenFile or basicAuth, not both' });
      }
    })
    .transform((p): PrometheusConfig => ({
      url: p.url,
      timeoutMs: p.timeout ?? METRIC_DEFAULTS.timeoutMs,
      headers: p.headers ?? {},
      ...(p.bearerTokenFile !== undefined ? { bearerTokenFile: p.bearerTokenFile } : {}),
      ...(p.basicAuth !== undefined ? { basicAuth: p.basicAuth } : {}),
    }));
}

export function metricSchema(strict: Strict) {
  const fixed = strict(Object.fromEntries(SCALING_FIELDS.map((f) => [f, scalingValue(f).optional()])));
  const onError = z.unknown().transform((v, ctx): MetricFallback => {
    if (v === 'hold' || v === 'baseline') return { kind: v };
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const r = fixed.safeParse(v);
      if (r.success) {
        const values = Object.fromEntries(Object.entries(r.data).filter(([, x]) => x !== undefined)) as ScalingValues;
        if (Object.keys(values).length > 0) return { kind: 'fixed', values };
      } else {
        for (const i of r.error.issues) ctx.addIssue(i as never);
        return z.NEVER;
      }
    }
    ctx.addIssue({ code: 'custom', message: 'must be hold, baseline, or fixed values such as { replicas: 4 }' });
    return z.NEVER;
  });
  return strict({
    query: nonEmptyString,
    match: z
      .record(z.string(), z.string({ error: 'must be a string (a label value or a {{ .labels.x }} template)' }))
      .optional(),
    targetPerReplica: positiveNumber('targetPerReplica').optional(),
    targetPerConcurrency: positiveNumber('targetPerConcurrency').optional(),
    onError: onError.optional(),
    staleAfter: positiveDurationMs().optional(),
    tolerance: tolerance.optional(),
    forecast: forecastSchema(strict).optional(),
  })
    .superRefine((m, ctx) => {
      if (m.targetPerReplica === undefined && m.targetPerConcurrency === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['targetPerReplica'],
          message: 'a metric needs targetPerReplica (stream pipes) or targetPerConcurrency (object-storage pipes)',
        });
      }
    })
    .transform((m): MetricSpec => ({
      query: m.query,
      match: m.match ?? {},
      targetPer: {
        ...(m.targetPerReplica !== undefined ? { replicas: m.targetPerReplica } : {}),
        ...(m.targetPerConcurrency !== undefined ? { concurrency: m.targetPerConcurrency } : {}),
      },
      onError: m.onError ?? { kind: 'hold' },
      staleAfterMs: m.staleAfter ?? METRIC_DEFAULTS.staleAfterMs,
      tolerance: m.tolerance ?? METRIC_DEFAULTS.tolerance,
      ...(m.forecast !== undefined ? { forecast: m.forecast } : {}),
    }));
}

/** `pipes[].labels`: label names as Prometheus spells them, string values. */
export const pipeLabels = z.record(
  z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'label names are letters, digits and "_", not starting with a digit' }),
  z.string({ error: 'must be a string' }),
);
