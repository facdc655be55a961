// The time of each sample of a metric query, asked in the same request as its values, so that
// staleAfter can judge a sample by its own age. An instant query answers every sample at the
// evaluation time, and a per-query lookback_delta is ignored by older servers (Debian's 2.42
// among them): a series that stopped updating but still has a sample within
// Prometheus' own 5-minute lookback (samples with their own timestamps, federated or pushed) came
// back as fresh. PromQL's timestamp() gives a selected series' own time; for an aggregation of
// selected series the oldest input time of each group is min by (the same grouping) of it.
//
// One request: `label_replace(Q, "pipescaler_part", "value", "", "") or
// label_replace(<time of Q>, "pipescaler_part", "time", "", "")`, so a policy still costs one
// query per tick. Queries of another shape (functions, binary operators, offsets, range vectors)
// go as they are: their samples carry the query's time, and only Prometheus' own lookback and
// staleness markers (a target or series that disappeared) tell that they are old.

/** The label that tells values from times in the combined answer. */
export const PART_LABEL = 'pipescaler_part';

const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'count', 'group', 'stddev', 'stdvar']);
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'offset',
  'and',
  'or',
  'unless',
  'inf',
  'nan',
]);

/** Index of the ')' that closes the '(' at `open`, skipping quoted strings; -1 if none. */
function closing(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s.charAt(i);
    if (c === '"' || c === "'" || c === '`') {
      const q = c;
      for (i++; i < s.length && s[i] !== q; i++) if (s[i] === '\\' && q !== '`') i++;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  return -1;
}

/** A bare instant selector: `name`, `name{...}` or `{...}` (no range, offset or @). */
function isSelector(q: string): boolean {
  const s = q.trim();
  const brace = s.indexOf('{');
  const name = (brace < 0 ? s : s.slice(0, brace)).trim();
  if (name !== '' && (!NAME.test(name) || KEYWORDS.has(name.toLowerCase()) || AGGREGATIONS.has(name))) return false;
  if (brace < 0) return name !== '';
  // the matchers run to the closing brace, quoted values may hold anything
  let i = brace + 1;
  for (; i < s.length && s[i] !== '}'; i++) {
    const c = s.charAt(i);
    if (c === '"' || c === "'" || c === '`') {
      const q = c;
      for (i++; i < s.length && s[i] !== q; i++) if (s[i] === '\\' && q !== '`') i++;
      if (i >= s.length) return false;
    } else if (c === '{' || c === '(' || c === '[') return false;
  }
  return i === s.length - 1;
}

/** `by (a, b)` / `without (a)` at the start of s: the clause and what follows, or null. */
function grouping(s: string): { clause: string; rest: string } | null {
  const [head, word] = /^\s*(by|without)\s*\(/i.exec(s) ?? [];
  if (head === undefined || word === undefined) return null; // no match: the group takes part in every one
  const open = head.length - 1;
  const end = closing(s, open);
  if (end < 0 || /[()"'`]/.test(s.slice(open + 1, end))) return null;
  return { clause: `${word.toLowerCase()} (${s.slice(open + 1, end).trim()})`, rest: s.slice(end + 1) };
}

/**
 * PromQL for the time of each sample of `query` (seconds, labelled like the query's samples), or
 * null when the query's shape does not keep its inputs' times (see above).
 */
export function sampleTimeQuery(query: string): string | null {
  const s = query.trim();
  if (isSelector(s)) return `timestamp(${s})`;
  if (s.startsWith('(') && closing(s, 0) === s.length - 1) return sampleTimeQuery(s.slice(1, -1));
  const [head, name] = /^([a-zA-Z_]+)\s*/.exec(s) ?? [];
  if (head === undefined || name === undefined || !AGGREGATIONS.has(name.toLowerCase())) return null;
  let rest = s.slice(head.length);
  let clause = '';
  const before = grouping(rest);
  if (before) {
    clause = before.clause;
    rest = before.rest.trimStart();
  }
  if (!rest.startsWith('(')) return null;
  const end = closing(rest, 0);
  if (end < 0) return null;
  const inner = rest.slice(1, end);
  let after = rest.slice(end + 1);
  if (clause === '') {
    const g = grouping(after);
    if (g) {
      clause = g.clause;
      after = g.rest;
    }
  }
  if (after.trim() !== '') return null;
  const time = sampleTimeQuery(inner);
  return time === null ? null : `min${clause === '' ? '' : ` ${clause}`} (${time})`;
}

/** The one query that answers both values and times, or null when the times are not knowable. */
export function withSampleTimes(query: string): string | null {
  const time = sampleTimeQuery(query);
  if (time === null) return null;
  return `label_replace((${query}), "${PART_LABEL}", "value", "", "") or label_replace(${time}, "${PART_LABEL}", "time", "", "")`;
}

/** The key that pairs a value with its time: the labels without the metric name and the part. */
export function pairKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.keys(labels)
      .filter((k) => k !== '__name__' && k !== PART_LABEL)
      .sort()
      .map((k) => [k, labels[k]]),
  );
}
