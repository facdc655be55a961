// Lead time in decide() (lead.ts): a window's scale-ups may go before it starts, up to the lead
// horizon (now + a fixed leadTime, or the key plan's leadUntil for auto); scale-downs never lead.
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/decide.js';
import { leadHorizon } from '../../src/policy/lead.js';
import type { Behavior, LeadTime, Policy } from '../../src/policy/types.js';
import { at, NO_BEHAVIOR, oneOff, policy, recurring, view } from './build.js';

const M = 60_000;
const lead = (leadTime: LeadTime, b: Behavior = NO_BEHAVIOR): Behavior => ({
  ...b,
  scaleUp: { ...b.scaleUp, leadTime },
});

// 08:00-20:00 UTC sets replicas 6 (baseline 2).
const business = (leadTime: LeadTime, extra: Partial<Policy> = {}): Policy =>
  policy({
    windows: [
      recurring({
        name: 'business-hours',
        start: '08:00',
        end: '20:00',
        timezone: 'UTC',
        target: { replicas: { value: 6 } },
      }),
    ],
    behavior: lead(leadTime),
    ...extra,
  });

describe('a fixed lead time', () => {
  const p = business(10 * M);

  it("sends the window's scale-up that long before it starts, and says why", () => {
    expect(decide(p, at('2026-11-23T07:49:59Z'), view()).action).toBe('none');
    const d = decide(p, at('2026-11-23T07:50:00Z'), view());
    expect(d).toMatchObject({ action: 'change', direction: 'up', windows: [], changes: { replicas: 6 } });
    expect(d.lead).toEqual({ boundary: at('2026-11-23T08:00:00Z'), windows: ['business-hours'] });
    expect(d.reasons.find((r) => r.code === 'lead_time')?.message).toBe(
      'replicas 2 -> 6 ahead of business-hours at 2026-11-23T08:00:00.000Z in 10m: scale-ups lead by 10m',
    );
  });

  it("once applied early, the window's start changes nothing", () => {
    const ready = view({ applied: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 } });
    expect(decide(p, at('2026-11-23T07:55:00Z'), ready).action).toBe('none');
    expect(decide(p, at('2026-11-23T08:00:00Z'), ready)).toMatchObject({ action: 'none', windows: ['business-hours'] });
  });

  it("never leads a scale-down: the window's end waits for the end", () => {
    const up = view({ applied: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 } });
    expect(decide(p, at('2026-11-23T19:55:00Z'), up).action).toBe('none');
    expect(decide(p, at('2026-11-23T20:00:00Z'), up)).toMatchObject({
      action: 'change',
      direction: 'down',
      changes: { replicas: 2 },
    });
  });

  it('leads only the fields that go up; a field going down waits for the boundary', () => {
    const q = policy({
      baseline: { replicas: { value: 2 }, replicaCpuMillicores: { value: 500 } },
      windows: [
        recurring({
          name: 'wide',
          start: '08:00',
          end: '20:00',
          timezone: 'UTC',
          target: { replicas: { value: 6 }, replicaCpuMillicores: { value: 250 } },
        }),
      ],
      behavior: lead(10 * M),
    });
    expect(decide(q, at('2026-11-23T07:55:00Z'), view()).changes).toEqual({ replicas: 6 });
    const early = view({ applied: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 } });
    expect(decide(q, at('2026-11-23T08:00:00Z'), early)).toMatchObject({
      direction: 'down',
      changes: { replicaCpuMillicores: 250 },
    });
  });

  it('a gap between two windows shorter than the lead does not scale down and up again', () => {
    const q = policy({
      windows: [
        oneOff({
          name: 'morning',
          from: '2026-11-23T08:00:00Z',
          to: '2026-11-23T12:00:00Z',
          target: { replicas: { value: 6 } },
        }),
        oneOff({
          name: 'afternoon',
          from: '2026-11-23T12:05:00Z',
          to: '2026-11-23T18:00:00Z',
          target: { replicas: { value: 6 } },
        }),
      ],
      behavior: lead(10 * M),
    });
    const up = view({ applied: { replicas: 6, replicaCpuMillicores: 500, replicaMemoryGb: 2 } });
    expect(decide(q, at('2026-11-23T12:00:00Z'), up).action).toBe('none');
    expect(decide(q, at('2026-11-23T18:00:00Z'), up).changes).toEqual({ replicas: 2 });
  });

  it("takes the highest of every state within the horizon; bounds rise to the window's min", () => {
    const q = policy({
      windows: [
        oneOff({
          name: 'short',
          from: '2026-11-23T08:02:00Z',
          to: '2026-11-23T08:04:00Z',
          target: { replicas: { value: 9 } },
        }),
        oneOff({
          name: 'band',
          from: '2026-11-23T08:05:00Z',
          to: '2026-11-23T10:00:00Z',
          target: { replicas: { min: 4, max: 8 } },
        }),
      ],
      behavior: lead(3 * M),
    });
    expect(decide(q, at('2026-11-23T07:59:00Z'), view())).toMatchObject({
      changes: { replicas: 9 },
      lead: { windows: ['short'] },
    });
    // after the short window only the band is ahead: its min, the applied 2 being below it
    expect(decide(q, at('2026-11-23T08:04:00Z'), view()).changes).toEqual({ replicas: 4 });
  });

  it('a lead scale-up still honours the scale-up cooldown and maxStep', () => {
    const q = business(10 * M, {
      behavior: lead(10 * M, { ...NO_BEHAVIOR, scaleUp: { maxStep: { replicas: 2 }, cooldownMs: 5 * M } }),
    });
    expect(decide(q, at('2026-11-23T07:50:00Z'), view()).changes).toEqual({ replicas: 4 });
    const stepped = view({
      applied: { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      lastChange: { up: at('2026-11-23T07:50:00Z') },
    });
    expect(decide(q, at('2026-11-23T07:54:00Z'), stepped).action).toBe('none');
    expect(decide(q, at('2026-11-23T07:55:00Z'), stepped).changes).toEqual({ replicas: 6 });
  });

  it('0 leads nothing', () => {
    expect(decide(business(0), at('2026-11-23T07:59:59Z'), view()).action).toBe('none');
  });
});

describe("auto: the caller's lead plan says how far", () => {
  const p = business('auto');

  it('without a plan (leadUntil) nothing leads; with one, the schedule up to it counts', () => {
    expect(leadHorizon(p, at('2026-11-23T07:58:00Z'), undefined)).toBe(at('2026-11-23T07:58:00Z'));
    expect(decide(p, at('2026-11-23T07:58:00Z'), view()).action).toBe('none');
    const d = decide(p, at('2026-11-23T07:58:00Z'), view({ leadUntil: at('2026-11-23T08:00:00Z') }));
    expect(d).toMatchObject({
      action: 'change',
      changes: { replicas: 6 },
      lead: { boundary: at('2026-11-23T08:00:00Z') },
    });
    expect(d.reasons.find((r) => r.code === 'lead_time')?.message).toMatch(
      /in 2m: scale-ups lead by auto \(the key's lead plan\)$/,
    );
  });

  it('a leadUntil short of the boundary leads nothing', () => {
    expect(decide(p, at('2026-11-23T07:58:00Z'), view({ leadUntil: at('2026-11-23T07:59:59Z') })).action).toBe('none');
  });

  it('a leadUntil given with a fixed lead time is what counts (the caller decides)', () => {
    expect(
      decide(business(60 * M), at('2026-11-23T07:30:00Z'), view({ leadUntil: at('2026-11-23T07:30:00Z') })).action,
    ).toBe('none');
  });
});

describe('a DST day: the lead counts back from the instant the window really starts', () => {
  // Europe/Berlin springs forward on 2026-03-29 at 02:00 CET -> 03:00 CEST: 02:30 does not exist,
  // so the window starts when the gap ends, 03:00 CEST = 01:00Z. It falls back on 2026-10-25 at
  // 03:00 CEST -> 02:00 CET: 02:30 happens twice, and the first (CEST, 00:30Z) counts.
  const p = policy({
    windows: [
      recurring({
        name: 'night-batch',
        start: '02:30',
        end: '05:00',
        timezone: 'Europe/Berlin',
        target: { replicas: { value: 8 } },
      }),
    ],
    behavior: lead(30 * M),
  });

  it('spring forward: the window starts at 01:00Z, its scale-up goes from 00:30Z', () => {
    expect(decide(p, at('2026-03-29T00:29:59Z'), view()).action).toBe('none');
    expect(decide(p, at('2026-03-29T00:30:00Z'), view())).toMatchObject({
      changes: { replicas: 8 },
      lead: { boundary: at('2026-03-29T01:00:00Z') },
    });
    // a normal day before: 02:30 CET = 01:30Z, lead from 01:00Z
    expect(decide(p, at('2026-03-28T00:59:59Z'), view()).action).toBe('none');
    expect(decide(p, at('2026-03-28T01:00:00Z'), view()).lead?.boundary).toBe(at('2026-03-28T01:30:00Z'));
  });

  it('fall back: the first 02:30 (00:30Z) counts, its scale-up goes from 00:00Z', () => {
    expect(decide(p, at('2026-10-24T23:59:59Z'), view()).action).toBe('none');
    expect(decide(p, at('2026-10-25T00:00:00Z'), view())).toMatchObject({
      changes: { replicas: 8 },
      lead: { boundary: at('2026-10-25T00:30:00Z') },
    });
  });
});
