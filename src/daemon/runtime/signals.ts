// The signals the daemon handles, and why:
// - SIGTERM: the service manager (systemd, Kubernetes) stops us: finish in-flight requests (up to
//   api.timeout and a second, shutdown.ts stopGraceMs), exit 0 within shutdown.ts stopTimeoutMs.
// - SIGINT: Ctrl-C in a terminal: the same graceful stop; a second one forces the exit. Under
//   `npm start` one Ctrl-C arrives twice (the terminal signals npm and the daemon, and npm passes
//   its own on): a repeat within REPEAT_MS of the first is that same signal, not a second one.
//   The process stays until REPEAT_MS after the first, so a repeat still on its way finds the
//   handler: one arriving while the process exits finds the default action, and npm, seeing its
//   script killed by SIGINT, reported the stop as a kill (exit by signal, not 0).
// - SIGHUP: the conventional "re-read your config".
import type { DaemonLogger } from '../model/logger.js';
import type { Daemon } from './daemon.js';
import { stopGraceMs, stopWithinMs } from './shutdown.js';

export interface SignalOptions {
  /** The stop's grace; default the daemon's (stopGraceMs: api.timeout and a second). */
  readonly timeoutMs?: number;
  readonly logger: DaemonLogger;
  /** Called once the daemon has stopped (or a second signal forces it). */
  readonly exit: (code: number) => void;
}

/** A signal this soon after the first is the same one delivered twice, not a second. */
export const REPEAT_MS = 1_000;

export function handleSignals(daemon: Daemon, { timeoutMs, logger, exit }: SignalOptions): () => void {
  let stopping = false;
  let firstAt = 0;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping && Date.now() - firstAt < REPEAT_MS) return;
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      exit(1);
      return;
    }
    stopping = true;
    firstAt = Date.now();
    const graceMs = timeoutMs ?? stopGraceMs(daemon.config());
    // the one number of a stop (shutdown.ts stopTimeoutMs: the service managers' stop timeout)
    const withinMs = stopWithinMs(graceMs);
    logger.info(
      { signal, stopTimeoutMs: withinMs },
      `stopping: finishing in-flight requests; the daemon exits within ${withinMs / 1000} s`,
    );
    daemon.stop({ timeoutMs: graceMs }).then(
      () => {
        const repeatLeftMs = firstAt + REPEAT_MS - Date.now();
        if (repeatLeftMs > 0) setTimeout(() => exit(0), repeatLeftMs);
        else exit(0);
      },
      (err: unknown) => {
        logger.error({ err: (err as Error).message }, 'stop failed');
        exit(1);
      },
    );
  };
  const reload = () => {
    logger.info({ signal: 'SIGHUP' }, 'reloading config');
    void daemon.reload();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGHUP', reload);
  return () => {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGHUP', reload);
  };
}
