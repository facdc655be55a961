// Outcomes -> history: subscribes to the daemon's `outcome` event and appends each outcome to its
// pipe's list. An append is never awaited by the emitter, so a slow or absent Redis never holds up
// a scaling decision; while Redis is away writes wait in ioredis' offline queue, and beyond
// MAX_PENDING they are dropped and counted rather than growing the heap without bound.
import type { Outcome } from './outcomes.js';
import type { HistoryLimits, HistoryStore } from './store.js';

/** The slice of the daemon's emitter the recorder listens to. */
export interface OutcomeSource {
  on(event: 'outcome', listener: (o: Outcome) => void): unknown;
  off(event: 'outcome', listener: (o: Outcome) => void): unknown;
}

export const MAX_PENDING = 10_000;

export interface HistoryRecorder {
  /** Resolves when every append started so far has settled. */
  flush(): Promise<void>;
  /** Outcomes not stored (Redis refused the write, or too many were waiting). */
  dropped(): number;
  close(): void;
}

export function recordHistory(
  source: OutcomeSource,
  store: HistoryStore,
  limits: () => HistoryLimits,
  onError: (err: Error) => void = () => {},
): HistoryRecorder {
  const pending = new Set<Promise<unknown>>();
  let dropped = 0;
  const listener = (o: Outcome): void => {
    if (o.outcome === 'test') return;
    if (pending.size >= MAX_PENDING) {
      dropped++;
      return;
    }
    const p = store.append(o, limits()).then(
      () => undefined,
      (err: unknown) => {
        dropped++;
        onError(err instanceof Error ? err : new Error(String(err)));
      },
    );
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };
  source.on('outcome', listener);
  return {
    async flush() {
      await Promise.all([...pending]);
    },
    dropped: () => dropped,
    close: () => source.off('outcome', listener),
  };
}
