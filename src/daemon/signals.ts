// The signals the daemon handles, and why:
// - SIGTERM: the service manager (systemd, Kubernetes) stops us: finish in-flight requests (up to
//   api.timeout, shutdown.ts stopGraceMs), exit 0.
// - SIGINT: Ctrl-C in a terminal: the same graceful stop; a second one forces the exit.
// - SIGHUP: the conventional "re-read your config".
import type { DaemonLogger } from './context.js';
import type { Daemon } from './daemon.js';
import { stopGraceMs } from './shutdown.js';

export interface SignalOptions {
  /** The stop's grace; default the daemon's (stopGraceMs: api.timeout and a second). */
  readonly timeoutMs?: number;
  readonly logger: DaemonLogger;
  /** Called once the daemon has stopped (or a second signal forces it). */
  readonly exit: (code: number) => void;
}

export function handleSignals(daemon: Daemon, { timeoutMs, logger, exit }: SignalOptions): () => void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      exit(1);
      return;
    }
    stopping = true;
    const graceMs = timeoutMs ?? stopGraceMs(daemon.config());
    logger.info({ signal, timeoutMs: graceMs }, 'stopping: finishing in-flight requests (up to api.timeout)');
    daemon.stop({ timeoutMs: graceMs }).then(
      () => exit(0),
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
