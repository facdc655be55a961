// The `history:` and `notify:` sections: how long the scaling history is kept, and where outcomes
// are sent. A sink's secret (the webhook's HMAC key, a Slack webhook URL, which is itself the
// credential) comes from the environment or a file and is resolved by secrets.ts with the others.
import { z } from 'zod';
import { OUTCOMES, SEVERITIES, type OutcomeName, type Severity } from '../history/index.js';
import type { HistorySettings, NotifySettings, NotifySink } from './types.js';
import { didYouMean } from './did-you-mean.js';
import { durationMs, field, lowerName, nonEmptyString, positiveDurationMs } from './fields.js';
import type { Strict } from './metric.js';

export const HISTORY_DEFAULTS = { retentionMs: 42 * 86_400_000, maxEntries: 2_000 } as const;
export const NOTIFY_DEFAULTS = { coalesceMs: 60_000, timeoutMs: 10_000, attempts: 12, backoffMs: 5_000 } as const;
export const SINK_TYPES = ['webhook', 'slack', 'cloudevents'] as const;

const DAY_MS = 86_400_000;

const int = (min: number, max: number) =>
  z
    .number({ error: 'must be an integer' })
    .int({ error: 'must be an integer' })
    .min(min, { error: `must be at least ${min}` })
    .max(max, { error: `must be at most ${max}` });

const oneOf = <T extends string>(list: readonly T[], what: string) =>
  field<T>((v) =>
    typeof v === 'string' && (list as readonly string[]).includes(v)
      ? { ok: v as T }
      : `must be ${what}: ${list.join(', ')}${typeof v === 'string' ? didYouMean(v, list) : ''}`,
  );

const httpUrl = field<string>((v) =>
  typeof v === 'string' && /^https?:\/\//.test(v) && URL.canParse(v) ? { ok: v } : 'must be an http(s) URL',
);

export function historySchema(strict: Strict) {
  return strict({
    retention: positiveDurationMs()
      .refine((ms) => ms <= 366 * DAY_MS, 'must be at most 366d')
      .optional(),
    maxEntries: int(10, 100_000).optional(),
    // the whole fleet's entries (about 180 bytes each in Redis): each pipe keeps an equal share
    maxTotalEntries: int(10, 1_000_000_000).optional(),
  }).transform((h): HistorySettings => ({
    retentionMs: h.retention ?? HISTORY_DEFAULTS.retentionMs,
    maxEntries: h.maxEntries ?? HISTORY_DEFAULTS.maxEntries,
    ...(h.maxTotalEntries !== undefined ? { maxTotalEntries: h.maxTotalEntries } : {}),
  }));
}

export function notifySchema(strict: Strict) {
  const sink = strict({
    type: oneOf(SINK_TYPES, 'one of'),
    // a Slack webhook URL is a credential: ${ENV_VAR} or urlFile (secrets.ts checks which)
    url: httpUrl.optional(),
    urlFile: nonEmptyString.optional(),
    secret: z.string({ error: 'must be a string from ${ENV_VAR}' }).optional(),
    secretFile: nonEmptyString.optional(),
    events: z.array(oneOf<OutcomeName>(OUTCOMES, 'an outcome, one of')).optional(),
    pipes: z.array(nonEmptyString).optional(),
    severity: oneOf<Severity>(SEVERITIES, 'a severity, one of').optional(),
    timeout: positiveDurationMs().optional(),
    attempts: int(1, 100).optional(),
    backoff: durationMs().optional(),
    // a sink on a loopback, link-local or private address is refused without it (sink-address.ts)
    allowPrivateNetwork: z.boolean({ error: 'must be true or false' }).optional(),
  });
  return strict({
    coalesce: durationMs()
      .refine((ms) => ms <= 3_600_000, 'must be at most 1h')
      .optional(),
    sinks: z.record(lowerName('sink name'), sink).optional(),
  });
}

export type ParsedNotify = z.output<ReturnType<typeof notifySchema>>;

/** The sinks with their resolved URLs and secrets (secrets.ts); a sink without a URL is left out
 *  (secrets.ts reported it). */
export function notifySettings(
  n: ParsedNotify | undefined,
  resolved: Readonly<Record<string, { url?: string; secret?: string }>>,
): NotifySettings {
  const sinks: NotifySink[] = [];
  for (const [name, s] of Object.entries(n?.sinks ?? {})) {
    const r = resolved[name] ?? {};
    const url = r.url ?? s.url;
    if (url === undefined) continue;
    sinks.push({
      name,
      type: s.type,
      url,
      ...(r.secret !== undefined ? { secret: r.secret } : {}),
      events: s.events ?? null,
      pipes: s.pipes ?? null,
      severity: s.severity ?? 'info',
      timeoutMs: s.timeout ?? NOTIFY_DEFAULTS.timeoutMs,
      attempts: s.attempts ?? NOTIFY_DEFAULTS.attempts,
      backoffMs: s.backoff ?? NOTIFY_DEFAULTS.backoffMs,
    });
  }
  return { coalesceMs: n?.coalesce ?? NOTIFY_DEFAULTS.coalesceMs, sinks };
}
