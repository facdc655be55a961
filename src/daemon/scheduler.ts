// The cron that drives ticks. Every replica runs one; the deterministic job ids keep one
// evaluation per pipe per tick. UTC, because node-cron's DST handling follows the wall clock and
// windows carry their own zones anyway.
import cron, { type ScheduledTask } from 'node-cron';

export interface Scheduler {
  stop(): Promise<void>;
}

export function scheduleTicks(expression: string, onTick: (at: number) => Promise<void>): Scheduler {
  const task: ScheduledTask = cron.schedule(
    expression,
    async (ctx) => {
      // The scheduled instant, not the moment the callback ran: every replica computes the same
      // second for the same tick, hence the same job ids.
      await onTick(Math.floor(ctx.date.getTime() / 1000) * 1000);
    },
    { timezone: 'UTC', name: 'pipescaler-tick', noOverlap: true },
  );
  return {
    async stop() {
      await task.stop();
      await task.destroy();
    },
  };
}
