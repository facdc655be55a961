// One history entry as the compact string stored in Redis, and back. Memory is the budget here
// (10,000 pipes x 6 weeks in <= 200 MB, bench/history.ts), so an entry is fields joined by the
// ASCII unit separator, times in base 36 and scaling values as "r6c1000m4" (about 120 bytes with
// a requestId, where JSON took about 330). Its identity (everything but times, count and
// requestId) comes first, so the append script collapses a repeat by comparing a prefix.
import { SCALING_FIELDS, type ScalingField, type ScalingValues } from '../api/index.js';
import { printable } from '../api/internal.js';
import type { Outcome } from './outcomes.js';

/** The unit separator: text fields never hold it (control characters are stripped). */
export const SEP = '\x1f';

const CODE: Readonly<Record<ScalingField, string>> = {
  replicas: 'r',
  concurrency: 'n',
  replicaCpuMillicores: 'c',
  replicaMemoryGb: 'm',
};
const FIELD_OF: ReadonlyMap<string, ScalingField> = new Map(SCALING_FIELDS.map((f) => [CODE[f], f]));

/** Longest message and reason kept (a pause's reason is the operator's text). */
export const MAX_MESSAGE = 200;
const MAX_TOKEN = 64;

/** A stored entry, read back: the outcome plus how often it repeated and when. */
export interface HistoryEntry {
  readonly pipe: string;
  readonly outcome: string;
  readonly reason: string;
  /** Epoch ms of the first and the last of the identical outcomes collapsed into this entry. */
  readonly first: number;
  readonly last: number;
  readonly count: number;
  readonly before?: ScalingValues;
  readonly after?: ScalingValues;
  readonly target?: ScalingValues;
  readonly windows?: readonly string[];
  readonly key?: string;
  readonly requestId?: string;
  readonly message?: string;
}

/** Escape sequences and control characters out (they would break the separator and a terminal;
 *  printable(), as status and logs), cut to `max`. */
export function cleanText(s: string, max: number): string {
  const clean = printable(s);
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

export function encodeValues(v: ScalingValues | undefined): string {
  if (!v) return '';
  let s = '';
  for (const f of SCALING_FIELDS) {
    const x = v[f];
    if (typeof x === 'number' && Number.isFinite(x)) s += `${CODE[f]}${x}`;
  }
  return s;
}

export function decodeValues(s: string): ScalingValues | undefined {
  if (s === '') return undefined;
  const out: ScalingValues = {};
  for (const [, code, num] of s.matchAll(/([a-z])(-?\d+(?:\.\d+)?)/g)) {
    const f = FIELD_OF.get(code ?? '');
    if (f) out[f] = Number(num);
  }
  return out;
}

/** The identity of an outcome, ending with the separator: equal identities collapse. */
export function identityOf(o: Outcome): string {
  return [
    o.outcome,
    cleanText(o.reason, MAX_TOKEN),
    encodeValues(o.before),
    encodeValues(o.after),
    encodeValues(o.target),
    (o.windows ?? []).map((w) => cleanText(w, MAX_TOKEN)).join(','),
    cleanText(o.key ?? '', MAX_TOKEN),
    cleanText(o.message ?? '', MAX_MESSAGE),
    '',
  ].join(SEP);
}

export const time36 = (ms: number): string => Math.round(ms).toString(36);

/** The whole stored string of a new entry (count 1). */
export function encodeEntry(o: Outcome): string {
  const t = time36(o.at);
  return `${identityOf(o)}${t}${SEP}${t}${SEP}1${SEP}${cleanText(o.requestId ?? '', MAX_TOKEN)}`;
}

export function decodeEntry(pipe: string, s: string): HistoryEntry | null {
  const p = s.split(SEP);
  if (p.length !== 12) return null;
  const [outcome, reason, before, after, target, windows, key, message, first, last, count, requestId] = p as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const b = decodeValues(before);
  const a = decodeValues(after);
  const g = decodeValues(target);
  return {
    pipe,
    outcome,
    reason,
    first: parseInt(first, 36),
    last: parseInt(last, 36),
    count: Number(count),
    ...(b ? { before: b } : {}),
    ...(a ? { after: a } : {}),
    ...(g ? { target: g } : {}),
    ...(windows !== '' ? { windows: windows.split(',') } : {}),
    ...(key !== '' ? { key } : {}),
    ...(requestId !== '' ? { requestId } : {}),
    ...(message !== '' ? { message } : {}),
  };
}
