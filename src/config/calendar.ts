// Holidays from an iCalendar file: `exclude: [2026-12-24, { calendar: holidays/de-2027.ics }]`.
// Each all-day event (and each occurrence of a recurring one) excludes its local dates, which the
// windows read in their own time zone like any date written in `exclude`. Parsed with ical.js
// (Mozilla's maintained parser); a timed event is refused: a holiday file holds whole days.
import ICAL from 'ical.js';
import { isRecord, type RawIssue } from './issue.js';

/** A recurring event without an end yields dates up to this many years after its start. */
const RECURRENCE_YEARS = 30;
const MAX_DATES_PER_EVENT = 1_000;

export class CalendarError extends Error {
  override readonly name = 'CalendarError';
}

const iso = (t: ICAL.Time): string =>
  `${String(t.year).padStart(4, '0')}-${String(t.month).padStart(2, '0')}-${String(t.day).padStart(2, '0')}`;

/** Every date of an all-day occurrence: from its start to the day before its end (at least one). */
function datesOf(start: ICAL.Time, end: ICAL.Time | null, out: Set<string>): void {
  const day = start.clone();
  do {
    out.add(iso(day));
    day.adjust(1, 0, 0, 0);
  } while (end !== null && day.compare(end) < 0);
}

/** The local dates an iCalendar text excludes, sorted. Throws CalendarError with a readable reason. */
export function calendarDates(text: string): string[] {
  let root: ICAL.Component;
  try {
    root = new ICAL.Component(ICAL.parse(text) as unknown[]);
  } catch (err) {
    throw new CalendarError(`not an iCalendar file: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (root.name !== 'vcalendar')
    throw new CalendarError('not an iCalendar file: it does not start with BEGIN:VCALENDAR');
  const dates = new Set<string>();
  for (const component of root.getAllSubcomponents('vevent')) {
    const event = new ICAL.Event(component);
    const name = event.summary ? `"${event.summary}"` : `with UID ${event.uid}`;
    // ical.js types both as always there: an event without DTSTART has no start date, and an
    // iterator's next() is null after the last occurrence. (The end date is the start's when absent.)
    const start = event.startDate as ICAL.Time | null;
    if (!start) throw new CalendarError(`the event ${name} has no DTSTART`);
    if (!start.isDate) {
      throw new CalendarError(
        `the event ${name} (${start.toString()}) is not an all-day event: exclude takes whole days`,
      );
    }
    const span = event.endDate.compare(start) > 0 ? event.endDate.subtractDate(start) : null;
    if (!event.isRecurring()) {
      datesOf(start, event.endDate, dates);
      continue;
    }
    const lastYear = start.year + RECURRENCE_YEARS;
    const it = event.iterator();
    const following = (): ICAL.Time | null => it.next();
    for (
      let n = 0, next = following();
      next && n < MAX_DATES_PER_EVENT && next.year <= lastYear;
      n++, next = following()
    ) {
      const end = span ? next.clone() : null;
      if (end && span) end.addDuration(span);
      datesOf(next, end, dates);
    }
  }
  return [...dates].sort();
}

type ReadFile = (path: string) => string;

/**
 * Replaces each `{ calendar: file }` in the policies' and windows' `exclude` lists of the raw
 * config by the dates of that file (`find` gives its path: relative to the config's folder), in place. Problems come back
 * with the path of the entry, so the error names its line.
 */
export function expandCalendars(
  raw: Record<string, unknown>,
  find: (file: string) => string,
  readFile: ReadFile,
): RawIssue[] {
  const issues: RawIssue[] = [];
  const cache = new Map<string, string[] | null>();
  const expand = (owner: Record<string, unknown>, path: (string | number)[]): void => {
    const list = owner.exclude;
    if (!Array.isArray(list) || !list.some((e) => isRecord(e) && 'calendar' in e)) return;
    const out: unknown[] = [];
    list.forEach((entry: unknown, i) => {
      if (!isRecord(entry) || !('calendar' in entry)) {
        out.push(entry);
        return;
      }
      const at = [...path, 'exclude', i, 'calendar'];
      const extra = Object.keys(entry).find((k) => k !== 'calendar');
      if (extra !== undefined)
        issues.push({
          path: [...path, 'exclude', i, extra],
          atKey: true,
          message: `unknown key "${extra}" (a calendar entry is { calendar: file.ics })`,
        });
      const file = entry.calendar;
      if (typeof file !== 'string' || file === '') {
        issues.push({ path: at, message: 'expected the path of an iCalendar (.ics) file, relative to the config' });
        return;
      }
      const full = find(file);
      if (!cache.has(full)) {
        try {
          cache.set(full, calendarDates(readFile(full)));
        } catch (err) {
          const reason =
            err instanceof CalendarError
              ? err.message
              : `cannot read it (${isRecord(err) && typeof err.code === 'string' ? err.code : 'unreadable'})`;
          issues.push({ path: at, message: `calendar ${file}: ${reason}` });
          cache.set(full, null);
        }
      }
      out.push(...(cache.get(full) ?? []));
    });
    owner.exclude = out;
  };
  if (!isRecord(raw.policies)) return issues;
  for (const [name, policy] of Object.entries(raw.policies)) {
    if (!isRecord(policy)) continue;
    expand(policy, ['policies', name]);
    if (!Array.isArray(policy.windows)) continue;
    policy.windows.forEach((w: unknown, i) => {
      if (isRecord(w)) expand(w, ['policies', name, 'windows', i]);
    });
  }
  return issues;
}
