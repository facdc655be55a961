// The cron that drives ticks. Every replica runs one; the deterministic job ids keep one
// evaluation per pipe per tick. UTC, because node-cron's DST handling follows the wall clock and
// windows carry their own zones anyway.
import cron, { type ScheduledTask } from 'node-cron';
import type { DaemonLogger } from '../model/logger.js';

export interface Scheduler {
  stop(): Promise<void>;
}

/** node-cron's own warnings (a missed tick, a tick skipped while the last still waits for Redis)
 *  go to our logger as JSON lines instead of plain text on the console. */
function cronLogger(logger: DaemonLogger) {
  const text = (m: string | Error) => (m instanceof Error ? m.message : m);
  return {
    info: (m: string) => logger.debug({ source: 'node-cron' }, m),
    warn: (m: string) => logger.warn({ source: 'node-cron' }, m),
    error: (m: string | Error, err?: Error) => logger.error({ source: 'node-cron', err: err?.message }, text(m)),
    debug: (m: string | Error) => logger.debug({ source: 'node-cron' }, text(m)),
  };
}

export function scheduleTicks(
  expression: string,
  onTick: (at: number) => Promise<void>,
  logger: DaemonLogger,
): Scheduler {
  const task: ScheduledTask = cron.schedule(
    expression,
    async (ctx) => {
      // The scheduled instant, not the moment the callback ran: every replica computes the same
      // second for the same tick, hence the same job ids.
      await onTick(Math.floor(ctx.date.getTime() / 1000) * 1000);
    },
    { timezone: 'UTC', name: 'pipescaler-tick', noOverlap: true, logger: cronLogger(logger) },
  );
  return {
    async stop() {
      await task.stop();
      await task.destroy();
    },
  };
}
