// Which windows contain an instant, level-triggered: no state, no clock, only `now` and the windows.
// Local wall-clock times are turned into instants with the zone's offsets from luxon; the only
// rules of our own are the two the design asks for: a wall time in a spring-forward gap means the
// first instant after the gap, and a wall time in a fall-back hour means its first occurrence.
// (luxon's own DateTime.fromObject picks between the two readings of an ambiguous time from the
// offset in effect at the real current time (Settings.now()), which would make decide() depend on
// the machine's clock, and moves a gap time forward by the gap's length (02:30 -> 03:30), not to
// the end of the gap.)
import { IANAZone } from 'luxon';
import { WEEKDAYS, type LocalTime, type RecurringWindow, type Weekday, type Window } from './types.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Weekday of epoch day 0 (1970-01-01, a Thursday), counted from Monday. */
const EPOCH_WEEKDAY = 3;

export interface Occurrence {
  readonly start: number;
  readonly end: number;
}

const zones = new Map<string, IANAZone>();
const instants = new Map<string, number>();
const MAX_MEMO = 50_000;

function zoneOf(window: RecurringWindow): IANAZone {
  let zone = zones.get(window.timezone);
  if (zone === undefined) {
    zone = IANAZone.create(window.timezone);
    if (!zone.isValid) throw new Error(`window "${window.name}": unknown time zone "${window.timezone}"`);
    zones.set(window.timezone, zone);
  }
  return zone;
}

/** Offsets at the start and end of each UTC day, per zone: equal means no transition that day. */
const dayOffsets = new Map<string, readonly [number, number]>();

function exactOffsetMs(zone: IANAZone, instant: number): number {
  return zone.offset(instant) * MINUTE_MS;
}

/**
 * The zone's offset at `instant`. Each reading is an Intl call, the hottest cost of simulate:
 * a day whose start and end have the same offset has no transition (zones change at most once
 * a day), so one memoized pair answers every instant of it.
 */
function offsetMs(zone: IANAZone, instant: number): number {
  const day = Math.floor(instant / DAY_MS);
  const key = `${zone.name}|${day}`;
  let pair = dayOffsets.get(key);
  if (pair === undefined) {
    if (dayOffsets.size >= MAX_MEMO) dayOffsets.clear();
    pair = [exactOffsetMs(zone, day * DAY_MS), exactOffsetMs(zone, (day + 1) * DAY_MS - 1)];
    dayOffsets.set(key, pair);
  }
  return pair[0] === pair[1] ? pair[0] : exactOffsetMs(zone, instant);
}

/** The local calendar day (days since 1970-01-01) that `instant` falls on in `zone`. */
function localDay(zone: IANAZone, instant: number): number {
  return Math.floor((instant + offsetMs(zone, instant)) / DAY_MS);
}

function weekdayOf(day: number): Weekday {
  // eslint-disable-next-line @typescript-eslint/no-non-null-assertion -- ((n % 7) + 7) % 7 is in 0..6
  return WEEKDAYS[(((day + EPOCH_WEEKDAY) % 7) + 7) % 7]!;
}

/** A window's excluded local dates as day numbers, parsed once per (immutable) window. */
const excludedDays = new WeakMap<RecurringWindow, ReadonlySet<number>>();

function isExcluded(window: RecurringWindow, day: number): boolean {
  if (window.exclude.length === 0) return false;
  let days = excludedDays.get(window);
  if (days === undefined) {
    days = new Set(window.exclude.map((d) => Math.floor(Date.parse(`${d}T00:00:00Z`) / DAY_MS)));
    excludedDays.set(window, days);
  }
  return days.has(day);
}

function minutesOf(time: LocalTime): number {
  return time.hour * 60 + time.minute;
}

/** The instant of local wall time `minutes` on local `day`: the first occurrence when the wall time
 *  repeats (fall-back), the first instant after the gap when it does not exist (spring-forward). */
function wallToInstant(zone: IANAZone, day: number, minutes: number): number {
  const key = `${zone.name}|${day}|${minutes}`;
  let instant = instants.get(key);
  if (instant === undefined) {
    // Bounded memo of a pure function (zone offsets cost a formatToParts each): daemon ticks and
    // simulate steps ask for the same few days over and over.
    if (instants.size >= MAX_MEMO) instants.clear();
    instant = computeWallToInstant(zone, day, minutes);
    instants.set(key, instant);
  }
  return instant;
}

function computeWallToInstant(zone: IANAZone, day: number, minutes: number): number {
  const wall = day * DAY_MS + minutes * MINUTE_MS;
  const before = offsetMs(zone, wall - DAY_MS);
  const after = offsetMs(zone, wall + DAY_MS);
  // No transition within a day either side: one reading only (the common case).
  if (before === after && offsetMs(zone, wall - before) === before) return wall - before;
  // A day either side sees every offset that can be in effect at this wall time.
  const offsets = new Set([before, offsetMs(zone, wall), after]);
  let first: number | null = null;
  for (const offset of offsets) {
    const instant = wall - offset;
    if (offsetMs(zone, instant) === offset && (first === null || instant < first)) first = instant;
  }
  if (first !== null) return first;
  // In a gap: the transition lies between the two readings; find it to the millisecond.
  let lo = wall - Math.max(...offsets);
  let hi = wall - Math.min(...offsets);
  const earlier = offsetMs(zone, lo);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetMs(zone, mid) === earlier) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** How many local days before `now`'s an occurrence containing `now` may have started. */
function lookbackDays(window: RecurringWindow): number {
  if (window.end !== undefined) return 1;
  return Math.ceil((window.durationMs ?? 0) / DAY_MS) + 1;
}

/** The occurrence of `window` starting on local `day`, or null when it does not start that day. */
function occurrenceOn(window: RecurringWindow, zone: IANAZone, day: number): Occurrence | null {
  if (!window.days.includes(weekdayOf(day))) return null;
  if (isExcluded(window, day)) return null;
  const startMinutes = minutesOf(window.start);
  const start = wallToInstant(zone, day, startMinutes);
  let end: number;
  if (window.end !== undefined) {
    const endMinutes = minutesOf(window.end);
    end = wallToInstant(zone, endMinutes <= startMinutes ? day + 1 : day, endMinutes);
  } else if (window.durationMs !== undefined) {
    end = start + window.durationMs;
  } else {
    throw new Error(`window "${window.name}": needs an end or a duration`);
  }
  // A window whose whole wall-clock span falls in a gap does not happen that day.
  return end > start ? { start, end } : null;
}

/** The occurrence containing `now` (overlapping occurrences of one window merge), or null. */
export function occurrenceAt(window: Window, now: number): Occurrence | null {
  if (window.kind === 'oneOff') {
    return window.from <= now && now < window.to ? { start: window.from, end: window.to } : null;
  }
  const zone = zoneOf(window);
  const today = localDay(zone, now);
  let found: { start: number; end: number } | null = null;
  for (let day = today - lookbackDays(window); day <= today; day++) {
    const occ = occurrenceOn(window, zone, day);
    if (occ === null || occ.start > now || now >= occ.end) continue;
    if (found === null) found = { ...occ };
    else found.end = Math.max(found.end, occ.end);
  }
  return found;
}

/** The windows containing `now` (in policy order) and, among them, those of the highest priority. */
export function activeWindows(windows: readonly Window[], now: number): { active: Window[]; winners: Window[] } {
  const active = windows.filter((w) => occurrenceAt(w, now) !== null);
  const top = Math.max(...active.map((w) => w.priority));
  return { active, winners: active.filter((w) => w.priority === top) };
}

/** The next instant in (after, limit] at which any window starts or ends, or null. */
export function nextBoundary(windows: readonly Window[], after: number, limit: number): number | null {
  let best: number | null = null;
  const earlier = (b: number | null, t: number): number | null =>
    t > after && t <= limit && (b === null || t < b) ? t : b;
  for (const window of windows) {
    if (window.kind === 'oneOff') {
      best = earlier(earlier(best, window.from), window.to);
      continue;
    }
    const zone = zoneOf(window);
    const last = localDay(zone, limit);
    for (let day = localDay(zone, after) - lookbackDays(window); day <= last; day++) {
      const occ = occurrenceOn(window, zone, day);
      if (occ === null) continue;
      // Later days start later still: nothing after this can beat what we have.
      if (best !== null && occ.start > best) break;
      best = earlier(earlier(best, occ.start), occ.end);
    }
  }
  return best;
}

/** "08:00-20:00" or "22:00 for 8h", for reasons. */
export function describeWindow(window: Window): string {
  if (window.kind === 'oneOff') {
    return `${window.name} (one-off ${new Date(window.from).toISOString()} to ${new Date(window.to).toISOString()})`;
  }
  const hhmm = (t: LocalTime): string => `${String(t.hour).padStart(2, '0')}:${String(t.minute).padStart(2, '0')}`;
  const span =
    window.end !== undefined
      ? `${hhmm(window.start)}-${hhmm(window.end)}`
      : `${hhmm(window.start)} for ${formatDuration(window.durationMs ?? 0)}`;
  const days = window.days.length === 7 ? 'daily' : window.days.join(',');
  return `${window.name} (${window.timezone}, ${days} ${span})`;
}

/** 90_000 -> "1m30s"; 0 -> "0s". */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  const parts: string[] = [];
  let rest = Math.ceil(ms / 1000);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('');
}
