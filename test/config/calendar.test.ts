// calendarDates(): the local dates an iCalendar file excludes, and a config that names one.
import { describe, expect, it } from 'vitest';
import { CalendarError, calendarDates } from '../../src/config/calendar.js';
import { loadConfig, parseConfig } from '../../src/config/load.js';
import { BASE } from './config-fixture.js';

const ics = (...events: string[][]): string =>
  [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//test//EN',
    ...events.flatMap((e, i) => ['BEGIN:VEVENT', `UID:${i}`, ...e, 'END:VEVENT']),
    'END:VCALENDAR',
    '',
  ].join('\r\n');

describe('calendarDates', () => {
  it('takes every date of all-day events, multi-day ones to the day before DTEND', () => {
    expect(
      calendarDates(
        ics(
          ['DTSTART;VALUE=DATE:20271224', 'DTEND;VALUE=DATE:20271227', 'SUMMARY:Christmas'],
          ['DTSTART;VALUE=DATE:20270101', 'SUMMARY:New year'],
        ),
      ),
    ).toEqual(['2027-01-01', '2027-12-24', '2027-12-25', '2027-12-26']);
  });

  it('expands recurring events, bounded when they never end', () => {
    expect(
      calendarDates(ics(['DTSTART;VALUE=DATE:20270501', 'RRULE:FREQ=YEARLY;COUNT=3', 'SUMMARY:Labour day'])),
    ).toEqual(['2027-05-01', '2028-05-01', '2029-05-01']);
    const forever = calendarDates(ics(['DTSTART;VALUE=DATE:20270501', 'RRULE:FREQ=YEARLY', 'SUMMARY:Labour day']));
    expect(forever[0]).toBe('2027-05-01');
    expect(forever.at(-1)).toBe('2057-05-01');
  });

  it('refuses timed events and text that is not iCalendar', () => {
    expect(() => calendarDates(ics(['DTSTART:20271225T100000Z', 'SUMMARY:Party']))).toThrow(CalendarError);
    expect(() => calendarDates('hello')).toThrow(/not an iCalendar file/);
    expect(() => calendarDates('BEGIN:VCARD\r\nEND:VCARD\r\n')).toThrow(/BEGIN:VCALENDAR/);
  });
});

describe('exclude: { calendar }', () => {
  it("merges the file's dates with the written ones, relative to the config", () => {
    const config = parseConfig(`${BASE}    exclude: [2026-12-24, { calendar: h.ics }]\n`, {
      file: 'conf/pipescaler.yaml',
      env: {},
      readFile: (p) => {
        expect(p).toBe('conf/h.ics');
        return ics(['DTSTART;VALUE=DATE:20270101', 'SUMMARY:New year']);
      },
    });
    const window = config.policies.weekday!.windows[0]!;
    expect(window.kind === 'recurring' && window.exclude).toEqual(['2026-12-24', '2027-01-01']);
  });

  it('the shipped config reads holidays/de-2027.ics', () => {
    const window = loadConfig('config/pipescaler.yaml', {}).policies['weekday-business-hours']!.windows[0]!;
    expect(window.kind === 'recurring' && window.exclude).toContain('2027-05-17');
  });
});
