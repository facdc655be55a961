// The cron ticks on whole seconds (the same instant on every replica), and node-cron's own
// warnings reach our logger rather than the console.
import { describe, expect, it } from 'vitest';
import { scheduleTicks } from '../../../src/daemon/runtime/scheduler.js';

describe('scheduleTicks', () => {
  it('calls back with whole-second instants and reports a tick skipped behind a stuck one', async () => {
    const ticks: number[] = [];
    const warnings: string[] = [];
    const logger = {
      info: () => {},
      debug: () => {},
      error: () => {},
      warn: (_: object, m?: string) => warnings.push(m ?? ''),
    };
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const scheduler = scheduleTicks(
      '* * * * * *',
      async (at) => {
        ticks.push(at);
        await stuck; // like a tick waiting for Redis
      },
      logger,
    );
    try {
      const deadline = Date.now() + 5_000;
      while (warnings.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    } finally {
      release();
      await scheduler.stop();
    }
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks.every((t) => t % 1000 === 0)).toBe(true);
    expect(warnings.some((w) => w.includes('overlap'))).toBe(true);
  }, 10_000);
});
