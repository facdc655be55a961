// What a chaos run must show beyond convergence, as pure functions over what was recorded: the
// observer's scaling PATCHes (with each 200's answer), the replicas' audit lines, the history the
// replicas left in Redis and the cloud's count of its real limiter's 429s.
//  1. real 429s per key: the limiter's own, not the injected ones; the daemon's budget must keep
//     every key under the platform's limit. Each is placed in its key's window among the requests
//     the observer passed on (which replica sent what).
//  2. every change answered 200 is recorded exactly once in the audit log, by its Idempotency-Key:
//     a `scaling applied` line, or (its answer lost) a `scaling landed late` line; a 200 that still
//     comes after that is `outcomeReported: landed_late` and not counted again; or, when the read
//     could not tell whether it landed (its values explained by an earlier send), an
//     `outcome_unknown` line, counted only when no line of its 200 names the key.
//  3. each pipe's history holds one change entry (applied, landed_late) per change answered 200
//     since the last empty Redis restart (the history went with it).
//  4. window verdicts the answers contradict: a `missed` whose target the pipe's last answer
//     before the boundary showed in force, a `met` no answer by the boundary shows; and starts
//     given more than one verdict.
//  5. drift the daemon reported of its own change: a drift whose values are the daemon's last
//     change answered 200.
import { SCALING_FIELDS, type ScalingField, type ScalingValues } from '../../src/api/index.js';
import type { LimitedRequest } from '../../src/cloud/index.js';
import type { HistoryEntry } from '../../src/history/index.js';
import type { SentPatch, SentRequest } from './observer.js';
import type { RedisRestart } from './scenario.js';

/** What the checks take of a pipe: its config name and its id in the cloud. */
export interface PipeRef {
  readonly name: string;
  readonly pipeId: string;
}

/** A Redis restart as it happened: down at `downAt`, ready again at `upAt`. */
export interface RestartEvent {
  readonly kind: RedisRestart;
  readonly downAt: number;
  readonly upAt: number;
}

/** An audit line (or drift line) of a replica's JSON log, the members the checks read. */
export type AuditRecord =
  | {
      readonly kind: 'applied';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly idempotencyKey?: string;
      readonly outcomeReported?: string;
      readonly after?: ScalingValues;
    }
  | {
      readonly kind: 'landed_late' | 'outcome_unknown';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly idempotencyKey?: string;
      readonly after?: ScalingValues;
    }
  | {
      readonly kind: 'verdict';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly verdict: string;
      readonly boundary: number;
      readonly target: ScalingValues;
      readonly confirmedAt?: number;
      readonly reason?: string;
    }
  | {
      readonly kind: 'drift';
      readonly replica: string;
      readonly time: number;
      readonly pipe: string;
      readonly expected: ScalingValues;
      readonly actual: ScalingValues;
    };

const DRIFT_MESSAGE = 'pipe scaling drifted from what was applied';

function values(v: unknown): ScalingValues {
  const out: ScalingValues = {};
  if (v === null || typeof v !== 'object') return out;
  for (const f of SCALING_FIELDS) {
    const n = (v as Record<string, unknown>)[f];
    if (typeof n === 'number') out[f] = n;
  }
  return out;
}

const ms = (iso: unknown): number | undefined => (typeof iso === 'string' ? Date.parse(iso) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The audit records of one replica's output lines (other lines are skipped). */
export function auditRecords(lines: readonly string[], replica: string): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    const pipe = str(rec.pipe);
    const time = ms(rec.time) ?? (typeof rec.time === 'number' ? rec.time : NaN);
    if (pipe === undefined || !Number.isFinite(time)) continue;
    const key = str(rec.idempotencyKey);
    const common = { replica, time, pipe, ...(key !== undefined ? { idempotencyKey: key } : {}) };
    if (rec.msg === DRIFT_MESSAGE) {
      out.push({ kind: 'drift', replica, time, pipe, expected: values(rec.expected), actual: values(rec.actual) });
    } else if (rec.audit !== true) {
      continue;
    } else if (typeof rec.verdict === 'string') {
      const boundary = ms(rec.boundary);
      if (boundary === undefined) continue;
      const confirmedAt = ms(rec.confirmedAt);
      const reason = str(rec.reason);
      out.push({
        kind: 'verdict',
        replica,
        time,
        pipe,
        verdict: rec.verdict,
        boundary,
        target: values(rec.target),
        ...(confirmedAt !== undefined ? { confirmedAt } : {}),
        ...(reason !== undefined ? { reason } : {}),
      });
    } else if (rec.result === 'applied') {
      const reported = str(rec.outcomeReported);
      out.push({
        kind: 'applied',
        ...common,
        after: values(rec.after),
        ...(reported !== undefined ? { outcomeReported: reported } : {}),
      });
    } else if (rec.result === 'landed_late' || rec.result === 'outcome_unknown') {
      out.push({ kind: rec.result, ...common, after: values(rec.after) });
    }
  }
  return out;
}

/** A PATCH with at least one value: a change (an empty one is a read). */
export function isChange(p: Pick<SentPatch, 'body'>): boolean {
  return Object.values(p.body).some((v) => v !== null && v !== undefined);
}

/** Every field of `target` is shown at or above its value. */
export function atTarget(shown: ScalingValues, target: ScalingValues): boolean {
  return (Object.keys(target) as ScalingField[]).every((f) => {
    const want = target[f];
    const have = shown[f];
    return want === undefined || (have !== undefined && have >= want);
  });
}

/** The changes answered 200: one per Idempotency-Key (its first 200), oldest first. */
export function changes200(patches: readonly SentPatch[]): SentPatch[] {
  const seen = new Set<string>();
  const out: SentPatch[] = [];
  for (const p of patches) {
    if (p.status !== 200 || !isChange(p)) continue;
    const key = p.idempotencyKey ?? `no-key:${p.pipeId}:${p.at}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out.sort((a, b) => (a.answeredAt ?? a.at) - (b.answeredAt ?? b.at));
}

const iso = (t: number | null | undefined) => (t == null ? '-' : new Date(t).toISOString().slice(11, 23));
const show = (v: unknown) => JSON.stringify(v);

// ---------------------------------------------------------------------------------------------
// 1. real 429s per key

export interface LimitedCheck {
  readonly total: number;
  /** Per key (its config name, else its id). */
  readonly perKey: Readonly<Record<string, number>>;
  /** Each 429 the cloud kept (the first LIMITED_EXAMPLES), placed in its key's window: the request
   *  refused and the replica that sent it, and the key's requests in that window per replica. */
  readonly examples: readonly string[];
}

const LIMITED_EXAMPLES = 10;

/** The cloud's real-limiter 429s per key id (stats().limited), named by the config's key names;
 *  each one it kept (stats().limitedRequests) placed among the observer's `requests`. */
export function realLimited(
  limited: Readonly<Record<string, number>>,
  keyNames: Readonly<Record<string, string>>,
  refused: readonly LimitedRequest[] = [],
  requests: readonly SentRequest[] = [],
): LimitedCheck {
  const perKey: Record<string, number> = {};
  for (const name of Object.values(keyNames)) perKey[name] = 0;
  let total = 0;
  for (const [id, n] of Object.entries(limited)) {
    const name = keyNames[id] ?? id;
    perKey[name] = (perKey[name] ?? 0) + n;
    total += n;
  }
  const examples = refused.slice(0, LIMITED_EXAMPLES).map((r) => placeLimited(r, keyNames, requests));
  return { total, perKey, examples };
}

/** The key's requests the observer passed on between `from` and `to` (its instants, epoch ms). */
export function keyRequests(requests: readonly SentRequest[], keyId: string, from: number, to: number): SentRequest[] {
  return requests.filter((q) => q.keyId === keyId && q.at >= from && q.at <= to);
}

/** The observer's record of a refused request: same key, method and path, answered 429, the
 *  nearest before the cloud's instant (the observer sees it first). */
export function refusedRequest(r: LimitedRequest, requests: readonly SentRequest[]): SentRequest | undefined {
  let best: SentRequest | undefined;
  for (const q of requests) {
    if (q.keyId !== r.keyId || q.method !== r.method || q.path !== r.path || q.status !== 429) continue;
    if (q.at > r.at) continue;
    if (!best || q.at > best.at) best = q;
  }
  return best;
}

const counted = (items: readonly string[]): string => {
  const n = new Map<string, number>();
  for (const i of items) n.set(i, (n.get(i) ?? 0) + 1);
  return [...n].map(([k, c]) => `${k} ${c}`).join(', ');
};

/** One line: the 429's key and instant, the request it refused and its replica, and the key's
 *  requests in the cloud's window (from its start to the 429) by replica and by status. */
export function placeLimited(
  r: LimitedRequest,
  keyNames: Readonly<Record<string, string>>,
  requests: readonly SentRequest[],
): string {
  const path = r.path.replace(/^\/v1\/organizations\/[^/]+\/services\/[^/]+/, '…');
  const by = refusedRequest(r, requests)?.replica ?? '?';
  const inWindow = keyRequests(requests, r.keyId, r.windowStart, r.at);
  return (
    `${keyNames[r.keyId] ?? r.keyId} at ${iso(r.at)}: ${r.method} ${path} (request ${r.requestId}) by ${by}; ` +
    `window from ${iso(r.windowStart)}: ${inWindow.length} requests of the key reached the observer in it ` +
    `(by replica: ${counted(inWindow.map((q) => q.replica ?? '?')) || '-'}; answered: ${counted(inWindow.map((q) => String(q.status ?? 'open'))) || '-'})`
  );
}

// ---------------------------------------------------------------------------------------------
// 2. every change answered 200, recorded once in the audit log

export interface RecordedOnceCheck {
  /** Changes answered 200 (distinct Idempotency-Keys). */
  readonly answered: number;
  readonly once: number;
  /** Answered 200, with no audit line of it (its replica killed in between, or a gap). */
  readonly missing: readonly string[];
  readonly missingCount: number;
  /** Counted more than once (applied twice, or applied and landed_late). */
  readonly twice: readonly string[];
  readonly twiceCount: number;
  /** Of the recorded ones, how many by a landed_late line. */
  readonly landedLate: number;
  /** Of the recorded ones, how many by an outcome_unknown line only (a read settled the change
   *  without knowing whether it landed, and no line of its 200 came). */
  readonly outcomeUnknown: number;
  /** Lines of a change no 200 answered (landed_late of a change whose values were there anyway). */
  readonly without200: number;
}

const EXAMPLES = 8;

export function recordedOnce(
  patches: readonly SentPatch[],
  audit: readonly AuditRecord[],
  pipes: readonly PipeRef[],
): RecordedOnceCheck {
  const nameOf = new Map(pipes.map((p) => [p.pipeId.toLowerCase(), p.name]));
  const counted = new Map<string, AuditRecord[]>();
  // a change settled by a read that could not tell whether it landed: its record unless a line of
  // its outcome names its key too (its late 200 came after all)
  const unknown = new Map<string, AuditRecord[]>();
  for (const a of audit) {
    if (a.kind === 'outcome_unknown' && a.idempotencyKey !== undefined)
      unknown.set(a.idempotencyKey, [...(unknown.get(a.idempotencyKey) ?? []), a]);
    if (a.kind !== 'applied' && a.kind !== 'landed_late') continue;
    if (a.kind === 'applied' && a.outcomeReported !== undefined) continue;
    if (a.idempotencyKey === undefined) continue;
    const list = counted.get(a.idempotencyKey) ?? [];
    list.push(a);
    counted.set(a.idempotencyKey, list);
  }
  const answered = changes200(patches);
  const missing: string[] = [];
  const twice: string[] = [];
  let missingCount = 0;
  let twiceCount = 0;
  let once = 0;
  let landedLate = 0;
  let outcomeUnknown = 0;
  const keys = new Set<string>();
  for (const p of answered) {
    const key = p.idempotencyKey ?? '';
    keys.add(key);
    const lines = counted.get(key) ?? unknown.get(key) ?? [];
    const what = `${nameOf.get(p.pipeId) ?? p.pipeId} ${show(p.body)} key ${key} sent ${iso(p.at)} answered ${iso(p.answeredAt)}`;
    if (lines.length === 0) {
      missingCount += 1;
      if (missing.length < EXAMPLES) missing.push(what);
    } else if (lines.length > 1) {
      twiceCount += 1;
      if (twice.length < EXAMPLES)
        twice.push(`${what}: ${lines.map((l) => `${l.kind} by ${l.replica} at ${iso(l.time)}`).join(', ')}`);
    } else {
      once += 1;
      if (lines[0]!.kind === 'landed_late') landedLate += 1;
      if (lines[0]!.kind === 'outcome_unknown') outcomeUnknown += 1;
    }
  }
  const without200 = [...counted.keys()].filter((k) => !keys.has(k)).length;
  return {
    answered: answered.length,
    once,
    missing,
    missingCount,
    twice,
    twiceCount,
    landedLate,
    outcomeUnknown,
    without200,
  };
}

// ---------------------------------------------------------------------------------------------
// 3. history's change entries vs the changes answered 200

export interface HistoryCheck {
  /** The empty restart after which the history is compared (null: none, the whole run). */
  readonly since: number | null;
  readonly pipes: number;
  /** Changes answered 200 since then. */
  readonly answered: number;
  /** Changes answered 200 around the restart (either way). */
  readonly around: number;
  /** Change entries (applied, landed_late; their counts) in the history. */
  readonly entries: number;
  readonly differ: number;
  readonly examples: readonly string[];
}

/** History entries that are a change answered 200 (a repeat collapsed into one entry counts its count). */
const CHANGE_OUTCOMES = new Set(['applied', 'landed_late']);

/**
 * Per pipe, the history's change entries against the changes answered 200 after the last empty
 * Redis restart. A change answered within `graceMs` of that restart (before it went down, or
 * before it was back) may or may not have reached the new history: either count passes.
 */
export function historyVsAnswers(
  patches: readonly SentPatch[],
  history: ReadonlyMap<string, readonly HistoryEntry[]>,
  pipes: readonly PipeRef[],
  restarts: readonly RestartEvent[],
  graceMs = 5_000,
): HistoryCheck {
  const wipe = restarts.filter((r) => r.kind === 'empty').at(-1) ?? null;
  const sureFrom = wipe ? wipe.upAt + graceMs : -Infinity;
  const maybeFrom = wipe ? wipe.downAt - graceMs : -Infinity;
  const sure = new Map<string, number>();
  const maybe = new Map<string, number>();
  for (const p of changes200(patches)) {
    const t = p.answeredAt ?? p.at;
    if (t >= sureFrom) sure.set(p.pipeId, (sure.get(p.pipeId) ?? 0) + 1);
    else if (t >= maybeFrom) maybe.set(p.pipeId, (maybe.get(p.pipeId) ?? 0) + 1);
  }
  let answered = 0;
  let around = 0;
  let entries = 0;
  let differ = 0;
  const examples: string[] = [];
  for (const pipe of pipes) {
    const id = pipe.pipeId.toLowerCase();
    const s = sure.get(id) ?? 0;
    const m = maybe.get(id) ?? 0;
    const h = (history.get(pipe.name) ?? [])
      .filter((e) => CHANGE_OUTCOMES.has(e.outcome))
      .reduce((n, e) => n + e.count, 0);
    answered += s;
    around += m;
    entries += h;
    if (h < s || h > s + m) {
      differ += 1;
      if (examples.length < EXAMPLES)
        examples.push(
          `${pipe.name}: ${h} change entries, ${s} changes answered 200${m > 0 ? ` (+${m} around the restart)` : ''}`,
        );
    }
  }
  return { since: wipe?.upAt ?? null, pipes: pipes.length, answered, around, entries, differ, examples };
}

// ---------------------------------------------------------------------------------------------
// 4. verdicts against the answers

export interface VerdictCheck {
  /** Verdicts given, by name (met, late, missed, excluded). */
  readonly given: Readonly<Record<string, number>>;
  /** Of the met/late/missed ones, those of starts after the last empty Redis restart. */
  readonly afterWipe: number;
  readonly missedShown: number;
  readonly metUnshown: number;
  /** Starts (pipe and boundary) given more than one verdict. */
  readonly twice: number;
  /** The same, of starts after the last empty restart. */
  readonly contradictedAfterWipe: number;
  readonly examples: readonly string[];
}

interface Shown {
  readonly at: number;
  /** What the answer showed (a field it had as 0/null, a change settling, left out). */
  readonly shown: ScalingValues;
  /** The same with each field left out as the last answer that had it showed it: what the daemon
   *  knew (it reads such a field as not known yet, not as changed); possibly stale. */
  readonly known: ScalingValues;
}

/** What each pipe's 200 answers showed in force, by the instant the answer was complete. */
export function answersByPipe(patches: readonly SentPatch[]): Map<string, Shown[]> {
  const out = new Map<string, Shown[]>();
  const sorted = patches
    .filter((p) => p.status === 200 && p.shown !== undefined)
    .sort((a, b) => (a.answeredAt ?? a.at) - (b.answeredAt ?? b.at));
  for (const p of sorted) {
    const list = out.get(p.pipeId) ?? [];
    const shown = p.shown ?? {};
    list.push({ at: p.answeredAt ?? p.at, shown, known: { ...list.at(-1)?.known, ...shown } });
    out.set(p.pipeId, list);
  }
  return out;
}

function lastBy(list: readonly Shown[] | undefined, t: number): Shown | undefined {
  let last: Shown | undefined;
  for (const s of list ?? []) {
    if (s.at > t) break;
    last = s;
  }
  return last;
}

/**
 * A `missed` is contradicted when the pipe's last answer complete by the boundary showed every
 * field of its target in force, and no change answered 200 by the boundary could take effect after
 * that answer (`propagationMs`); a `met` is unsupported when what the answers complete by the
 * boundary (plus `slackMs`: the cloud read the values before it sent them) showed, a field an
 * answer left out as the answer before had it, was not at target. Both lean to the daemon's side.
 */
export function verdictsVsAnswers(
  patches: readonly SentPatch[],
  audit: readonly AuditRecord[],
  pipes: readonly PipeRef[],
  restarts: readonly RestartEvent[],
  propagationMs = 0,
  slackMs = 100,
): VerdictCheck {
  const idOf = new Map(pipes.map((p) => [p.name, p.pipeId.toLowerCase()]));
  const answers = answersByPipe(patches);
  // with a propagation, a change answered 200 shows in no answer until it takes effect: an answer
  // older than that effect does not tell what was in force at the boundary
  const changeAnswers = new Map<string, number[]>();
  if (propagationMs > 0)
    for (const p of changes200(patches)) {
      const list = changeAnswers.get(p.pipeId) ?? [];
      list.push(p.answeredAt ?? p.at);
      changeAnswers.set(p.pipeId, list);
    }
  const pendingAt = (pipeId: string, shownAt: number, boundary: number) =>
    (changeAnswers.get(pipeId) ?? []).some((t) => t <= boundary && t + propagationMs >= shownAt);
  const wipe = restarts.filter((r) => r.kind === 'empty').at(-1) ?? null;
  const given: Record<string, number> = {};
  const starts = new Map<string, number>();
  let missedShown = 0;
  let metUnshown = 0;
  let afterWipe = 0;
  let contradictedAfterWipe = 0;
  const examples: string[] = [];
  for (const a of audit) {
    if (a.kind !== 'verdict') continue;
    given[a.verdict] = (given[a.verdict] ?? 0) + 1;
    const start = `${a.pipe}@${a.boundary}`;
    starts.set(start, (starts.get(start) ?? 0) + 1);
    if (a.verdict !== 'met' && a.verdict !== 'missed' && a.verdict !== 'late') continue;
    const after = wipe !== null && a.boundary > wipe.upAt;
    if (after) afterWipe += 1;
    const pipeId = idOf.get(a.pipe) ?? '';
    const list = answers.get(pipeId);
    const at = lastBy(list, a.boundary);
    let wrong: string | null = null;
    if (a.verdict === 'missed' && at && atTarget(at.shown, a.target) && !pendingAt(pipeId, at.at, a.boundary)) {
      missedShown += 1;
      wrong = `missed (${a.reason ?? '?'}), yet the answer at ${iso(at.at)} showed ${show(at.shown)}`;
    } else if (a.verdict === 'met') {
      const late = lastBy(list, a.boundary + slackMs);
      if (!(at && atTarget(at.known, a.target)) && !(late && atTarget(late.known, a.target))) {
        metUnshown += 1;
        wrong = `met (confirmed ${iso(a.confirmedAt)}), yet the last answer by then ${at ? `at ${iso(at.at)} showed ${show(at.shown)} (known ${show(at.known)})` : 'was none'}`;
      }
    }
    if (wrong === null) continue;
    if (after) contradictedAfterWipe += 1;
    if (examples.length < EXAMPLES)
      examples.push(`${a.pipe} start ${iso(a.boundary)} target ${show(a.target)} (by ${a.replica}): ${wrong}`);
  }
  const twice = [...starts.values()].filter((n) => n > 1).length;
  for (const [start, n] of starts)
    if (n > 1 && examples.length < EXAMPLES) {
      const [pipe, b] = start.split('@');
      examples.push(`${pipe} start ${iso(Number(b))}: ${n} verdicts`);
    }
  return { given, afterWipe, missedShown, metUnshown, twice, contradictedAfterWipe, examples };
}

// ---------------------------------------------------------------------------------------------
// 5. drift of the daemon's own change

export interface DriftCheck {
  readonly reported: number;
  /** Drift whose values are the daemon's own last change answered 200. */
  readonly own: number;
  readonly examples: readonly string[];
}

export function ownDrift(
  patches: readonly SentPatch[],
  audit: readonly AuditRecord[],
  pipes: readonly PipeRef[],
): DriftCheck {
  const idOf = new Map(pipes.map((p) => [p.name, p.pipeId.toLowerCase()]));
  const byPipe = new Map<string, SentPatch[]>();
  for (const p of changes200(patches)) {
    const list = byPipe.get(p.pipeId) ?? [];
    list.push(p);
    byPipe.set(p.pipeId, list);
  }
  let reported = 0;
  let own = 0;
  const examples: string[] = [];
  for (const a of audit) {
    if (a.kind !== 'drift') continue;
    reported += 1;
    let last: SentPatch | undefined;
    for (const p of byPipe.get(idOf.get(a.pipe) ?? '') ?? []) {
      if ((p.answeredAt ?? p.at) > a.time) break;
      last = p;
    }
    if (!last) continue;
    const body = Object.entries(last.body).filter(([, v]) => v !== null && v !== undefined);
    const mine = body.length > 0 && body.every(([f, v]) => a.actual[f as ScalingField] === v);
    if (!mine) continue;
    own += 1;
    if (examples.length < EXAMPLES)
      examples.push(
        `${a.pipe} at ${iso(a.time)} (by ${a.replica}): drift ${show(a.expected)} -> ${show(a.actual)}, the daemon's change ${show(last.body)} key ${last.idempotencyKey ?? '-'} answered 200 at ${iso(last.answeredAt)}`,
      );
  }
  return { reported, own, examples };
}

// ---------------------------------------------------------------------------------------------

export interface ChaosChecks {
  readonly limited: LimitedCheck;
  readonly recorded: RecordedOnceCheck;
  readonly history: HistoryCheck;
  readonly verdicts: VerdictCheck;
  readonly drift: DriftCheck;
}

/** Which checks a run is held to (a check that does not hold yet can be printed, not failed). */
export type CheckName = 'limited' | 'recorded' | 'history' | 'verdicts' | 'drift';
export const CHECK_NAMES: readonly CheckName[] = ['limited', 'recorded', 'history', 'verdicts', 'drift'];

/** One line per check that failed, with its examples. */
export function checkFailures(c: ChaosChecks, held: readonly CheckName[] = CHECK_NAMES): string[] {
  const out: string[] = [];
  const more = (examples: readonly string[]) => (examples.length > 0 ? `:\n    ${examples.join('\n    ')}` : '');
  const on = (n: CheckName) => held.includes(n);
  if (on('limited') && c.limited.total > 0)
    out.push(
      `429s of the real limiter: ${Object.entries(c.limited.perKey)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}${more(c.limited.examples)}`,
    );
  if (on('recorded') && (c.recorded.missingCount > 0 || c.recorded.twiceCount > 0))
    out.push(
      `changes answered 200 not recorded once in the audit log: ${c.recorded.missingCount} with no line, ${c.recorded.twiceCount} twice${more([...c.recorded.missing, ...c.recorded.twice])}`,
    );
  if (on('history') && c.history.differ > 0)
    out.push(
      `history's change entries differ from the changes answered 200 on ${c.history.differ} pipes${more(c.history.examples)}`,
    );
  if (on('verdicts') && (c.verdicts.missedShown > 0 || c.verdicts.metUnshown > 0 || c.verdicts.twice > 0))
    out.push(
      `verdicts the answers contradict: ${c.verdicts.missedShown} missed shown at target, ${c.verdicts.metUnshown} met not shown, ${c.verdicts.twice} starts with two verdicts${more(c.verdicts.examples)}`,
    );
  if (on('drift') && c.drift.own > 0)
    out.push(`drift reported of the daemon's own change: ${c.drift.own}${more(c.drift.examples)}`);
  return out;
}
