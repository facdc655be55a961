// While Redis cannot be reached the daemon waits (every command waits for the connection), so
// nothing else would be said after the first line: an operator reading the log a minute later
// must still see that it is Redis, and which one. The outage is said again after 1 s, 2 s, 4 s...
// and then every 30 s while it lasts ('redis:waiting'), and a reconnection ends it.
import type { DaemonEmitter } from '../model/events.js';

/** The longest wait between two lines of one outage. */
export const OUTAGE_REPEAT_CAP_MS = 30_000;

/** The wait before the n-th repeat (n from 1) of an outage's line: 1 s doubled each time, at most 30 s. */
export function outageRepeatMs(n: number): number {
  return Math.min(1_000 * 2 ** Math.min(Math.max(n, 1) - 1, 15), OUTAGE_REPEAT_CAP_MS);
}

/** Says an outage of Redis again while it lasts. `where` is describeRedis() of the target: never a password. */
export class RedisOutage {
  private timer: NodeJS.Timeout | null = null;
  private since = 0;
  private repeats = 0;

  constructor(
    private readonly emitter: DaemonEmitter,
    private readonly where: string,
    private readonly now: () => number,
  ) {}

  /** A change of readiness; a repeat of the same state changes nothing. */
  status(ready: boolean): void {
    if (ready) {
      this.stop();
      return;
    }
    if (this.timer !== null) return;
    this.since = this.now();
    this.repeats = 0;
    this.schedule();
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    this.repeats += 1;
    // unref: a stop of the daemon is never held up by it
    this.timer = setTimeout(() => {
      this.emitter.emit('redis:waiting', { where: this.where, downForMs: this.now() - this.since });
      this.schedule();
    }, outageRepeatMs(this.repeats)).unref();
  }
}
