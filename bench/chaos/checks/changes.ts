// What every check reads of a run besides the audit lines: the pipes, the Redis restarts, the
// changes answered 200 among the observer's PATCHes, and how an example is written.
import type { ScalingField, ScalingValues } from '../../../src/api/index.js';
import type { SentPatch } from '../observer.js';
import type { RedisRestart } from '../scenario.js';

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

/** The replica SIGKILLed in the run (its label on the observer's requests) and the instant. */
export interface KilledReplica {
  readonly replica: string;
  readonly at: number | null;
}

/** How long before the kill an answer the observer handed over may still be on its way to the
 *  sender's record and line (read off the socket, parsed, written to Redis, logged): 250 ms on a
 *  loaded machine. A fresh-clone run had one answered 6 ms before the kill, with no line. */
export const IN_FLIGHT_MS = 250;

/** Answered to the killed replica after its SIGKILL, or so shortly before it that the answer was
 *  still on its way to its record: no process read it (or may not have). The replica started again
 *  runs under another label. */
export function answeredToKilled(
  p: Pick<SentPatch, 'replica' | 'at' | 'answeredAt'>,
  kill: KilledReplica | undefined,
  inFlightMs = IN_FLIGHT_MS,
): boolean {
  if (kill === undefined || kill.at === null || p.replica !== kill.replica) return false;
  return (p.answeredAt ?? p.at) >= kill.at - inFlightMs;
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

/** An instant as its time of day with ms (UTC), `-` for none. */
export const iso = (t: number | null | undefined) => (t == null ? '-' : new Date(t).toISOString().slice(11, 23));
export const show = (v: unknown) => JSON.stringify(v);

/** How many examples a check keeps of each kind of failure. */
export const EXAMPLES = 8;
