// Check 2, every change answered 200 is recorded exactly once in the audit log, by its
// Idempotency-Key: a `scaling applied` line, or (its answer lost) a `scaling landed late` line; a
// 200 that still comes after that is `outcomeReported: landed_late` and not counted again; or, when
// the read could not tell whether it landed (its values explained by an earlier send), an
// `outcome_unknown` line, counted only when no line of its 200 names the key. Set apart: a 200
// that its sender never recorded (answered after its SIGKILL, or so shortly before it that the answer
// was still on its way to the sender's record) and whose intent, the one trace of it, went with an
// empty Redis restart before a read could settle it: no daemon can know of it.
import type { SentPatch } from '../observer.js';
import type { AuditRecord } from './audit-lines.js';
import {
  answeredToKilled,
  changes200,
  EXAMPLES,
  iso,
  show,
  type KilledReplica,
  type PipeRef,
  type RestartEvent,
} from './changes.js';

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
  /** With no line, and not counted as missing: answered 200 to its sender after the SIGKILL, or
   *  within `inFlightMs` before it (no process recorded the answer), and its intent lost to an empty
   *  Redis restart within `settleMs`. */
  readonly unreceived: number;
  readonly unreceivedExamples: readonly string[];
}

/** The run's SIGKILL and Redis restarts, for the changes no daemon can know of. */
export interface RecordedContext {
  readonly kill: KilledReplica;
  readonly restarts: readonly RestartEvent[];
  /** How soon after its answer a read settles such a change with its data kept: the dead sender's
   *  lock (10 s), a stalled check (5 s), its request's time (api.timeout, 10 s) and the read. */
  readonly settleMs?: number;
  /** changes.ts IN_FLIGHT_MS unless given. */
  readonly inFlightMs?: number;
}

/** Answered as its sender died (after, or still on its way), its intent wiped before a read could
 *  settle it. */
function unreceivable(p: SentPatch, ctx: RecordedContext | undefined): boolean {
  if (ctx === undefined || !answeredToKilled(p, ctx.kill, ctx.inFlightMs)) return false;
  const answeredAt = p.answeredAt ?? p.at;
  const settleMs = ctx.settleMs ?? 30_000;
  return ctx.restarts.some((r) => r.kind === 'empty' && r.downAt >= answeredAt && r.downAt <= answeredAt + settleMs);
}

export function recordedOnce(
  patches: readonly SentPatch[],
  audit: readonly AuditRecord[],
  pipes: readonly PipeRef[],
  context?: RecordedContext,
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
  let unreceived = 0;
  const unreceivedExamples: string[] = [];
  const keys = new Set<string>();
  for (const p of answered) {
    const key = p.idempotencyKey ?? '';
    keys.add(key);
    const lines = counted.get(key) ?? unknown.get(key) ?? [];
    const what = `${nameOf.get(p.pipeId) ?? p.pipeId} ${show(p.body)} key ${key} sent ${iso(p.at)} answered ${iso(p.answeredAt)}`;
    if (lines.length === 0 && unreceivable(p, context)) {
      unreceived += 1;
      if (unreceivedExamples.length < EXAMPLES) unreceivedExamples.push(`${what} (sent by ${p.replica ?? '?'})`);
    } else if (lines.length === 0) {
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
    unreceived,
    unreceivedExamples,
  };
}
