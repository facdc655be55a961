// When a window or a freeze happens, as the config writes it: recurring (days, start, end or
// duration, timezone, exclude) or one-off (from, to). One set of keys and checks for both, so a
// freeze's times read and fail exactly as a window's do.
import type { z } from 'zod';
import { WEEKDAYS, type LocalTime, type OneOffWindow, type RecurringWindow, type Weekday } from '../policy/index.js';
import { durationMs, instant, localDate, localTime, timeZone, weekdays } from './fields.js';

/** The timing keys of a window or freeze (all optional: which ones make sense is checked below). */
export const timingShape = {
  // recurring
  days: weekdays.optional(),
  start: localTime.optional(),
  end: localTime.optional(),
  duration: durationMs().optional(),
  timezone: timeZone.optional(),
  exclude: localDate.array().optional(),
  // one-off
  from: instant.optional(),
  to: instant.optional(),
};

export interface TimingInput {
  readonly days?: Weekday[] | undefined;
  readonly start?: LocalTime | undefined;
  readonly end?: LocalTime | undefined;
  readonly duration?: number | undefined;
  readonly timezone?: string | undefined;
  readonly exclude?: string[] | undefined;
  readonly from?: number | undefined;
  readonly to?: number | undefined;
}

type Timing =
  | Pick<OneOffWindow, 'kind' | 'from' | 'to'>
  | Pick<RecurringWindow, 'kind' | 'days' | 'start' | 'end' | 'durationMs' | 'timezone' | 'exclude'>;

const RECURRING_KEYS = ['days', 'start', 'end', 'duration', 'timezone', 'exclude'] as const;
const WEEK_MS = 7 * 86_400_000;

/** The timing of a window (`what`: "window" or "freeze"), each problem an issue on its key. */
export function timingOf(w: TimingInput, ctx: z.RefinementCtx, what: string): Timing {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  if (w.from !== undefined || w.to !== undefined) {
    for (const k of RECURRING_KEYS) {
      if (w[k] !== undefined) issue(k, `"${k}" belongs to recurring ${what}s; a one-off ${what} has only from and to`);
    }
    if (w.from === undefined) issue('from', `a one-off ${what} needs from (it has to)`);
    if (w.to === undefined) issue('to', `a one-off ${what} needs to (it has from)`);
    if (w.from !== undefined && w.to !== undefined && w.from >= w.to) {
      issue(
        'to',
        `the ${what} is empty: to (${new Date(w.to).toISOString()}) is not after from (${new Date(w.from).toISOString()})`,
      );
    }
    return { kind: 'oneOff', from: w.from ?? 0, to: w.to ?? 0 };
  }
  if (w.start === undefined)
    issue('start', `a recurring ${what} needs start ("HH:MM"); a one-off ${what} needs from and to`);
  if (w.timezone === undefined) issue('timezone', `a recurring ${what} needs timezone (e.g. Europe/Berlin or UTC)`);
  if (w.end === undefined && w.duration === undefined)
    issue('end', `a recurring ${what} needs end ("HH:MM") or duration (e.g. 12h)`);
  if (w.end !== undefined && w.duration !== undefined) issue('duration', 'give end or duration, not both');
  if (w.start && w.end?.hour === w.start.hour && w.end.minute === w.start.minute) {
    issue('end', `the ${what} is empty: end equals start (for a whole day use duration: 24h)`);
  }
  if (w.duration === 0) issue('duration', `the ${what} is empty: duration is 0`);
  if (w.duration !== undefined && w.duration > WEEK_MS) issue('duration', `a recurring ${what} lasts at most 7d`);
  return {
    kind: 'recurring',
    days: w.days ?? [...WEEKDAYS],
    start: w.start ?? { hour: 0, minute: 0 },
    ...(w.end ? { end: w.end } : {}),
    ...(w.duration !== undefined ? { durationMs: w.duration } : {}),
    timezone: w.timezone ?? 'UTC',
    exclude: w.exclude ?? [],
  };
}
