// Check 4, window verdicts the answers contradict: a `missed` whose target the pipe's last answer
// before the boundary showed in force (one a process read: not an answer handed to the killed
// replica as it died), a `met` no answer by the boundary shows; and starts given more than one
// verdict.
import type { ScalingValues } from '../../../src/api/index.js';
import type { SentPatch } from '../observer.js';
import type { AuditRecord } from './audit-lines.js';
import {
  answeredToKilled,
  atTarget,
  changes200,
  EXAMPLES,
  iso,
  show,
  type KilledReplica,
  type PipeRef,
  type RestartEvent,
} from './changes.js';

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

/** What check 4 takes besides the records. */
export interface VerdictContext {
  /** The cloud's propagation: a change answered 200 takes effect that long after. */
  readonly propagationMs?: number;
  /** How long after the boundary an answer may complete and still support a met (100 ms). */
  readonly slackMs?: number;
  /** The replica SIGKILLed: what was answered to it as it died no process read. */
  readonly kill?: KilledReplica;
  readonly inFlightMs?: number;
}

/**
 * A `missed` is contradicted when the pipe's last answer complete by the boundary that a process
 * read showed every field of its target in force, as did the last answer of all (an answer
 * handed to the killed replica as it died, changes.ts answeredToKilled, told no daemon anything
 * unless its sender's `applied` line names its key, yet it shows what the platform ran), and no change answered 200 by the boundary could take
 * effect after the read one (`propagationMs`); a `met` is unsupported when what the answers
 * complete by the boundary (plus `slackMs`: the cloud read the values before it sent them)
 * showed, a field an answer left out as the answer before had it, was not at target, or a change
 * of ours answered 200 that no answer could show yet was in force by the boundary (its answer plus
 * `propagationMs`) below it. Both lean to the daemon's side.
 */
export function verdictsVsAnswers(
  patches: readonly SentPatch[],
  audit: readonly AuditRecord[],
  pipes: readonly PipeRef[],
  restarts: readonly RestartEvent[],
  context: VerdictContext = {},
): VerdictCheck {
  const { propagationMs = 0, slackMs = 100, kill, inFlightMs } = context;
  const idOf = new Map(pipes.map((p) => [p.name, p.pipeId.toLowerCase()]));
  const answers = answersByPipe(patches);
  // a change answered just before the kill whose applied line its sender wrote was read after all
  const recordedBy = new Set<string | undefined>();
  for (const a of audit) if (a.kind === 'applied' && a.replica === kill?.replica) recordedBy.add(a.idempotencyKey);
  const readAnswers = answersByPipe(
    patches.filter(
      (p) =>
        !answeredToKilled(p, kill, inFlightMs) || (p.idempotencyKey !== undefined && recordedBy.has(p.idempotencyKey)),
    ),
  );
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
  // the changes answered 200, in order: in force by their answer plus the propagation at the
  // latest, and not before their send plus the propagation (no answer before that shows them)
  const carriedOut = new Map<string, SentPatch[]>();
  for (const p of changes200(patches).sort((a, b) => (a.answeredAt ?? a.at) - (b.answeredAt ?? b.at))) {
    const list = carriedOut.get(p.pipeId) ?? [];
    list.push(p);
    carriedOut.set(p.pipeId, list);
  }
  // what the platform certainly ran at the boundary: the last answer's, with every change it
  // could not show yet that was in force by then on top
  const ranAt = (pipeId: string, last: Shown, boundary: number): ScalingValues => {
    let ran: ScalingValues = last.known;
    for (const p of carriedOut.get(pipeId) ?? [])
      if (p.at + propagationMs > last.at && (p.answeredAt ?? p.at) + propagationMs + slackMs <= boundary)
        ran = { ...ran, ...p.body };
    return ran;
  };
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
    const seen = lastBy(readAnswers.get(pipeId), a.boundary);
    if (
      a.verdict === 'missed' &&
      seen &&
      atTarget(seen.shown, a.target) &&
      at &&
      atTarget(at.shown, a.target) &&
      !pendingAt(pipeId, seen.at, a.boundary)
    ) {
      missedShown += 1;
      wrong = `missed (${a.reason ?? '?'}), yet the answer at ${iso(seen.at)} showed ${show(seen.shown)}`;
    } else if (a.verdict === 'met') {
      const late = lastBy(list, a.boundary + slackMs);
      const ranTarget = (s: Shown | undefined) => s !== undefined && atTarget(ranAt(pipeId, s, a.boundary), a.target);
      if (!ranTarget(at) && !ranTarget(late)) {
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
