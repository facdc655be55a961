// Capacity spent early and capacity short at a window start (early-capacity.ts): the step from what
// the schedule needed before the boundary to the window's target, held from the instant it was in
// force to the boundary (early) or from the boundary to that instant (short), in real minutes.
import { describe, expect, it } from 'vitest';
import {
  capacityAround,
  limitEarlyMs,
  limitLeadMs,
  NO_MINUTES,
  plannedCapacity,
  plannedCapacityOver,
  stepPerMinute,
  verdictCapacity,
} from '../../src/policy/early-capacity.js';
import { diffConfigs } from '../../src/policy/diff.js';
import { fieldsOfPipe, slotCapacity } from '../../src/policy/early-capacity.js';
import { needAround } from '../../src/policy/lead-plan.js';
import { plan } from '../../src/policy/plan.js';
import { judgeVerdict, verdictDue, windowStartsIn } from '../../src/policy/verdict.js';
import { at, oneKeyConfig, oneOff, policy, recurring, salePolicy, view } from './build.js';

const STREAM = ['replicas', 'replicaCpuMillicores', 'replicaMemoryGb'] as const;
const MIN = 60_000;
const B = at('2026-11-23T09:00:00Z');

describe('stepPerMinute', () => {
  it('counts replicas, cores and GB of a stream pipe; a field one side leaves unset is the other side', () => {
    expect(
      stepPerMinute(
        { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
        { replicas: 6, replicaCpuMillicores: 1000 },
      ),
    ).toEqual({ replicaMinutes: 4, coreMinutes: 6 - 1, gbMinutes: 8, slotMinutes: 0 });
  });

  it('concurrency slots for an object storage pipe; nothing for a scale-down or a pipe with no fields', () => {
    expect(stepPerMinute({ concurrency: 2 }, { concurrency: 5 })).toEqual({ ...NO_MINUTES, slotMinutes: 3 });
    expect(stepPerMinute({ replicas: 6 }, { replicas: 2 })).toEqual(NO_MINUTES);
    expect(stepPerMinute({}, {})).toEqual(NO_MINUTES);
  });
});

describe('capacityAround', () => {
  const step = { boundary: B, before: { replicas: 2 }, target: { replicas: 6 }, until: B + 10 * MIN };

  it('in force 15 minutes before the boundary: 4 replicas x 15 min early, nothing short', () => {
    expect(capacityAround({ ...step, inForceAt: B - 15 * MIN })).toEqual({
      early: { ...NO_MINUTES, replicaMinutes: 60 },
      short: NO_MINUTES,
    });
  });

  it('in force 3 minutes after it: short by 4 replicas x 3 min, nothing early', () => {
    expect(capacityAround({ ...step, inForceAt: B + 3 * MIN })).toEqual({
      early: NO_MINUTES,
      short: { ...NO_MINUTES, replicaMinutes: 12 },
    });
  });

  it('never in force: short until `until`; early looks back at most the longest lead (24 h)', () => {
    expect(capacityAround({ ...step, inForceAt: null }).short.replicaMinutes).toBe(40);
    expect(capacityAround({ ...step, inForceAt: B - 48 * 60 * MIN }).early.replicaMinutes).toBe(4 * 24 * 60);
  });
});

describe('verdictCapacity: from what the daemon keeps (the due verdict, record.confirmed)', () => {
  const business = recurring({
    name: 'business',
    start: '09:00',
    end: '17:00',
    timezone: 'UTC',
    days: ['mon', 'tue', 'wed', 'thu', 'fri'],
    target: { replicas: { value: 6 }, replicaCpuMillicores: { value: 1000 } },
  });
  const p = policy({
    baseline: { replicas: { value: 2 }, replicaCpuMillicores: { value: 500 }, replicaMemoryGb: { value: 2 } },
    windows: [business],
  });
  const [start] = windowStartsIn(p, {}, STREAM, B - 1, B);
  const due = verdictDue(start!, 10 * MIN);

  it('the due verdict carries what the schedule needed before the boundary', () => {
    expect(due.before).toEqual({ replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 });
    expect(due.target).toEqual({ replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 2 });
  });

  it('met: confirmed 7.5 minutes early', () => {
    const confirmed = { values: due.target, at: B - 7.5 * MIN };
    const judged = judgeVerdict(due, confirmed, B)!;
    expect(judged.verdict).toBe('met');
    expect(verdictCapacity(due, judged)).toEqual({
      early: { replicaMinutes: 30, coreMinutes: 5 * 7.5, gbMinutes: 8 * 7.5, slotMinutes: 0 },
      short: NO_MINUTES,
    });
  });

  it('late by 2 minutes: short 4 replicas x 2 min; missed: short to the deadline; excluded: none', () => {
    const late = judgeVerdict(due, { values: due.target, at: B + 2 * MIN }, B + 2 * MIN)!;
    expect(verdictCapacity(due, late)?.short.replicaMinutes).toBe(8);
    const missed = judgeVerdict(due, null, due.deadline)!;
    expect(verdictCapacity(due, missed)?.short.replicaMinutes).toBe(40);
    // superseded by a start 5 minutes in: short until then
    expect(verdictCapacity(due, { verdict: 'missed', reason: 'superseded' }, B + 5 * MIN)?.short.replicaMinutes).toBe(
      20,
    );
    expect(verdictCapacity(due, { verdict: 'excluded', reason: 'state_lost' })).toBeNull();
    // a due verdict an older version opened has no `before`: no figure rather than a guess
    const { before: _, ...old } = due;
    expect(verdictCapacity(old, late)).toBeNull();
  });

  it('spring forward (Europe/Berlin, 2027-03-28): minutes are real minutes, not wall-clock ones', () => {
    const early = recurring({ name: 'early', start: '03:00', end: '12:00', timezone: 'Europe/Berlin' });
    const q = policy({ windows: [{ ...early, target: { replicas: { value: 5 } } }] });
    const starts = windowStartsIn(q, {}, STREAM, at('2027-03-27T12:00:00Z'), at('2027-03-28T12:00:00Z'));
    // 03:00 CEST = 01:00Z; confirmed at 01:55 CET (00:55Z): 65 wall-clock minutes, 5 real ones
    expect(starts.map((s) => new Date(s.boundary).toISOString())).toEqual(['2027-03-28T01:00:00.000Z']);
    const d = verdictDue(starts[0]!, 10 * MIN);
    const judged = judgeVerdict(d, { values: { replicas: 5 }, at: at('2027-03-28T00:55:00Z') }, d.boundary)!;
    expect(verdictCapacity(d, judged)?.early.replicaMinutes).toBe(3 * 5);
  });

  it('fall back (Europe/Berlin, 2027-10-31): early over the repeated hour counts it once per real minute', () => {
    const w = recurring({ name: 'w', start: '03:00', end: '12:00', timezone: 'Europe/Berlin' });
    const q = policy({ windows: [{ ...w, target: { replicas: { value: 5 } } }] });
    const [s] = windowStartsIn(q, {}, STREAM, at('2027-10-30T12:00:00Z'), at('2027-10-31T12:00:00Z'));
    // 03:00 CET = 02:00Z; confirmed at 02:30 CEST (00:30Z): 30 wall-clock minutes, 90 real ones
    expect(new Date(s!.boundary).toISOString()).toBe('2027-10-31T02:00:00.000Z');
    const d = verdictDue(s!, 10 * MIN);
    const judged = judgeVerdict(d, { values: { replicas: 5 }, at: at('2027-10-31T00:30:00Z') }, d.boundary)!;
    expect(verdictCapacity(d, judged)?.early.replicaMinutes).toBe(3 * 90);
  });
});

describe('planned capacity: the lead plan send slot plus the actuation it counts on', () => {
  it('a slot that goes 10 minutes before its boundary with 3 minutes of actuation spends 7 minutes early', () => {
    const slot = { boundary: B, start: B - 10 * MIN, actuationMs: 3 * MIN, expectedAt: B - MIN };
    expect(plannedCapacity(slot, { replicas: 2 }, { replicas: 6 }).early.replicaMinutes).toBe(28);
    const late = { ...slot, start: B - MIN };
    expect(plannedCapacity(late, { replicas: 2 }, { replicas: 6 })).toEqual({
      early: NO_MINUTES,
      short: { ...NO_MINUTES, replicaMinutes: 8 },
    });
  });

  it("over a period: each boundary's slot in the plan in force before it, summed per pipe", () => {
    const w = oneOff({
      name: 'sale',
      from: '2026-11-23T09:00:00Z',
      to: '2026-11-23T12:00:00Z',
      target: { replicas: { value: 6 } },
    });
    const config = oneKeyConfig({
      names: ['a', 'b'],
      key: 'k',
      policyName: 'sale',
      policy: policy({ windows: [w] }),
      kind: 'stream',
    });
    const over = plannedCapacityOver(config, at('2026-11-23T00:00:00Z'), at('2026-11-24T00:00:00Z'));
    expect([...over.keys()].sort()).toEqual(['a', 'b']);
    for (const c of over.values()) {
      expect(c.early.replicaMinutes).toBeGreaterThan(0);
      expect(c.short).toEqual(NO_MINUTES);
    }
    // nothing rises in a period without a boundary
    expect(plannedCapacityOver(config, at('2026-11-24T00:00:00Z'), at('2026-11-25T00:00:00Z')).size).toBe(0);
  });

  it('needAround: the floors just before the boundary and from it on', () => {
    const w = oneOff({
      name: 's',
      from: '2026-11-23T09:00:00Z',
      to: '2026-11-23T10:00:00Z',
      target: { replicas: { min: 3, max: 8 } },
    });
    expect(needAround(policy({ windows: [w] }), {}, STREAM, B)).toEqual({
      before: { replicas: 2 },
      after: { replicas: 3 },
    });
  });
});

describe('the limit: 2N / (0.9 r) + A', () => {
  it('600 scale-ups on a key of 10 requests per 10 s with 3 minutes of actuation lead about 25 minutes', () => {
    const rate = { requests: 10, perMs: 10_000 };
    expect(limitLeadMs(600, rate, 3 * MIN) / MIN).toBeCloseTo((2 * 600) / 0.9 / 60 + 3, 6);
    // the i-th of n early by (n - i) slots of 2 / (0.9 r): n (n + 1) / 2 slots in all
    expect(limitEarlyMs(3, rate)).toBeCloseTo((6 * (2 * 10_000)) / (0.9 * 10), 6);
  });
});

describe('one definition: plan, diff and the verdict count a boundary alike', () => {
  // two pipes on one key, a sale from 09:00: 2 -> 6 replicas of 0.5 -> 1 core (1 -> 6 cores)
  const config = oneKeyConfig({ names: ['a', 'b'], key: 'k', policyName: 'sale', policy: salePolicy() });
  const pipes = config.pipes;
  const views = { a: view(), b: view() };
  const AT = B - 20 * MIN; // in the hour of the boundary: the plan in force is the one before it

  it('plan (its next slot and every slot), diff (the period over the boundary) and the verdict of a pipe confirmed when the plan expected it in force', () => {
    const entries = plan(config, views, AT);
    const side = { config, views, changes: [] };
    const diff = diffConfigs(side, side, AT, B + 60 * MIN);
    for (const pipe of pipes) {
      const e = entries.find((x) => x.pipe.name === pipe.name)!;
      const slot = e.leadSlot!;
      const c = e.leadCapacity!;
      expect(slot.boundary).toBe(B);
      expect(e.leadSlots[0]).toEqual({ slot, capacity: c });
      expect(slotCapacity(pipe, config.policies.sale!, slot, 'stream')).toEqual(c);
      // in force at the send plus the 60 s counted on, until 09:00: 4 replicas, 4 cores, 8 GB a minute
      const early = (B - slot.start - slot.actuationMs) / MIN;
      expect(early).toBeGreaterThan(0);
      expect(c.early.replicaMinutes).toBeCloseTo(4 * early, 9);
      expect(c.early.coreMinutes).toBeCloseTo(5 * early, 9);
      expect(c.early.gbMinutes).toBeCloseTo(8 * early, 9);
      expect(c.short).toEqual(NO_MINUTES);

      expect(plannedCapacityOver(config, AT, B).get(pipe.name)).toEqual(c);
      expect(diff.pipes.find((d) => d.pipe === pipe.name)?.spent).toEqual({ base: c, head: c });

      const fields = fieldsOfPipe(pipe, config.policies.sale!, 'stream');
      const [start] = windowStartsIn(config.policies.sale!, pipe.bounds, fields, B - 1, B);
      const due = verdictDue(start!, 10 * MIN);
      const judged = judgeVerdict(due, { values: due.target, at: slot.start + slot.actuationMs }, B)!;
      expect(judged.verdict).toBe('met');
      expect(verdictCapacity(due, judged)).toEqual(c);
    }
    expect(diff.total.spent.head.early.replicaMinutes).toBeCloseTo(
      entries.reduce((t, e) => t + e.leadCapacity!.early.replicaMinutes, 0),
      9,
    );
  });

  it("a pipe's kind as read counts its fields in plan and diff alike", () => {
    // a policy of both kinds' fields implies none: all fields count until a read says stream
    const mixed = {
      ...config,
      policies: {
        sale: {
          ...config.policies.sale!,
          baseline: { ...config.policies.sale!.baseline, concurrency: { value: 2 } },
          windows: config.policies.sale!.windows.map((w) => ({
            ...w,
            target: { ...w.target, concurrency: { value: 4 } },
          })),
        },
      },
    };
    const read = plan(mixed, views, AT)[0]!.leadCapacity!;
    expect(read.early.replicaMinutes).toBeGreaterThan(0);
    expect(read.early.slotMinutes).toBe(0);
    const side = { config: mixed, views, changes: [] };
    expect(diffConfigs(side, side, AT, B).pipes[0]!.spent.head).toEqual(read);
    // not read: the fields of every kind
    expect(plannedCapacityOver(mixed, AT, B).get('a')?.early.slotMinutes).toBeGreaterThan(0);
  });
});
