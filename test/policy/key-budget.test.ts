// What a key's request budget affords (pure): the reconcile period stretched to the read share, the
// bound on a waiting scale-down, the lead a boundary needs, and the line validate and status show.
import { describe, expect, it } from 'vitest';
import {
  changesMs,
  describeKeyPlan,
  keyPlans,
  reconcilePeriodMs,
  scaleDownBoundMs,
} from '../../src/policy/key-budget.js';
import type { PipeConfig } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';

const RATE = { requests: 10, perMs: 10_000 };

describe('a key budget of 10 requests per 10 s', () => {
  it('reads at 25 % afford 150 pipes per 10 min: more pipes stretch the period (pipes / (share x rate))', () => {
    expect(reconcilePeriodMs(100, 600_000, 0.25, RATE)).toBe(600_000);
    expect(reconcilePeriodMs(150, 600_000, 0.25, RATE)).toBe(600_000);
    expect(reconcilePeriodMs(1_200, 600_000, 0.25, RATE)).toBe(4_800_000); // 80 min
    expect(reconcilePeriodMs(1_200, 600_000, 0.5, RATE)).toBe(2_400_000);
  });

  it('a waiting scale-down goes within pipes / ((1 - share) x rate); a boundary moving every pipe needs pipes / rate', () => {
    expect(scaleDownBoundMs(600, 0.25, RATE)).toBe(800_000);
    expect(changesMs(1_200, RATE)).toBe(1_200_000);
    expect(changesMs(1_200, { requests: 10, perMs: 1_000 })).toBe(120_000);
  });

  it('per key of the config, with the line validate and status print', () => {
    const pipe = (i: number, key: string): PipeConfig => ({
      name: `p-${i}`,
      organizationId: 'o',
      serviceId: 's',
      pipeId: `${i}`,
      policy: 'x',
      key,
      bounds: {},
    });
    const config = {
      api: {
        keys: {
          default: { keyId: 'a', keySecret: 's', rateLimit: RATE },
          other: { keyId: 'b', keySecret: 's', rateLimit: RATE },
        },
      },
      evaluate: { cron: '*/30 * * * * *', reconcileMs: 600_000, concurrency: 10, readShare: 0.25 },
      pipes: [...Array.from({ length: 1_200 }, (_, i) => pipe(i, 'default')), pipe(9_999, 'other')],
    } as unknown as Config;
    const [a, b] = keyPlans(config);
    expect(a).toMatchObject({ key: 'default', pipes: 1_200, reconcileMs: 4_800_000, stretched: true });
    expect(b).toMatchObject({ key: 'other', pipes: 1, reconcileMs: 600_000, stretched: false });
    expect(describeKeyPlan(a!)).toMatch(/^key default: 1,200 pipes, reconcile every 80 min within its budget/);
    expect(describeKeyPlan(a!)).toMatch(/a waiting scale-down is sent within 26\.7 min/);
    // leadTime auto: 1,200 changes at 90 % of 1 per s, plus two 30 s ticks
    expect(a!.boundaryLeadMs).toBe(Math.ceil((1_200 * 10_000) / 9) + 60_000);
    expect(describeKeyPlan(a!)).toMatch(
      /a boundary moving every pipe starts its scale-ups 23\.2 min ahead \(leadTime auto\)$/,
    );
    expect(describeKeyPlan(b!)).toMatch(/^key other: 1 pipe, reconcile every 10 min \(/);
    expect(describeKeyPlan({ ...b!, pipes: 0, pool: { name: 'batch', keys: 2 } })).toBe(
      'key other (pool batch, 2 keys): no pipes (10 per 10 s)',
    );
  });
});
