// What a reader asks of the history (the CLI's flags, the endpoint's query string), checked once for
// both: a since given as a duration back from now or an ISO time, outcome names, and an entry as
// JSON with ISO times.
import { parseDuration } from '../policy/index.js';
import type { HistoryEntry } from './codec.js';
import { OUTCOMES, isOutcomeName, type OutcomeName } from './outcomes.js';

/** Epoch ms of "7d" (back from now) or of an ISO 8601 time; a message when it is neither. */
export function parseSince(text: string, now: number): number | string {
  const ms = parseDuration(text);
  // a duration that reaches back past 1970 names no time an entry can have (nor a Date: 500)
  if (ms !== null) return now - ms >= 0 ? now - ms : `"${text.slice(0, 40)}" reaches back before 1970-01-01`;
  const t = Date.parse(text);
  if (/^\d{4}-\d{2}-\d{2}/.test(text) && Number.isFinite(t)) return t;
  return `"${text.slice(0, 40)}" is neither a duration (7d, 12h) nor an ISO time (2026-11-23T08:00:00Z)`;
}

/** Comma-separated outcome names; a message naming the first unknown one. */
export function parseOutcomes(texts: readonly string[]): OutcomeName[] | string {
  const names = texts
    .flatMap((t) => t.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const n of names)
    if (!isOutcomeName(n)) return `"${n.slice(0, 40)}" is not an outcome (one of ${OUTCOMES.join(', ')})`;
  return names as OutcomeName[];
}

/** An entry as the CLI's --json and the endpoint give it: times as ISO 8601. */
export function entryJson(e: HistoryEntry) {
  const { first, last, ...rest } = e;
  return { ...rest, first: new Date(first).toISOString(), last: new Date(last).toISOString() };
}
