// leadTime auto (lead-plan.ts, lead-schedule.ts): each key's scale-ups due at the boundaries ahead,
// scheduled at the key's rate so the last lands by its boundary (latest start, earliest deadline
// first); with an actuation counted, each confirmed at target by then, its confirmation reads
// within the key's read share.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ACTUATION_DEFAULTS,
  autoLeadMs,
  CONFIRM_READS_PLANNED,
  expectedActuationMs,
  FIRST_READ_MS,
  LEAD_MARGIN_TICKS,
  LEAD_RATE_SHARE,
  leadPlan,
  leadPlanSpan,
  leadUntil,
  nextSlot,
  tickIntervalMs,
  type LeadSlot,
} from '../../src/policy/lead-plan.js';
import type { LeadTime, PipeConfig, Policy, Target } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { at, NO_BEHAVIOR, oneOff, policy, recurring } from './build.js';

const RATE = { requests: 10, perMs: 10_000 };
const SLOT = RATE.perMs / (RATE.requests * LEAD_RATE_SHARE); // 1,111 ms
const TICK = 30_000;
const MARGIN = LEAD_MARGIN_TICKS * TICK;
const B = at('2026-11-23T09:00:00Z');

const withLead = (p: Policy, leadTime: LeadTime): Policy => ({
  ...p,
  behavior: { ...p.behavior, scaleUp: { ...p.behavior.scaleUp, leadTime } },
});
const up = (name: string, from: string, target: Target = { replicas: { value: 6 } }): Policy =>
  policy({ name, windows: [oneOff({ name: `${name}-window`, from, to: '2026-11-25T00:00:00Z', target })] });

function pipes(n: number, policyName: string, key = 'default', offset = 0): PipeConfig[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `${policyName}-${offset + i + 1}`,
    organizationId: 'o',
    serviceId: 's',
    pipeId: `${policyName}-${i}`,
    policy: policyName,
    key,
    bounds: {},
  }));
}

function config(
  ps: PipeConfig[],
  policies: Policy[],
  o: {
    cron?: string;
    keys?: Record<string, typeof RATE>;
    actuation?: Config['evaluate']['actuation'];
    readShare?: number;
  } = {},
): Config {
  const keys = o.keys ?? { default: RATE };
  return {
    api: {
      baseUrl: 'embedded',
      fixtures: '',
      timeoutMs: 1_000,
      keys: Object.fromEntries(
        Object.entries(keys).map(([k, rateLimit]) => [k, { keyId: k, keySecret: 's', rateLimit }]),
      ),
    },
    redis: { url: 'redis://127.0.0.1:6379', prefix: 'x' },
    evaluate: {
      cron: o.cron ?? '*/30 * * * * *',
      reconcileMs: 600_000,
      concurrency: 10,
      ...(o.actuation ? { actuation: o.actuation } : {}),
      ...(o.readShare !== undefined ? { readShare: o.readShare } : {}),
    },
    telemetry: { listen: '127.0.0.1:0', logLevel: 'silent' },
    dryRun: false,
    pipes: ps,
    policies: Object.fromEntries(policies.map((p) => [p.name, p])),
  };
}

const DAY = { from: at('2026-11-23T00:00:00Z'), to: at('2026-11-24T00:00:00Z') };

/** A slot as the plan gives it: sent from `start`, at target one slot (plus the actuation) later. */
const slot = (boundary: number, start: number, actuationMs = 0) => ({
  boundary,
  start,
  actuationMs,
  expectedAt: Math.ceil(start + SLOT) + actuationMs,
});

describe('the tick a cron gives', () => {
  it.each([
    ['*/30 * * * * *', 30_000],
    ['*/3 * * * * *', 3_000],
    ['*/7 * * * * *', 7_000],
    ['* * * * *', 60_000],
    ['0 */5 * * * *', 300_000],
    ['0 0 9 * * *', 3_600_000],
  ])('%s: %i ms between ticks at most (an hour at most)', (cron, ms) => {
    expect(tickIntervalMs(cron)).toBe(ms);
  });
});

describe('one boundary of one key', () => {
  const c = config(pipes(100, 'up'), [up('up', '2026-11-23T09:00:00Z')]);
  const plan = leadPlan(c, DAY.from, DAY.to);

  it('the last change lands two ticks before the boundary; each one before it a slot (at 90 % of the rate) earlier', () => {
    const last = plan.slots.get('up-100')!;
    expect(last).toEqual([slot(B, Math.floor(B - MARGIN - SLOT))]);
    expect(plan.slots.get('up-1')![0]!.start).toBe(Math.floor(B - MARGIN - 100 * SLOT));
    const starts = pipes(100, 'up').map((p) => plan.slots.get(p.name)![0]!.start);
    expect(starts).toEqual([...starts].sort((a, b) => a - b)); // config order: the first pipes start first
  });

  it('what the key needs: 100 changes, 111 s at 90 % of 1 per s plus two 30 s ticks', () => {
    expect(plan.keys.get('default')).toEqual({
      key: 'default',
      boundary: B,
      changes: 100,
      leadMs: Math.ceil(MARGIN + 100 * SLOT),
    });
    expect(autoLeadMs(100, RATE, TICK)).toBe(Math.ceil(100 * SLOT) + MARGIN);
    expect(autoLeadMs(0, RATE, TICK)).toBe(0);
  });

  it("a pipe may lead from its slot's start to the boundary (leadUntil), not before, not after", () => {
    const { start } = plan.slots.get('up-50')![0]!;
    expect(leadUntil(plan, 'up-50', start - 1)).toBeUndefined();
    expect(leadUntil(plan, 'up-50', start)).toBe(B);
    expect(leadUntil(plan, 'up-50', B - 1)).toBe(B);
    expect(leadUntil(plan, 'up-50', B)).toBeUndefined();
    expect(nextSlot(plan, 'up-50', start - 60_000)).toEqual(slot(B, start));
    expect(nextSlot(plan, 'up-50', B)).toBeNull();
  });
});

describe('who gets a slot', () => {
  it('only pipes whose lowest value rises at the boundary: not a scale-down, not one capped by its bounds', () => {
    const down = up('down', '2026-11-23T09:00:00Z', { replicas: { value: 1 } });
    const capped = { ...pipes(1, 'up')[0]!, name: 'capped', bounds: { replicas: { max: 2 } } };
    const band = up('band', '2026-11-23T09:00:00Z', { replicas: { min: 4, max: 8 } });
    const c = config(
      [...pipes(1, 'down'), capped, ...pipes(1, 'band')],
      [down, up('up', '2026-11-23T09:00:00Z'), band],
    );
    const plan = leadPlan(c, DAY.from, DAY.to);
    expect([...plan.slots.keys()]).toEqual(['band-1']);
  });

  it('a window ending into a higher baseline is a scale-up too', () => {
    const night = policy({
      name: 'night',
      baseline: { replicas: { value: 4 } },
      windows: [
        oneOff({ from: '2026-11-23T01:00:00Z', to: '2026-11-23T05:00:00Z', target: { replicas: { value: 1 } } }),
      ],
    });
    const plan = leadPlan(config(pipes(1, 'night'), [night]), DAY.from, DAY.to);
    expect(plan.slots.get('night-1')).toEqual([
      slot(at('2026-11-23T05:00:00Z'), Math.floor(at('2026-11-23T05:00:00Z') - MARGIN - SLOT)),
    ]);
  });

  it('not pipes with a fixed lead time, nor pipes paused in the config; they leave their slots to the others', () => {
    const fixed = withLead(up('fixed', '2026-11-23T09:00:00Z'), 5 * 60_000);
    const paused = { ...pipes(1, 'up', 'default', 10)[0]!, paused: 'maintenance' };
    const plan = leadPlan(
      config([...pipes(1, 'fixed'), paused, ...pipes(2, 'up')], [fixed, up('up', '2026-11-23T09:00:00Z')]),
      DAY.from,
      DAY.to,
    );
    expect([...plan.slots.keys()].sort()).toEqual(['up-1', 'up-2']);
    expect(plan.keys.get('default')!.changes).toBe(2);
  });

  it("keys plan apart: another key's changes take none of this key's slots", () => {
    const c = config([...pipes(50, 'up', 'a'), ...pipes(50, 'up', 'b', 50)], [up('up', '2026-11-23T09:00:00Z')], {
      keys: { a: RATE, b: RATE },
    });
    const plan = leadPlan(c, DAY.from, DAY.to);
    expect(plan.keys.get('a')!.changes).toBe(50);
    expect(plan.slots.get('up-1')![0]!.start).toBe(plan.slots.get('up-51')![0]!.start);
  });
});

describe('several boundaries of one key: earliest deadline first, latest possible start', () => {
  it("a boundary whose changes are crowded by the next one's starts earlier, so both land in time", () => {
    const c = config(
      [...pipes(60, 'nine'), ...pipes(60, 'later')],
      [up('nine', '2026-11-23T09:00:00Z'), up('later', '2026-11-23T09:01:00Z')],
    );
    const plan = leadPlan(c, DAY.from, DAY.to);
    const nine = pipes(60, 'nine').map((p) => plan.slots.get(p.name)![0]!);
    const later = pipes(60, 'later').map((p) => plan.slots.get(p.name)![0]!);
    // 09:01's 60 changes end two ticks before it; 09:00's end where they begin, 6.7 s before its own margin
    expect(later.at(-1)!.start).toBe(Math.floor(at('2026-11-23T09:01:00Z') - MARGIN - SLOT));
    expect(nine.at(-1)!.start).toBe(Math.floor(at('2026-11-23T09:01:00Z') - MARGIN - 61 * SLOT));
    // the key's longest lead is 09:00's: its first change starts 60 s + 121 slots before 09:01
    expect(plan.keys.get('default')).toMatchObject({ boundary: B, changes: 60, leadMs: Math.ceil(B - nine[0]!.start) });
    expect(nine[0]!.start).toBe(Math.floor(at('2026-11-23T09:01:00Z') - MARGIN - 120 * SLOT));
  });

  it('any set of boundaries and changes: no two slots overlap, each ends by its boundary less the margin, none starts earlier than it must', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ minute: fc.integer({ min: 0, max: 300 }), n: fc.integer({ min: 1, max: 40 }) }), {
          minLength: 1,
          maxLength: 6,
        }),
        (boundaries) => {
          const policies = boundaries.map((b, i) =>
            up(`p${i}`, new Date(at('2026-11-23T09:00:00Z') + b.minute * 60_000).toISOString()),
          );
          const ps = boundaries.flatMap((b, i) => pipes(b.n, `p${i}`));
          const plan = leadPlan(config(ps, policies), DAY.from, DAY.to);
          const slots = ps.map((p) => plan.slots.get(p.name)![0]!).sort((a, b) => a.start - b.start);
          for (let i = 0; i < slots.length; i++) {
            const s = slots[i]!;
            expect(s.start + SLOT).toBeLessThanOrEqual(s.boundary - MARGIN + 1);
            const next = slots[i + 1];
            if (next) expect(s.start + SLOT).toBeLessThanOrEqual(next.start + 1);
            // latest: it ends at its own deadline or where the next slot begins
            const end = s.start + SLOT;
            expect(
              Math.abs(end - (s.boundary - MARGIN)) <= 1 || (next !== undefined && Math.abs(end - next.start) <= 1),
            ).toBe(true);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

/** 02:30-05:00 Europe/Berlin, 8 replicas: a window whose start a DST change moves or doubles. */
const NIGHT_BATCH = policy({
  name: 'night',
  windows: [
    recurring({
      name: 'batch',
      start: '02:30',
      end: '05:00',
      timezone: 'Europe/Berlin',
      target: { replicas: { value: 8 } },
    }),
  ],
});

describe('a DST day', () => {
  // Europe/Berlin springs forward on 2026-03-29: a 02:30 start does not exist and the window starts
  // when the gap ends, 03:00 CEST = 01:00Z; the plan counts back from that instant.
  it('plans against the instant the window really starts', () => {
    const plan = leadPlan(
      config(pipes(3, 'night'), [NIGHT_BATCH]),
      at('2026-03-28T12:00:00Z'),
      at('2026-03-30T12:00:00Z'),
    );
    expect(plan.slots.get('night-3')!.map((s) => s.boundary)).toEqual([
      at('2026-03-29T01:00:00Z'),
      at('2026-03-30T00:30:00Z'),
    ]);
    expect(plan.slots.get('night-3')![0]!.start).toBe(Math.floor(at('2026-03-29T01:00:00Z') - MARGIN - SLOT));
  });
});

describe('actuation: a scale-up is planned to be confirmed at target, not only sent, by its boundary', () => {
  const MIN = 60_000;
  const ACT = { expectedMs: 3 * MIN, maxMs: 10 * MIN, minSamples: 20 };
  /** A slot with an actuation counted: sent from `start`, at target its slot's end plus the
   *  actuation later, confirmed by the end of its confirming read (`readEnd`). */
  const confirmed = (boundary: number, start: number, actuationMs: number, readEnd: number) => ({
    boundary,
    start: Math.floor(start),
    actuationMs,
    expectedAt: Math.ceil(readEnd),
    atTargetAt: Math.ceil(Math.floor(start) + SLOT) + actuationMs,
  });

  it('what the plan counts on: the measured latency when there is one, else the configured expectation, at most the cap', () => {
    expect(ACTUATION_DEFAULTS).toEqual({ expectedMs: 0, maxMs: 10 * MIN, minSamples: 20 });
    const c = config([], [], { actuation: ACT });
    expect(expectedActuationMs(c)).toBe(3 * MIN);
    expect(expectedActuationMs(c, 45_000)).toBe(45_000);
    expect(expectedActuationMs(c, 25 * MIN)).toBe(10 * MIN);
    expect(expectedActuationMs(c, -5)).toBe(0);
    expect(expectedActuationMs(config([], []))).toBe(0); // not configured: today's plan
    expect(expectedActuationMs(config([], []), 30_000)).toBe(30_000);
    // never sooner than the daemon's first confirmation read (firstRead, 15 s by default)
    expect(expectedActuationMs(config([], []), 4_000)).toBe(FIRST_READ_MS);
    expect(expectedActuationMs(config([], [], { actuation: { ...ACT, firstReadMs: 1_000 } }), 4_000)).toBe(4_000);
  });

  it('no actuation counted (none configured, none measured, or measured: false with 0 expected): no read planned, the same plan either way, byte for byte', () => {
    // six boundaries of two keys (one at 7 per 3 s), 40 to 105 pipes each: the plan's JSON as it
    // was before confirmation reads were planned
    const minutes = [0, 1, 7, 30, 31, 95];
    const policies = minutes.map((m, i) => up(`p${i}`, new Date(B + m * MIN).toISOString()));
    const ps = minutes.flatMap((_, i) =>
      pipes(40 + i * 13, `p${i}`).map((p, j) => ({ ...p, key: j % 3 === 0 ? 'b' : 'default' })),
    );
    const keys = { default: RATE, b: { requests: 7, perMs: 3_000 } };
    for (const actuation of [undefined, { expectedMs: 0, maxMs: 10 * MIN, minSamples: 20, measured: false }]) {
      const plan = leadPlan(config(ps, policies, { keys, ...(actuation ? { actuation } : {}) }), DAY.from, DAY.to);
      const text = JSON.stringify({ slots: [...plan.slots], keys: [...plan.keys] });
      expect(createHash('sha256').update(text).digest('hex')).toBe(
        '80649793d73548f735bf0fd434a35b0eabddab661dd49d2046375a744fba57c0',
      );
    }
  });

  /** The limit the issue sets a boundary of n scale-ups: a change and a confirming read each at
   *  90 % of the key's rate, plus the actuation (and the two ticks' margin before it). */
  const limit = (n: number, act: number): number => 2 * n * SLOT + act + MARGIN;

  it("600 scale-ups at one boundary, 18 s measured: one confirming read each on the changes' lane; the lead is 2N slots plus the actuation, not the read share's pace", () => {
    const ps = pipes(600, 'up');
    const plan = leadPlan(config(ps, [up('up', '2026-11-23T09:00:00Z')]), DAY.from, DAY.to, {
      actuationMs: () => 18_000,
    });
    // the last pipe's confirming read ends two ticks before the boundary; its change ends its
    // actuation before that read begins, in the latest slot free then
    const last = plan.slots.get('up-600')![0]!;
    expect(last.expectedAt).toBe(B - MARGIN);
    expect(last.atTargetAt!).toBeLessThanOrEqual(B - MARGIN - SLOT + 1);
    const lead = plan.keys.get('default')!;
    expect(lead).toMatchObject({ key: 'default', boundary: B, changes: 600 });
    // 600 x 2 slots of 1.11 s + 18 s + the margin: 1,411 s (the read share's pace took 5,417 s)
    expect(lead.leadMs).toBeGreaterThanOrEqual(limit(600, 0));
    expect(lead.leadMs).toBeLessThanOrEqual(limit(600, 18_000) + 2 * SLOT);
    expect(autoLeadMs(600, RATE, TICK, 18_000)).toBe(lead.leadMs);
    expectFits(ps.map((p) => plan.slots.get(p.name)![0]!));
  });

  it.each([
    // changes, actuation (ms), readShare (no longer a bound of the plan's reads)
    [1, 3 * MIN, 0.25],
    [100, 3 * MIN, 0.25],
    [100, 1, 0.25],
    [250, 30_000, 0.1],
    [250, 30_000, 1],
    [600, 3 * MIN, 0.25],
    [40, 0, 0.25],
  ])(
    '%i scale-ups counting on %i ms, readShare %d: lead as autoLeadMs says, within the limit 2N slots + the actuation; every request in a slot of its own',
    (n, act, readShare) => {
      const ps = pipes(n, 'up');
      const plan = leadPlan(config(ps, [up('up', '2026-11-23T09:00:00Z')], { readShare }), DAY.from, DAY.to, {
        actuationMs: () => act,
      });
      const leadMs = plan.keys.get('default')!.leadMs;
      // an actuation counted is firstRead (15 s) at least: the daemon's confirming read is no sooner
      const counted = act > 0 ? Math.max(act, FIRST_READ_MS) : 0;
      expect(leadMs).toBe(autoLeadMs(n, RATE, TICK, counted));
      const slots = ps.map((p) => plan.slots.get(p.name)![0]!);
      expect(Math.max(...slots.map((s) => s.expectedAt))).toBe(B - MARGIN);
      if (act === 0) {
        expect(leadMs).toBe(Math.ceil(n * SLOT) + MARGIN);
        for (const s of slots) expect(s).not.toHaveProperty('atTargetAt');
      } else {
        expect(leadMs).toBeGreaterThanOrEqual(limit(n, 0));
        expect(leadMs).toBeLessThanOrEqual(limit(n, counted) + 2 * SLOT);
      }
      expectFits(slots);
    },
  );

  it('600 scale-ups at 10 per 10 s counting on 3 min: within 1.15 x (2N / (0.9 r) + A), the bench goal', () => {
    const leadMs = autoLeadMs(600, RATE, TICK, 3 * MIN);
    expect(leadMs).toBeLessThanOrEqual(1.15 * (2 * 600 * SLOT + 3 * MIN));
    // and the 30 s one
    expect(autoLeadMs(600, RATE, TICK, 30_000)).toBeLessThanOrEqual(1.15 * (2 * 600 * SLOT + 30_000));
  });

  it('the configured expectation (3 min) counts as a measured one: every change confirmed by its margin', () => {
    const c = config(pipes(100, 'up'), [up('up', '2026-11-23T09:00:00Z')], { actuation: ACT });
    const plan = leadPlan(c, DAY.from, DAY.to);
    const slots = [...plan.slots.values()].map((s) => s[0]!);
    for (const s of slots) expect(s.actuationMs).toBe(3 * MIN);
    expect(plan.keys.get('default')!.leadMs).toBe(autoLeadMs(100, RATE, TICK, 3 * MIN));
    expectFits(slots);
  });

  it("per pipe (the daemon's measured p95): each change its own actuation before its confirming read; one with none takes a change slot and no read", () => {
    const ps = pipes(3, 'up');
    const measured: Record<string, number> = { 'up-1': 30_000, 'up-2': 3 * MIN, 'up-3': 0 };
    const plan = leadPlan(config(ps, [up('up', '2026-11-23T09:00:00Z')]), DAY.from, DAY.to, {
      actuationMs: (p) => measured[p.name],
    });
    const [one, two, three] = ps.map((p) => plan.slots.get(p.name)![0]!);
    // up-3, the last in the config, goes first backwards: the latest slot, no read
    expect(three).toEqual(slot(B, Math.floor(B - MARGIN - SLOT)));
    // up-2's confirming read takes the slot before it, up-1's the one before that
    expect(two!.expectedAt).toBe(Math.ceil(B - MARGIN - SLOT));
    expect(one!.expectedAt).toBe(Math.ceil(B - MARGIN - 2 * SLOT));
    expect(two!.atTargetAt!).toBeLessThanOrEqual(two!.expectedAt - SLOT + 1);
    expect(one!.atTargetAt!).toBeLessThanOrEqual(one!.expectedAt - SLOT + 1);
    expect(one!.actuationMs).toBe(30_000);
    expect(two!.actuationMs).toBe(3 * MIN);
    expectFits([one!, two!, three!]);
    // a measurement the caller does not have falls back to the configured expectation, capped
    const capped = leadPlan(config(ps, [up('up', '2026-11-23T09:00:00Z')], { actuation: ACT }), DAY.from, DAY.to, {
      actuationMs: (p) => (p.name === 'up-1' ? 60 * MIN : undefined),
    });
    expect(capped.slots.get('up-1')![0]!.actuationMs).toBe(10 * MIN);
    expect(capped.slots.get('up-2')![0]!.actuationMs).toBe(3 * MIN);
  });

  it('a confirming read takes a slot the changes leave free while they wait out their actuation: no slot idles', () => {
    // 20 scale-ups counting on 5 slots of actuation: 40 requests in at most 40 slots + the actuation
    const ps = pipes(20, 'up');
    const actuation = { expectedMs: 0, maxMs: 10 * MIN, minSamples: 20, firstReadMs: 1_000 };
    const plan = leadPlan(config(ps, [up('up', '2026-11-23T09:00:00Z')], { actuation }), DAY.from, DAY.to, {
      actuationMs: () => 5 * SLOT,
    });
    const slots = ps.map((p) => plan.slots.get(p.name)![0]!);
    expectFits(slots);
    const first = Math.min(...slots.map((s) => s.start));
    expect(B - MARGIN - first).toBeLessThanOrEqual(40 * SLOT + 6 * SLOT + 1);
    // reads and changes interleave: some read ends before some change starts
    const reads = slots.map((s) => s.expectedAt);
    const changes = slots.map((s) => s.start);
    expect(Math.min(...reads)).toBeLessThan(Math.max(...changes));
  });

  it('any actuations and boundaries: every request in a slot of its own on the one lane, every change confirmed by its boundary less the margin, its confirming read after it is at target', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            minute: fc.integer({ min: 0, max: 120 }),
            acts: fc.array(fc.integer({ min: 0, max: 10 * MIN }), { minLength: 1, maxLength: 30 }),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        (boundaries) => {
          const policies = boundaries.map((b, i) => up(`p${i}`, new Date(B + b.minute * MIN).toISOString()));
          const ps = boundaries.flatMap((b, i) => pipes(b.acts.length, `p${i}`));
          const act = new Map<string, number>(
            boundaries.flatMap((b, i) => b.acts.map((a, j) => [`p${i}-${j + 1}`, a] as const)),
          );
          const plan = leadPlan(config(ps, policies), DAY.from, DAY.to, { actuationMs: (p) => act.get(p.name) });
          expectFits(ps.map((p) => plan.slots.get(p.name)![0]!));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('on a DST day the actuation counts back from the instant the window really starts', () => {
    // Europe/Berlin falls back on 2026-10-25: 02:30 happens twice; the window starts at the first
    // (02:30 CEST = 00:30Z).
    const plan = leadPlan(
      config(pipes(1, 'night'), [NIGHT_BATCH], { actuation: ACT }),
      at('2026-10-24T12:00:00Z'),
      at('2026-10-26T12:00:00Z'),
    );
    const boundaries = plan.slots.get('night-1')!.map((s) => s.boundary);
    expect(boundaries).toEqual([at('2026-10-25T00:30:00Z'), at('2026-10-26T01:30:00Z')]);
    const b = at('2026-10-25T00:30:00Z');
    // its read in the last slot before the margin, its change the actuation and a slot before it
    expect(plan.slots.get('night-1')![0]).toEqual(
      confirmed(b, b - MARGIN - SLOT - 3 * MIN - SLOT, 3 * MIN, b - MARGIN),
    );
  });

  it('on the spring-forward day too: 30 pipes confirmed by the instant the gap ends, within 2N slots + the actuation', () => {
    const ps = pipes(30, 'night');
    const plan = leadPlan(
      config(ps, [NIGHT_BATCH], { actuation: ACT }),
      at('2026-03-28T12:00:00Z'),
      at('2026-03-30T12:00:00Z'),
    );
    const b = at('2026-03-29T01:00:00Z');
    const slots = ps.map((p) => plan.slots.get(p.name)![0]!);
    for (const s of slots) expect(s.boundary).toBe(b);
    expect(Math.max(...slots.map((s) => s.expectedAt))).toBe(b - MARGIN);
    expect(b - Math.min(...slots.map((s) => s.start))).toBeLessThanOrEqual(limit(30, 3 * MIN) + 2 * SLOT);
    expectFits(slots);
  });
});

/** What every slot of a plan keeps to: its change ([start, start + slot]) and its confirming read
 *  (the slot ending at `expectedAt`) take slots of one lane, no two overlapping; each is confirmed
 *  by its boundary less the margin, its confirming read starts once it is expected at target (1 ms
 *  of rounding). */
function expectFits(slots: readonly LeadSlot[]): void {
  const requests: [number, number][] = [];
  for (const s of slots) {
    expect(s.expectedAt).toBeLessThanOrEqual(s.boundary - MARGIN + 1);
    requests.push([s.start, s.start + SLOT]);
    if (s.atTargetAt === undefined) {
      expect(s.actuationMs).toBe(0);
      continue;
    }
    expect(CONFIRM_READS_PLANNED).toBe(1);
    expect(s.expectedAt - SLOT).toBeGreaterThanOrEqual(s.atTargetAt - 1);
    requests.push([s.expectedAt - SLOT, s.expectedAt]);
  }
  requests.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < requests.length; i++) expect(requests[i - 1]![1]).toBeLessThanOrEqual(requests[i]![0] + 2);
}

describe('the span planned', () => {
  it('from the start of the hour, 48 h: the same plan for every replica within an hour', () => {
    expect(leadPlanSpan(at('2026-11-23T09:42:17Z'))).toEqual({
      from: at('2026-11-23T09:00:00Z'),
      to: at('2026-11-25T09:00:00Z'),
    });
  });

  it('a policy with no window, or no boundary in the span, plans nothing', () => {
    expect(
      leadPlan(config(pipes(2, 'p'), [policy({ name: 'p', behavior: NO_BEHAVIOR })]), DAY.from, DAY.to).slots.size,
    ).toBe(0);
  });
});
