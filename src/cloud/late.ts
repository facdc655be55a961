// The `late` fault: a request held until its client gives up (closes the connection), then carried
// out anyway, as the platform does with a request whose client timed out. The hold is real time
// (the client's timeout is); `settled()` lets a test wait for the held requests instead of sleeping.
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** true once the socket closed (the client gave up); false when `maxMs` passed first. */
export async function holdUntilGone(socket: Socket, maxMs: number): Promise<boolean> {
  if (socket.destroyed) return true;
  const stop = new AbortController();
  try {
    return await Promise.race([
      once(socket, 'close', { signal: stop.signal }).then(
        () => true,
        () => false,
      ),
      sleep(maxMs, false, { signal: stop.signal }).catch(() => false),
    ]);
  } finally {
    stop.abort();
  }
}

export type HeldOutcome<T> =
  | { readonly gone: boolean; readonly ok: true; readonly result: T }
  | { readonly gone: boolean; readonly ok: false; readonly error: unknown };

export class LateHolds {
  readonly #held = new Set<Promise<unknown>>();

  /** Wait for `until`, then run `work` (whether or not the client is still there). */
  run<T>(until: Promise<boolean>, work: () => T): Promise<HeldOutcome<T>> {
    const done = until.then((gone): HeldOutcome<T> => {
      try {
        return { gone, ok: true, result: work() };
      } catch (error) {
        return { gone, ok: false, error };
      }
    });
    this.#held.add(done);
    void done.finally(() => this.#held.delete(done));
    return done;
  }

  /** Resolves once every request held now has been carried out. */
  async settled(): Promise<void> {
    while (this.#held.size > 0) await Promise.all([...this.#held]);
  }
}
