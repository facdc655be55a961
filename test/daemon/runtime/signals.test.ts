// A stop's exit waits out REPEAT_MS from the first signal: under `npm start` a Ctrl-C reaches the
// daemon twice (from the terminal, and again from npm), and the second copy, if it came while the
// process was exiting, found the default action and killed it by SIGINT, which npm then reported
// as its own exit by that signal instead of 0 (seen once in a loaded run of npm-start.test.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handleSignals, type Daemon } from '../../../src/daemon/index.js';
import { REPEAT_MS } from '../../../src/daemon/runtime/signals.js';

afterEach(() => {
  vi.useRealTimers();
});

const quiet = () => undefined;
const logger = { info: quiet, warn: quiet, error: quiet, debug: quiet };

function daemonStopping(after: () => Promise<void>): Daemon {
  return { config: () => ({ api: { timeoutMs: 30_000 } }), stop: after } as unknown as Daemon;
}

describe('the stop a signal starts', () => {
  it('exits 0 no sooner than REPEAT_MS after the first signal, a quick stop included', async () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    const off = handleSignals(
      daemonStopping(async () => undefined),
      { logger, exit: (code) => exits.push(code) },
    );
    try {
      process.emit('SIGINT', 'SIGINT');
      await vi.advanceTimersByTimeAsync(REPEAT_MS - 1);
      // npm's copy of the same Ctrl-C, late: still the same signal, and still handled
      process.emit('SIGINT', 'SIGINT');
      expect(exits).toEqual([]);
      await vi.advanceTimersByTimeAsync(1);
      expect(exits).toEqual([0]);
    } finally {
      off();
    }
  });

  it('exits as soon as a stop that outlasts REPEAT_MS is over', async () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    let finish = () => {};
    const off = handleSignals(
      daemonStopping(() => new Promise<void>((r) => (finish = r))),
      { logger, exit: (code) => exits.push(code) },
    );
    try {
      process.emit('SIGTERM', 'SIGTERM');
      await vi.advanceTimersByTimeAsync(REPEAT_MS + 500);
      expect(exits).toEqual([]);
      finish();
      await vi.advanceTimersByTimeAsync(0);
      expect(exits).toEqual([0]);
    } finally {
      off();
    }
  });
});
