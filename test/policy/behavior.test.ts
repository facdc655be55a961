import { describe, expect, it } from 'vitest';
import { applyBehavior, cooldownRemaining, stabilizationFloor } from '../../src/policy/behavior.js';
import type { Behavior, ReasonCode } from '../../src/policy/types.js';
import type { BehaviorView } from '../../src/policy/behavior.js';
import { NO_BEHAVIOR } from './build.js';

const NOW = 1_800_000_000_000;
const S = 1000;
const M = 60 * S;

function behavior(o: {
  upStep?: number;
  upCooldown?: number;
  downStep?: number;
  downCooldown?: number;
  stabilization?: number;
}): Behavior {
  return {
    scaleUp: { maxStep: o.upStep === undefined ? {} : { replicas: o.upStep }, cooldownMs: o.upCooldown ?? 0 },
    scaleDown: {
      maxStep: o.downStep === undefined ? {} : { replicas: o.downStep },
      cooldownMs: o.downCooldown ?? 0,
      stabilizationMs: o.stabilization ?? 0,
    },
  };
}

interface Case {
  name: string;
  b: Behavior;
  applied: number | undefined;
  rec: number;
  lastUp?: number;
  lastDown?: number;
  history?: { ago: number; replicas: number }[];
  want: number;
  reasons: { code: ReasonCode; message: string }[];
}

const CASES: Case[] = [
  { name: 'no behavior: follow the recommendation up', b: NO_BEHAVIOR, applied: 2, rec: 8, want: 8, reasons: [] },
  { name: 'no behavior: follow the recommendation down', b: NO_BEHAVIOR, applied: 8, rec: 2, want: 2, reasons: [] },
  {
    name: 'unknown applied: take the recommendation, no rule applies',
    b: behavior({ upStep: 1, upCooldown: 10 * M }),
    applied: undefined,
    rec: 8,
    lastUp: NOW,
    want: 8,
    reasons: [],
  },
  {
    name: 'equal: nothing to do',
    b: behavior({ upCooldown: 10 * M }),
    applied: 4,
    rec: 4,
    lastUp: NOW,
    want: 4,
    reasons: [],
  },
  // cooldown alone, per direction
  {
    name: 'up cooldown holds a scale-up',
    b: behavior({ upCooldown: 60 * S }),
    applied: 2,
    rec: 6,
    lastUp: NOW - 40 * S,
    want: 2,
    reasons: [{ code: 'cooldown', message: 'replicas scale-up 2 -> 6 held: scale-up cooldown 1m, 20s remaining' }],
  },
  {
    name: 'up cooldown over at exactly its end',
    b: behavior({ upCooldown: 60 * S }),
    applied: 2,
    rec: 6,
    lastUp: NOW - 60 * S,
    want: 6,
    reasons: [],
  },
  {
    name: 'up cooldown does not hold a scale-down',
    b: behavior({ upCooldown: 60 * S }),
    applied: 6,
    rec: 2,
    lastUp: NOW,
    want: 2,
    reasons: [],
  },
  {
    name: 'a recent scale-down does not hold a scale-up',
    b: behavior({ downCooldown: 5 * M }),
    applied: 2,
    rec: 6,
    lastDown: NOW,
    want: 6,
    reasons: [],
  },
  {
    name: 'down cooldown holds a scale-down',
    b: behavior({ downCooldown: 5 * M }),
    applied: 6,
    rec: 2,
    lastDown: NOW - 90 * S,
    want: 6,
    reasons: [
      { code: 'cooldown', message: 'replicas scale-down 6 -> 2 held: scale-down cooldown 5m, 3m30s remaining' },
    ],
  },
  // maxStep alone
  {
    name: 'maxStep limits a scale-up',
    b: behavior({ upStep: 4 }),
    applied: 2,
    rec: 10,
    want: 6,
    reasons: [{ code: 'max_step', message: 'replicas scale-up 2 -> 10 limited to 6: scale-up maxStep 4' }],
  },
  { name: 'maxStep equal to the move: no limit', b: behavior({ upStep: 4 }), applied: 2, rec: 6, want: 6, reasons: [] },
  {
    name: 'maxStep limits a scale-down',
    b: behavior({ downStep: 2 }),
    applied: 8,
    rec: 2,
    want: 6,
    reasons: [{ code: 'max_step', message: 'replicas scale-down 8 -> 2 limited to 6: scale-down maxStep 2' }],
  },
  {
    name: 'scale-up maxStep does not limit a scale-down',
    b: behavior({ upStep: 1 }),
    applied: 8,
    rec: 2,
    want: 2,
    reasons: [],
  },
  // stabilization alone
  {
    name: 'stabilization: a recent higher recommendation keeps the pipe up',
    b: behavior({ stabilization: 10 * M }),
    applied: 6,
    rec: 2,
    history: [
      { ago: 9 * M, replicas: 6 },
      { ago: 1 * M, replicas: 2 },
    ],
    want: 6,
    reasons: [
      {
        code: 'stabilization',
        message: 'replicas stays at 6 instead of going down to 2: highest recommendation in the last 10m is 6',
      },
    ],
  },
  {
    name: 'stabilization: goes down to the highest recent recommendation',
    b: behavior({ stabilization: 10 * M }),
    applied: 8,
    rec: 2,
    history: [
      { ago: 5 * M, replicas: 4 },
      { ago: 2 * M, replicas: 3 },
    ],
    want: 4,
    reasons: [
      { code: 'stabilization', message: 'replicas goes down to 4, not 2: highest recommendation in the last 10m is 4' },
    ],
  },
  {
    name: 'stabilization: older recommendations no longer count',
    b: behavior({ stabilization: 10 * M }),
    applied: 6,
    rec: 2,
    history: [{ ago: 10 * M + 1, replicas: 6 }],
    want: 2,
    reasons: [],
  },
  {
    name: 'stabilization: a recommendation exactly at the window edge counts',
    b: behavior({ stabilization: 10 * M }),
    applied: 6,
    rec: 2,
    history: [{ ago: 10 * M, replicas: 5 }],
    want: 5,
    reasons: [
      { code: 'stabilization', message: 'replicas goes down to 5, not 2: highest recommendation in the last 10m is 5' },
    ],
  },
  {
    name: 'stabilization: a higher recommendation never raises above applied',
    b: behavior({ stabilization: 10 * M }),
    applied: 4,
    rec: 2,
    history: [{ ago: 1 * M, replicas: 9 }],
    want: 4,
    reasons: [
      {
        code: 'stabilization',
        message: 'replicas stays at 4 instead of going down to 2: highest recommendation in the last 10m is 9',
      },
    ],
  },
  {
    name: 'stabilization does not touch a scale-up',
    b: behavior({ stabilization: 10 * M }),
    applied: 2,
    rec: 5,
    history: [{ ago: 1 * M, replicas: 9 }],
    want: 5,
    reasons: [],
  },
  // together
  {
    name: 'stabilization then maxStep',
    b: behavior({ stabilization: 10 * M, downStep: 1 }),
    applied: 8,
    rec: 2,
    history: [{ ago: 3 * M, replicas: 5 }],
    want: 7,
    reasons: [
      { code: 'stabilization', message: 'replicas goes down to 5, not 2: highest recommendation in the last 10m is 5' },
      { code: 'max_step', message: 'replicas scale-down 8 -> 5 limited to 7: scale-down maxStep 1' },
    ],
  },
  {
    name: 'stabilization then cooldown',
    b: behavior({ stabilization: 10 * M, downCooldown: 5 * M, downStep: 1 }),
    applied: 8,
    rec: 2,
    history: [{ ago: 3 * M, replicas: 5 }],
    lastDown: NOW - 4 * M,
    want: 8,
    reasons: [
      { code: 'stabilization', message: 'replicas goes down to 5, not 2: highest recommendation in the last 10m is 5' },
      { code: 'cooldown', message: 'replicas scale-down 8 -> 5 held: scale-down cooldown 5m, 1m remaining' },
    ],
  },
  {
    name: 'cooldown over, then maxStep',
    b: behavior({ upCooldown: 60 * S, upStep: 4 }),
    applied: 1,
    rec: 10,
    lastUp: NOW - 2 * M,
    want: 5,
    reasons: [{ code: 'max_step', message: 'replicas scale-up 1 -> 10 limited to 5: scale-up maxStep 4' }],
  },
];

describe('applyBehavior, one field', () => {
  it.each(CASES)('$name', (c) => {
    const view: BehaviorView = {
      applied: c.applied === undefined ? {} : { replicas: c.applied },
      lastChange: {
        ...(c.lastUp !== undefined ? { up: c.lastUp } : {}),
        ...(c.lastDown !== undefined ? { down: c.lastDown } : {}),
      },
      recommendations: (c.history ?? []).map((h) => ({ at: NOW - h.ago, values: { replicas: h.replicas } })),
    };
    const r = applyBehavior(c.b, NOW, view, { replicas: c.rec }, ['replicas']);
    expect(r.desired).toEqual({ replicas: c.want });
    expect(r.reasons).toEqual(c.reasons.map((x) => ({ ...x, field: 'replicas' })));
  });
});

describe('applyBehavior, several fields', () => {
  it('each field moves in its own direction with its own rules', () => {
    const b: Behavior = {
      scaleUp: { maxStep: { replicas: 2 }, cooldownMs: 0 },
      scaleDown: { maxStep: { replicaMemoryGb: 1 }, cooldownMs: 5 * M, stabilizationMs: 0 },
    };
    const view: BehaviorView = {
      applied: { replicas: 2, replicaMemoryGb: 4, replicaCpuMillicores: 500 },
      lastChange: { down: NOW - M },
      recommendations: [],
    };
    const r = applyBehavior(b, NOW, view, { replicas: 6, replicaMemoryGb: 1, replicaCpuMillicores: 500 }, [
      'replicas',
      'replicaCpuMillicores',
      'replicaMemoryGb',
    ]);
    expect(r.desired).toEqual({ replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 4 });
    expect(r.reasons.map((x) => [x.code, x.field])).toEqual([
      ['max_step', 'replicas'],
      ['cooldown', 'replicaMemoryGb'],
    ]);
  });

  it('only the given fields are decided', () => {
    const view: BehaviorView = { applied: {}, lastChange: {}, recommendations: [] };
    expect(applyBehavior(NO_BEHAVIOR, NOW, view, { replicas: 3, concurrency: 4 }, ['concurrency']).desired).toEqual({
      concurrency: 4,
    });
  });
});

describe('helpers', () => {
  it('cooldownRemaining', () => {
    expect(cooldownRemaining(undefined, 60 * S, NOW)).toBe(0);
    expect(cooldownRemaining(NOW - 10 * S, 60 * S, NOW)).toBe(50 * S);
    expect(cooldownRemaining(NOW - 70 * S, 60 * S, NOW)).toBe(0);
  });

  it('stabilizationFloor ignores future entries and other fields', () => {
    const recs = [
      { at: NOW + 1, values: { replicas: 9 } },
      { at: NOW - 1, values: { concurrency: 30 } },
      { at: NOW - 1, values: { replicas: 3 } },
    ];
    expect(stabilizationFloor(recs, 'replicas', NOW, 10 * M, 2)).toBe(3);
    expect(stabilizationFloor(recs, 'replicas', NOW, 0, 2)).toBe(2);
  });
});
