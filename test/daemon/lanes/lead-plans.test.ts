// When a pipe's next read is due (lead-plans.ts): early enough that the key's read share reads
// every pipe of the key within its reconcile period, continuously for a key the share stretched;
// how late a confirmation read may come and still be an actuation sample; and the lead slot's
// start an evaluation queues the pipe's turn for.
import { describe, expect, it } from 'vitest';
import { leadPlanFor, leadTurnAtFor, leadTurnHorizonMs, readDueAfterMs } from '../../../src/daemon/lanes/lead-plans.js';
import { STALE_AFTER_MS } from '../../../src/daemon/lanes/queues.js';
import type { PipeConfig } from '../../../src/policy/types.js';
import type { Config } from '../../../src/config/types.js';

const pipe = (i: number, key = 'default'): PipeConfig => ({
  name: `p-${i}`,
  organizationId: 'o',
  serviceId: 's',
  pipeId: `${i}`,
  policy: 'x',
  key,
  bounds: {},
});

function config(pipes: number, reconcileMs: number): Config {
  return {
    api: { keys: { default: { keyId: 'a', keySecret: 's', rateLimit: { requests: 10, perMs: 10_000 } } } },
    evaluate: { cron: '*/30 * * * * *', reconcileMs, concurrency: 10, readShare: 0.25 },
    pipes: Array.from({ length: pipes }, (_, i) => pipe(i)),
    policies: {},
  } as unknown as Config;
}

describe('readDueAfterMs', () => {
  it('a key within its share: the period less the time the share takes to read all its pipes, less two ticks', () => {
    // 100 pipes at 0.25 per s take 400 s to read: due 600 - 400 - 60 = 140 s after the last read
    const c = config(100, 600_000);
    expect(readDueAfterMs(c, c.pipes[0]!)).toBe(140_000);
    const few = config(10, 600_000);
    expect(readDueAfterMs(few, few.pipes[0]!)).toBe(600_000 - 40_000 - 60_000);
  });

  it("a key whose period the share stretched: always due, so its reads go round at the share's pace", () => {
    const c = config(1_200, 600_000);
    expect(readDueAfterMs(c, c.pipes[0]!)).toBe(0);
  });
});

describe('leadPlanFor', () => {
  const at = Date.UTC(2026, 10, 25, 8, 10);
  const withWindow = (): Config => {
    const c = config(4, 600_000);
    return {
      ...c,
      policies: {
        x: {
          name: 'x',
          baseline: { replicas: { value: 2 } },
          windows: [
            {
              kind: 'oneOff',
              name: 'peak',
              priority: 0,
              from: at + 1_800_000,
              to: at + 3_600_000,
              target: { replicas: { value: 4 } },
            },
          ],
          behavior: { scaleUp: {}, scaleDown: {} },
        },
      },
    } as unknown as Config;
  };

  it('makes the plan once per config and hour, and again when the measured actuation changes', () => {
    const c = withWindow();
    const measured = { version: 0, actuationMs: (): number | undefined => undefined };
    const first = leadPlanFor(c, at, measured);
    expect(leadPlanFor(c, at + 60_000, measured)).toBe(first);
    expect(first.slots.get('p-0')![0]!.actuationMs).toBe(0);
    measured.version = 1;
    measured.actuationMs = () => 120_000;
    const next = leadPlanFor(c, at + 60_000, measured);
    expect(next).not.toBe(first);
    const slot = next.slots.get('p-0')![0]!;
    expect(slot.actuationMs).toBe(120_000);
    // 2 minutes earlier, and its confirmation reads before the boundary
    expect(slot.start).toBeLessThan(first.slots.get('p-0')![0]!.start - 120_000);
    expect(slot.atTargetAt).toBeLessThan(slot.expectedAt);
    expect(slot.expectedAt).toBeLessThanOrEqual(slot.boundary);
  });
});

describe('leadTurnAtFor: the slot start an evaluation queues the turn for', () => {
  const at = Date.UTC(2026, 10, 25, 8, 10);
  const B = at + 1_800_000;
  const withWindow = (pipes: number): Config => {
    const c = config(pipes, 600_000);
    return {
      ...c,
      policies: {
        x: {
          name: 'x',
          baseline: { replicas: { value: 2 } },
          windows: [
            {
              kind: 'oneOff',
              name: 'peak',
              priority: 0,
              from: B,
              to: B + 1_800_000,
              target: { replicas: { value: 4 } },
            },
          ],
          behavior: { scaleUp: {}, scaleDown: {} },
        },
      },
    } as unknown as Config;
  };

  it('the horizon: past the next evaluation, a tick plus twice the lag; two ticks at least, STALE_AFTER_MS at most', () => {
    expect(leadTurnHorizonMs(3_000, 0)).toBe(6_000);
    expect(leadTurnHorizonMs(3_000, 1_000)).toBe(6_000);
    // evaluations 10 s behind their tick: the next one may come 13 s on; queued 23 s ahead
    expect(leadTurnHorizonMs(3_000, 10_000)).toBe(23_000);
    expect(leadTurnHorizonMs(30_000, 3_600_000)).toBe(STALE_AFTER_MS);
  });

  it('a slot starting after the tick and within the horizon of now, not one the tick saw started, nor one beyond', () => {
    // 40 scale-ups on a 10 per 10 s key: slots 2.2 s apart in the last minutes before B
    const c = withWindow(40);
    const plan = leadPlanFor(c, at);
    const slots = c.pipes.map((p) => plan.slots.get(p.name)![0]!.start).sort((a, b) => a - b);
    const first = slots[0]!;
    const pipeAt = (start: number) => c.pipes.find((p) => plan.slots.get(p.name)![0]!.start === start)!;
    const p0 = pipeAt(first);
    const tickMs = 30_000;
    // evaluated on time (no lag): a slot within two ticks of the tick
    expect(leadTurnAtFor(c, p0, first - 45_000, first - 45_000)).toBe(first);
    expect(leadTurnAtFor(c, p0, first - 61_000, first - 61_000)).toBeUndefined();
    // an evaluation 40 s behind its tick looks a tick and twice that ahead of now
    expect(leadTurnAtFor(c, p0, first - 150_000, first - 110_000)).toBe(first);
    expect(leadTurnAtFor(c, p0, first - 150_000 - tickMs, first - 150_000)).toBeUndefined();
    // the slot started between the tick and the evaluation: queued at once (its start is past)
    expect(leadTurnAtFor(c, p0, first - 1, first + 5_000)).toBe(first);
    // the tick saw it started: that evaluation decided the change itself
    expect(leadTurnAtFor(c, p0, first, first + 5_000)).toBeUndefined();
    // the last pipe's slot, and none after its boundary
    const last = pipeAt(slots.at(-1)!);
    expect(leadTurnAtFor(c, last, slots.at(-1)! - 1_000, slots.at(-1)! - 1_000)).toBe(slots.at(-1));
    expect(leadTurnAtFor(c, last, B, B)).toBeUndefined();
  });
});
