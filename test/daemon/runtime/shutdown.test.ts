// runShutdown(): the order of stop()'s steps, the graceful and the forceful path, and the steps
// named when they overrun (src/daemon/runtime/shutdown.ts). The daemon's own stop is pinned end to end by
// stop-grace.test.ts; here the steps are plain promises under a fake clock.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runShutdown, STOP_AFTER_GRACE_MS, type ShutdownStep } from '../../../src/daemon/runtime/shutdown.js';

afterEach(() => vi.useRealTimers());

function recorder() {
  const order: string[] = [];
  const step = (name: string, run: () => Promise<unknown> = () => Promise.resolve()): ShutdownStep => ({
    name,
    gracefulMs: 1_000,
    forcedMs: 100,
    run: () => {
      order.push(name);
      return run();
    },
  });
  return { order, step };
}

const never = () => new Promise<never>(() => {});

describe('runShutdown', () => {
  it('graceful: intake, drain, then every close step in order; no forceful step', async () => {
    const { order, step } = recorder();
    const result = await runShutdown({
      intake: [{ name: 'stop-cron', run: () => order.push('stop-cron') }],
      graceMs: () => 5_000,
      drain: async () => order.push('drain'),
      force: [step('end-requests')],
      close: [step('close-queues'), step('close-redis')],
      onOverrun: () => order.push('overrun'),
    });
    expect(result).toEqual({ graceful: true, late: [] });
    expect(order).toEqual(['stop-cron', 'drain', 'close-queues', 'close-redis']);
  });

  it('forceful: past the grace the forceful steps run until the drain ends; late steps are named and the whole fits in one second', async () => {
    vi.useFakeTimers();
    const { order, step } = recorder();
    let endDrain = () => {};
    const drained = new Promise<void>((resolve) => (endDrain = resolve));
    let disconnected = false;
    const stopping = runShutdown({
      intake: [],
      graceMs: () => 2_000,
      drain: () => drained,
      force: [
        step('end-requests', async () => endDrain()),
        step('await-workers', () => drained),
        step('close-workers-by-force'),
      ],
      close: [step('close-queues', never), { ...step('close-redis', never), onLate: () => (disconnected = true) }],
      onOverrun: (graceMs) => order.push(`overrun ${graceMs}`),
    });
    const started = Date.now();
    await vi.runAllTimersAsync();
    const result = await stopping;
    expect(result).toEqual({ graceful: false, late: ['close-queues', 'close-redis'] });
    expect(order).toEqual(['overrun 2000', 'end-requests', 'close-queues', 'close-redis']);
    expect(disconnected).toBe(true);
    expect(Date.now() - started).toBeLessThanOrEqual(2_000 + STOP_AFTER_GRACE_MS);
  });
});
