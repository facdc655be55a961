import { describe, expect, it } from 'vitest';
import { activeWindows, nextBoundary, occurrenceAt } from '../../src/policy/windows.js';
import type { Window } from '../../src/policy/types.js';
import { at, oneOff, recurring } from './build.js';

const HOUR = 3_600_000;

// Every case: a window, an instant inside one occurrence, and that occurrence's exact UTC bounds.
// Berlin switches at 01:00Z (02:00 CET -> 03:00 CEST; 03:00 CEST -> 02:00 CET);
// New York at 07:00Z in spring (02:00 EST -> 03:00 EDT) and 06:00Z in autumn (02:00 EDT -> 01:00 EST).
const DST_CASES: { name: string; window: Window; probe: string; start: string; end: string }[] = [
  // A start inside the spring-forward gap begins at the first instant after it (03:00 local).
  {
    name: 'Berlin 2026-03-29 start 02:30 in the gap',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '02:30', end: '06:00' }),
    probe: '2026-03-29T02:00Z',
    start: '2026-03-29T01:00Z',
    end: '2026-03-29T04:00Z',
  },
  {
    name: 'Berlin 2027-03-28 start 02:00 in the gap',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '02:00', end: '04:00' }),
    probe: '2027-03-28T01:30Z',
    start: '2027-03-28T01:00Z',
    end: '2027-03-28T02:00Z',
  },
  {
    name: 'New York 2026-03-08 start 02:30 in the gap',
    window: recurring({ timezone: 'America/New_York', days: ['sun'], start: '02:30', end: '06:00' }),
    probe: '2026-03-08T08:00Z',
    start: '2026-03-08T07:00Z',
    end: '2026-03-08T10:00Z',
  },
  {
    name: 'New York 2027-03-14 start 02:59 in the gap',
    window: recurring({ timezone: 'America/New_York', days: ['sun'], start: '02:59', end: '05:00' }),
    probe: '2027-03-14T07:00Z',
    start: '2027-03-14T07:00Z',
    end: '2027-03-14T09:00Z',
  },
  // An end inside the gap ends at the first instant after it.
  {
    name: 'Berlin 2026-03-28 22:00 -> 02:30 (end in the gap)',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sat'], start: '22:00', end: '02:30' }),
    probe: '2026-03-29T00:59Z',
    start: '2026-03-28T21:00Z',
    end: '2026-03-29T01:00Z',
  },
  // Spanning the repeated hour: the wall-clock window lasts an hour longer.
  {
    name: 'Berlin 2026-10-25 01:30 -> 03:30 spans the repeated hour',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '01:30', end: '03:30' }),
    probe: '2026-10-25T01:30Z',
    start: '2026-10-24T23:30Z',
    end: '2026-10-25T02:30Z',
  },
  {
    name: 'Berlin 2027-10-31 00:00 -> 04:00 spans the repeated hour',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '00:00', end: '04:00' }),
    probe: '2027-10-31T02:00Z',
    start: '2027-10-30T22:00Z',
    end: '2027-10-31T03:00Z',
  },
  {
    name: 'New York 2026-11-01 00:30 -> 02:30 spans the repeated hour',
    window: recurring({ timezone: 'America/New_York', days: ['sun'], start: '00:30', end: '02:30' }),
    probe: '2026-11-01T06:30Z',
    start: '2026-11-01T04:30Z',
    end: '2026-11-01T07:30Z',
  },
  {
    name: 'New York 2027-11-07 00:00 -> 03:00 spans the repeated hour',
    window: recurring({ timezone: 'America/New_York', days: ['sun'], start: '00:00', end: '03:00' }),
    probe: '2027-11-07T07:59Z',
    start: '2027-11-07T04:00Z',
    end: '2027-11-07T08:00Z',
  },
  // Start and end inside the repeated hour: both take its first occurrence.
  {
    name: 'Berlin 2026-10-25 02:30 -> 02:45 in the repeated hour (first)',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '02:30', end: '02:45' }),
    probe: '2026-10-25T00:40Z',
    start: '2026-10-25T00:30Z',
    end: '2026-10-25T00:45Z',
  },
  {
    name: 'Berlin 2027-10-31 02:30 -> 05:00 starts in the repeated hour',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '02:30', end: '05:00' }),
    probe: '2027-10-31T01:00Z',
    start: '2027-10-31T00:30Z',
    end: '2027-10-31T04:00Z',
  },
  {
    name: 'New York 2026-11-01 01:30 -> 03:00 starts in the repeated hour',
    window: recurring({ timezone: 'America/New_York', days: ['sun'], start: '01:30', end: '03:00' }),
    probe: '2026-11-01T06:00Z',
    start: '2026-11-01T05:30Z',
    end: '2026-11-01T08:00Z',
  },
  {
    name: 'New York 2027-11-07 22:00 Sat -> 01:15 ends in the repeated hour (first)',
    window: recurring({ timezone: 'America/New_York', days: ['sat'], start: '22:00', end: '01:15' }),
    probe: '2027-11-07T05:00Z',
    start: '2027-11-07T02:00Z',
    end: '2027-11-07T05:15Z',
  },
  // A duration is elapsed time, not wall clock.
  {
    name: 'Berlin 2026-10-25 01:30 for 3h across the repeated hour',
    window: recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '01:30', durationMs: 3 * HOUR }),
    probe: '2026-10-25T02:00Z',
    start: '2026-10-24T23:30Z',
    end: '2026-10-25T02:30Z',
  },
  {
    name: 'New York 2026-03-08 01:00 for 3h across the gap',
    window: recurring({ timezone: 'America/New_York', days: ['sun'], start: '01:00', durationMs: 3 * HOUR }),
    probe: '2026-03-08T08:30Z',
    start: '2026-03-08T06:00Z',
    end: '2026-03-08T09:00Z',
  },
];

describe('occurrenceAt on DST days', () => {
  it.each(DST_CASES)('$name', ({ window, probe, start, end }) => {
    const s = at(start);
    const e = at(end);
    expect(occurrenceAt(window, at(probe))).toEqual({ start: s, end: e });
    expect(occurrenceAt(window, s)).toEqual({ start: s, end: e });
    expect(occurrenceAt(window, e - 1)).toEqual({ start: s, end: e });
    expect(occurrenceAt(window, s - 1)).toBeNull();
    expect(occurrenceAt(window, e)).toBeNull();
    // simulate steps exactly onto both edges
    expect(nextBoundary([window], s - HOUR, s + 10 * HOUR)).toBe(s);
    expect(nextBoundary([window], s, s + 10 * HOUR)).toBe(e);
  });

  it('a window whose whole wall-clock span is in the gap does not happen that day', () => {
    const w = recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '02:10', end: '02:50' });
    expect(occurrenceAt(w, at('2026-03-29T01:00Z'))).toBeNull();
    expect(occurrenceAt(w, at('2026-03-29T00:30Z'))).toBeNull();
    // the week after it is back to normal (CEST: 00:10Z)
    expect(occurrenceAt(w, at('2026-04-05T00:20Z'))).toEqual({
      start: at('2026-04-05T00:10Z'),
      end: at('2026-04-05T00:50Z'),
    });
  });
});

describe('occurrenceAt across midnight and the week boundary', () => {
  const night = recurring({ timezone: 'America/New_York', days: ['fri'], start: '22:00', end: '02:00' });
  const weekend = recurring({ timezone: 'Europe/Berlin', days: ['sun'], start: '22:00', end: '06:00' });

  it.each([
    // Fri 2026-11-20 22:00 EST = 2026-11-21T03:00Z, ends Sat 02:00 EST = 07:00Z
    { w: night, probe: '2026-11-21T02:59Z', active: false },
    { w: night, probe: '2026-11-21T03:00Z', active: true },
    { w: night, probe: '2026-11-21T06:00Z', active: true }, // Saturday 01:00 local, started Friday
    { w: night, probe: '2026-11-21T07:00Z', active: false },
    { w: night, probe: '2026-11-22T06:00Z', active: false }, // Sunday 01:00 local: Saturday does not start it
    // Sun 2026-11-22 22:00 CET = 21:00Z, ends Mon 06:00 CET = 05:00Z
    { w: weekend, probe: '2026-11-22T20:59Z', active: false },
    { w: weekend, probe: '2026-11-22T21:00Z', active: true },
    { w: weekend, probe: '2026-11-23T04:59Z', active: true }, // Monday, started Sunday
    { w: weekend, probe: '2026-11-23T05:00Z', active: false },
    { w: weekend, probe: '2026-11-23T21:30Z', active: false }, // Monday night: not a start day
  ])('$w.timezone at $probe: active=$active', ({ w, probe, active }) => {
    expect(occurrenceAt(w, at(probe)) !== null).toBe(active);
  });

  it('a long duration is found from days back', () => {
    const w = recurring({ timezone: 'Europe/Berlin', days: ['fri'], start: '18:00', durationMs: 60 * HOUR });
    // Fri 2026-11-20 18:00 CET = 17:00Z, + 60h = Mon 05:00Z
    expect(occurrenceAt(w, at('2026-11-23T04:00Z'))).toEqual({
      start: at('2026-11-20T17:00Z'),
      end: at('2026-11-23T05:00Z'),
    });
  });
});

describe('exclusions', () => {
  const w = recurring({ timezone: 'Europe/Berlin', start: '22:00', end: '06:00', exclude: ['2026-12-25'] });
  it.each([
    { probe: '2026-12-24T22:00Z', active: true }, // started on the 24th (23:00 local)
    { probe: '2026-12-25T04:30Z', active: true }, // 05:30 on the excluded 25th: wrapped in from the 24th
    { probe: '2026-12-25T21:30Z', active: false }, // 22:30 on the 25th: does not start
    { probe: '2026-12-26T02:00Z', active: false }, // 03:00 on the 26th: the 25th's run never started
    { probe: '2026-12-26T21:30Z', active: true }, // the 26th starts again
  ])('at $probe active=$active', ({ probe, active }) => {
    expect(occurrenceAt(w, at(probe)) !== null).toBe(active);
  });

  it('the boundary search skips an excluded start', () => {
    // after the 24th's run ends (05:00Z on the 25th) the next start is the 26th at 21:00Z
    expect(nextBoundary([w], at('2026-12-25T05:00Z'), at('2026-12-31T00:00Z'))).toBe(at('2026-12-26T21:00Z'));
  });
});

describe('one-off windows', () => {
  const w = oneOff({ from: '2026-11-27T00:00:00-05:00', to: '2026-11-30T00:00:00-05:00' });
  it.each([
    { probe: '2026-11-27T04:59:59.999Z', active: false },
    { probe: '2026-11-27T05:00:00Z', active: true },
    { probe: '2026-11-30T04:59:59.999Z', active: true },
    { probe: '2026-11-30T05:00:00Z', active: false },
  ])('at $probe active=$active', ({ probe, active }) => {
    expect(occurrenceAt(w, at(probe)) !== null).toBe(active);
  });

  it('reports its own bounds and boundaries', () => {
    expect(occurrenceAt(w, at('2026-11-28T00:00Z'))).toEqual({
      start: at('2026-11-27T05:00Z'),
      end: at('2026-11-30T05:00Z'),
    });
    expect(nextBoundary([w], at('2026-11-01T00:00Z'), at('2026-12-31T00:00Z'))).toBe(at('2026-11-27T05:00Z'));
    expect(nextBoundary([w], at('2026-11-27T05:00Z'), at('2026-12-31T00:00Z'))).toBe(at('2026-11-30T05:00Z'));
    expect(nextBoundary([w], at('2026-11-30T05:00Z'), at('2026-12-31T00:00Z'))).toBeNull();
    expect(nextBoundary([w], at('2026-11-01T00:00Z'), at('2026-11-27T04:00Z'))).toBeNull();
  });
});

describe('activeWindows', () => {
  const low = recurring({ name: 'low', timezone: 'UTC', start: '08:00', end: '20:00' });
  const alsoLow = recurring({ name: 'also-low', timezone: 'UTC', start: '10:00', end: '12:00' });
  const high = oneOff({ name: 'high', from: '2026-11-23T11:00Z', to: '2026-11-23T13:00Z', priority: 10 });
  const windows = [low, alsoLow, high];
  it.each([
    { probe: '2026-11-23T07:00Z', active: [], winners: [] },
    { probe: '2026-11-23T09:00Z', active: ['low'], winners: ['low'] },
    { probe: '2026-11-23T10:30Z', active: ['low', 'also-low'], winners: ['low', 'also-low'] },
    { probe: '2026-11-23T11:30Z', active: ['low', 'also-low', 'high'], winners: ['high'] },
    { probe: '2026-11-23T12:30Z', active: ['low', 'high'], winners: ['high'] },
  ])('at $probe', ({ probe, active, winners }) => {
    const r = activeWindows(windows, at(probe));
    expect(r.active.map((w) => w.name)).toEqual(active);
    expect(r.winners.map((w) => w.name)).toEqual(winners);
  });

  it('the next boundary of several windows is the earliest', () => {
    expect(nextBoundary(windows, at('2026-11-23T10:30Z'), at('2026-11-24T00:00Z'))).toBe(at('2026-11-23T11:00Z'));
    expect(nextBoundary(windows, at('2026-11-23T13:00Z'), at('2026-11-24T00:00Z'))).toBe(at('2026-11-23T20:00Z'));
    expect(nextBoundary(windows, at('2026-11-23T20:00Z'), at('2026-11-24T07:59Z'))).toBeNull();
  });

  it('an unknown time zone is a clear error naming the window', () => {
    const bad = recurring({ name: 'oops', timezone: 'Mars/Olympus', start: '08:00', end: '09:00' });
    expect(() => occurrenceAt(bad, 0)).toThrow('window "oops": unknown time zone "Mars/Olympus"');
  });
});
