// Check 3, each pipe's history holds one change entry (applied, landed_late) per change answered
// 200 since the last empty Redis restart (the history went with it).
import type { HistoryEntry } from '../../../src/history/index.js';
import type { SentPatch } from '../observer.js';
import { changes200, EXAMPLES, type PipeRef, type RestartEvent } from './changes.js';

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
