// GET /history on the telemetry port: one pipe's history as JSON, newest first, in pages.
//   /history?pipe=orders-events&since=7d&outcome=applied,failed&limit=100&offset=0
// Read-only, and no secret is in it: entries hold names, codes, values and request ids only.
import { entryJson, parseOutcomes, parseSince } from './query.js';
import type { HistoryStore } from './store.js';

export interface RouteAnswer {
  readonly status: number;
  readonly body: unknown;
}

export const DEFAULT_PAGE = 100;
export const MAX_PAGE = 1_000;
const DEFAULT_SINCE = '7d';

function count(text: string | null, name: string, fallback: number, max: number): number | string {
  if (text === null) return fallback;
  if (!/^\d{1,9}$/.test(text) || Number(text) > max) return `${name}: must be an integer from 0 to ${max}`;
  return Number(text);
}

export function historyRoute(
  store: HistoryStore,
  pipes: () => readonly string[],
  now: () => number = Date.now,
): (query: URLSearchParams) => Promise<RouteAnswer> {
  return async (query) => {
    const bad = (error: string): RouteAnswer => ({ status: 400, body: { error } });
    const pipe = query.get('pipe');
    if (pipe === null || pipe === '') return bad('pipe: required (/history?pipe=<name>&since=7d)');
    if (!pipes().includes(pipe)) return { status: 404, body: { error: 'pipe: not in the config in force' } };
    const since = parseSince(query.get('since') ?? DEFAULT_SINCE, now());
    if (typeof since === 'string') return bad(`since: ${since}`);
    const outcomes = parseOutcomes(query.getAll('outcome'));
    if (typeof outcomes === 'string') return bad(`outcome: ${outcomes}`);
    const limit = count(query.get('limit'), 'limit', DEFAULT_PAGE, MAX_PAGE);
    if (typeof limit === 'string') return bad(limit);
    const offset = count(query.get('offset'), 'offset', 0, 1_000_000);
    if (typeof offset === 'string') return bad(offset);
    const page = await store.read(pipe, { since, outcomes, limit, offset });
    return {
      status: 200,
      body: { pipe, since: new Date(since).toISOString(), entries: page.entries.map(entryJson), next: page.next },
    };
  };
}
