// Leaf values of the config (durations, wall-clock times, zones, days, dates, instants, scaling
// values) as zod schemas that say exactly what is wrong. Ranges come from src/api, never from here.
import { DateTime, IANAZone } from 'luxon';
import { validateDetailed } from 'node-cron';
import { z } from 'zod';
import { SCALING_LIMITS, isUuid, limitViolation, type ScalingField } from '../api/index.js';
import { MAX_LEAD_MS, WEEKDAYS, parseDuration, type LocalTime, type Weekday } from '../policy/index.js';
import { closest, didYouMean } from './did-you-mean.js';

/** A schema from a function that returns the value or the message of what is wrong with it. */
export function field<T>(check: (v: unknown) => { ok: T } | string) {
  return z.unknown().transform((v, ctx): T => {
    const r = v === undefined ? 'is required' : check(v);
    if (typeof r === 'string') {
      ctx.addIssue({ code: 'custom', message: r, input: v });
      return z.NEVER;
    }
    return r.ok;
  });
}

export const durationMs = (what = 'a duration') =>
  field<number>((v) => {
    const ms = typeof v === 'string' ? parseDuration(v) : v === 0 ? 0 : null;
    return ms === null ? `must be ${what} such as 30s, 5m, 1h30m or 2h (units ms, s, m, h, d)` : { ok: ms };
  });

export const positiveDurationMs = (what = 'a duration') =>
  durationMs(what).refine((ms) => ms > 0, 'must be longer than 0s');

/** Longest lead time a policy may ask for (and the farthest auto plans ahead). */

/** `behavior.scaleUp.leadTime`: auto, or a duration from 0 (no lead) to 24h. */
export const leadTime = field<'auto' | number>((v) => {
  if (v === 'auto') return { ok: 'auto' };
  const ms = typeof v === 'string' ? parseDuration(v) : v === 0 ? 0 : null;
  if (ms === null) return 'must be auto or a duration such as 0, 90s, 5m or 1h (units ms, s, m, h, d)';
  return ms > MAX_LEAD_MS ? 'must be at most 24h' : { ok: ms };
});

const HHMM = /^([01]\d|2[0-3]):([0-5]\d)$/;
export const localTime = field<LocalTime>((v) => {
  const m = typeof v === 'string' ? HHMM.exec(v) : null;
  if (!m) return `${JSON.stringify(v)} is not a time: write "HH:MM" from 00:00 to 23:59 (quoted; midnight is "00:00")`;
  return { ok: { hour: Number(m[1]), minute: Number(m[2]) } };
});

let zoneNames: readonly string[] | undefined;
export const timeZone = field<string>((v) => {
  if (typeof v !== 'string' || v === '') return 'must be an IANA time zone such as Europe/Berlin or UTC';
  if (IANAZone.isValidZone(v)) return { ok: v };
  zoneNames ??= Intl.supportedValuesOf('timeZone');
  return `unknown time zone ${JSON.stringify(v)}${didYouMean(v, zoneNames)}`;
});

const weekday = field<Weekday>((v) => {
  if (typeof v === 'string' && (WEEKDAYS as readonly string[]).includes(v)) return { ok: v as Weekday };
  const day = String(v);
  const hint = closest(day.slice(0, 3), WEEKDAYS) ?? closest(day, WEEKDAYS);
  return `unknown day ${JSON.stringify(v)}${hint ? `; did you mean "${hint}"?` : ''} (days are ${WEEKDAYS.join(', ')})`;
});

export const weekdays = z
  .array(weekday, { error: `must be a list of days from ${WEEKDAYS.join(', ')}` })
  .min(1, { error: `must list at least one day from ${WEEKDAYS.join(', ')}` })
  .superRefine((days, ctx) => {
    days.forEach((d, i) => {
      if (days.indexOf(d) !== i) ctx.addIssue({ code: 'custom', path: [i], message: `day "${d}" is listed twice` });
    });
  });

const YMD = /^\d{4}-\d{2}-\d{2}$/;
export const localDate = field<string>((v) => {
  if (typeof v !== 'string' || !YMD.test(v) || !DateTime.fromISO(v).isValid) {
    return `${JSON.stringify(v)} is not a date: write YYYY-MM-DD, e.g. 2026-12-24`;
  }
  return { ok: v };
});

const OFFSET = /(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;
/** An ISO 8601 instant with its offset (Z or +01:00): a one-off window means one moment everywhere. */
export const instant = field<number>((v) => {
  if (typeof v !== 'string') return 'must be an ISO 8601 date-time with offset, e.g. 2026-11-27T00:00:00-05:00';
  const t = DateTime.fromISO(v, { setZone: true });
  if (!t.isValid)
    return `${JSON.stringify(v)} is not an ISO 8601 date-time (${t.invalidExplanation ?? t.invalidReason})`;
  if (!v.includes('T') || !OFFSET.test(v)) {
    return `${JSON.stringify(v)} needs a time and an offset, e.g. 2026-11-27T00:00:00-05:00 or ...T05:00:00Z`;
  }
  return { ok: t.toMillis() };
});

export const uuid = field<string>((v) =>
  typeof v === 'string' && isUuid(v) ? { ok: v.toLowerCase() } : `${JSON.stringify(v)} is not a uuid`,
);

/** The names of pipes, policies, windows and keys: they become queue names and metric labels. */
export const LOWER_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
export const LOWER_NAME_RULE = 'must be lower-case letters, digits and "-" (1 to 63, not starting or ending with "-")';
export const lowerName = (what: string) =>
  field<string>((v) =>
    typeof v === 'string' && LOWER_NAME.test(v) ? { ok: v } : `${what} ${JSON.stringify(v)} ${LOWER_NAME_RULE}`,
  );

export const nonEmptyString = field<string>((v) =>
  typeof v === 'string' && v.trim() !== '' ? { ok: v } : 'must be a non-empty string',
);

/** A value the platform accepts for a scaling field (SCALING_LIMITS; docs/platform-api.md#scale-a-pipe). */
export const scalingValue = (f: ScalingField) =>
  field<number>((v) => {
    return limitViolation(f, v) ?? { ok: v as number };
  });

/** A maxStep: how much one decision may move a field; positive, whole for integer fields. */
export const stepValue = (f: ScalingField) =>
  field<number>((v) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return `maxStep of ${f} must be a number above 0`;
    if (SCALING_LIMITS[f].integer && !Number.isInteger(v)) return `maxStep of ${f} must be an integer`;
    return { ok: v };
  });

export const cronExpression = field<string>((v) => {
  if (typeof v !== 'string') return 'must be a cron expression such as "*/30 * * * * *"';
  const r = validateDetailed(v);
  if (r.valid) return { ok: v };
  const why = r.errors.map((e) => e.message).join('; ');
  return `invalid cron expression ${JSON.stringify(v)}: ${why}`;
});

const HOST_PORT = /^(?<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(?<port>\d{1,5})$/;
export const listenAddress = field<string>((v) => {
  const m = typeof v === 'string' ? HOST_PORT.exec(v) : null;
  const port = m?.groups?.port; // the group always takes part in a match
  if (port === undefined || Number(port) > 65535)
    return `${JSON.stringify(v)} must be host:port, e.g. 127.0.0.1:9464 (port 0 picks a free one)`;
  return { ok: v as string };
});
