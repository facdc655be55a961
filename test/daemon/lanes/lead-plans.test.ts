// When a pipe's next read is due (lead-plans.ts): early enough that the key's read share reads
// every pipe of the key within its reconcile period, continuously for a key the share stretched;
// and how late a confirmation read may come and still be an actuation sample.
import { describe, expect, it } from 'vitest';
import { leadPlanFor, readDueAfterMs } from '../../../src/daemon/lanes/lead-plans.js';
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
