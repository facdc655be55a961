// The audit lines a pipe's record owes (lifecycle/owed-line.ts): a change's sender died between
// recording its 200 and writing its line. Each evaluation and turn of the pipe, on any replica,
// writes those that are due: taken first with a conditioned write (one replica holds it), then its
// line (the `decision` event, with `answeredAt`), then deleted the same way.
import { type DaemonContext } from './context.js';
import { holderMayWrite, owedDue, owedEvent, takenAt } from '../lifecycle/owed-line.js';
import type { OwedLine } from '../model/record.js';

/** Writes the due owed lines of `pipe` (from its snapshot); none due, no Redis command. A Redis
 *  failure is logged and left to the pipe's next evaluation or turn: it never fails its job. */
export async function writeOwedLines(ctx: DaemonContext, pipe: string, owed: readonly OwedLine[]): Promise<void> {
  for (const o of owed) {
    if (!owedDue(o, ctx.now())) continue;
    try {
      const mine = takenAt(o, ctx.now(), ctx.config().api.timeoutMs);
      if (!(await ctx.store.takeOwed(pipe, o, mine))) continue;
      // a reply that came too late: another turn takes it once due again
      if (!holderMayWrite(mine, ctx.now())) continue;
      ctx.emitter.emit('decision', owedEvent(pipe, mine));
      await ctx.store.clearOwed(pipe, mine);
    } catch (err) {
      ctx.logger.warn({ pipe, err: (err as Error).message }, 'an owed audit line could not be written: left owed');
    }
  }
}
