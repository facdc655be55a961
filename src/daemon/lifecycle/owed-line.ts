// The audit line a change answered 200 owes, as an outbox: the script that records the 200 stores
// the line in the pipe's record (record.ts OwedLine), its sender writes the line and then deletes
// it, with a write conditioned on it still being there as it stored it. A sender killed between
// the record and the line leaves it owed; a later evaluation or turn of the pipe, on any replica,
// takes it once it is due (a conditioned write that moves its `dueAt` on, so one replica holds it),
// writes it and deletes it the same way (work/owed-lines.ts). Pure: the instant is an argument.
//
// Whoever holds the line (the sender from its answer's instant, a turn from the instant it took
// it) writes it only while its write's reply came within api.timeout of that instant; a holder
// slower than that (a process stalled, Redis slow to answer) writes nothing and leaves it to a
// later turn. The line is due OWED_MARGIN_MS after that: no live holder can still be about to
// write it then, whatever the replicas' clocks differ by (NTP: milliseconds) or its process
// paused between its check and its write (seconds at worst). So it is written once, unless its
// holder dies after writing it and before its delete reaches Redis: then a second time.
import type { DaemonEvents } from '../model/events.js';
import type { OwedDecision, OwedLine } from '../model/record.js';

/** Between a holder's last instant to write the line and the instant another turn may take it. */
export const OWED_MARGIN_MS = 10_000;

/** The line a change's sender owes from `at` (its answer's instant), its request's time `timeoutMs`. */
export function owedLine(id: string, line: OwedDecision, at: number, timeoutMs: number): OwedLine {
  return { id, answeredAt: at, dueAt: at + timeoutMs + OWED_MARGIN_MS, line };
}

/** Its holder writes it only before this instant (its reply came in time); else it leaves it owed. */
export function holderMayWrite(owed: OwedLine, now: number): boolean {
  return now < owed.dueAt - OWED_MARGIN_MS;
}

/** Any turn of the pipe may take it from its `dueAt`: its holder can no longer write it. */
export function owedDue(owed: OwedLine, now: number): boolean {
  return now >= owed.dueAt;
}

/** The line taken at `now` by a turn (its request's time `timeoutMs`): held by that turn as by a sender. */
export function takenAt(owed: OwedLine, now: number, timeoutMs: number): OwedLine {
  return { ...owed, dueAt: now + timeoutMs + OWED_MARGIN_MS };
}

/** The sender's line, as stored, from its `decision` event. */
export function owedDecision(d: DaemonEvents['decision']): OwedDecision {
  return {
    kind: 'applied',
    direction: d.direction,
    reason: d.reason,
    windows: d.windows,
    before: d.before,
    after: d.after,
    ...(d.target !== undefined ? { target: d.target } : {}),
    reasons: d.reasons,
    ...(d.requestId !== undefined ? { requestId: d.requestId } : {}),
    idempotencyKey: d.idempotencyKey ?? '',
  };
}

/** The `decision` event of a line written by a turn other than its sender: `answeredAt` says so. */
export function owedEvent(pipe: string, owed: OwedLine): DaemonEvents['decision'] {
  const { kind, ...line } = owed.line;
  return { pipe, ...line, result: kind, answeredAt: owed.answeredAt };
}
