// fast-check arbitraries for the policy engine's property tests: policies, windows, behaviors,
// bounds and pipe views over 2026-2027, including values outside the platform's ranges.
import fc from 'fast-check';
import { PipeState, ReversePrivateEndpointStatus, SCALING_FIELDS, SCALING_LIMITS } from '../../src/api/index.js';
import type { ScalingField } from '../../src/api/index.js';
import type { Bounds, FieldTarget, PipeView, Policy, Target, Window } from '../../src/policy/types.js';
import { ALL_DAYS } from './build.js';

export const FROM = Date.UTC(2026, 0, 1);
export const TO = Date.UTC(2028, 0, 1);
export const DAY = 86_400_000;
export const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'UTC',
  'Asia/Kolkata',
  'Australia/Lord_Howe',
  'America/Sao_Paulo',
];

export const instant = fc.integer({ min: FROM, max: TO });

/** A value of the field, on the platform's grid, inside its range. */
export function inRange(field: ScalingField): fc.Arbitrary<number> {
  const l = SCALING_LIMITS[field];
  return l.integer
    ? fc.integer({ min: l.min, max: l.max })
    : fc.integer({ min: l.min * 4, max: l.max * 4 }).map((x) => x / 4);
}

/** A value a policy may name: also outside the range and off the grid, to exercise the clamps. */
function anyValue(field: ScalingField): fc.Arbitrary<number> {
  const l = SCALING_LIMITS[field];
  return fc.oneof(inRange(field), fc.double({ min: l.min - 5, max: l.max + 5, noNaN: true }));
}

function fieldTarget(field: ScalingField): fc.Arbitrary<FieldTarget> {
  return fc.oneof(
    anyValue(field).map((value) => ({ value })),
    fc.tuple(anyValue(field), anyValue(field)).map(([a, b]) => ({ min: Math.min(a, b), max: Math.max(a, b) })),
  );
}

export function partialByField<T>(
  arb: (f: ScalingField) => fc.Arbitrary<T>,
): fc.Arbitrary<Partial<Record<ScalingField, T>>> {
  return fc.record(
    Object.fromEntries(SCALING_FIELDS.map((f) => [f, arb(f)])) as Record<ScalingField, fc.Arbitrary<T>>,
    { requiredKeys: [] },
  );
}

export const target: fc.Arbitrary<Target> = partialByField(fieldTarget);
const hm = fc.record({ hour: fc.integer({ min: 0, max: 23 }), minute: fc.constantFrom(0, 15, 30, 45, 59) });
const days = fc.subarray(ALL_DAYS, { minLength: 1 });
export const localDate = fc.integer({ min: FROM, max: TO }).map((t) => new Date(t).toISOString().slice(0, 10));

const recurringWindow: fc.Arbitrary<Window> = fc
  .record({
    name: fc.constantFrom('a', 'b', 'c', 'd'),
    priority: fc.integer({ min: 0, max: 2 }),
    target,
    days,
    start: hm,
    end: fc.option(hm, { nil: undefined }),
    durationMs: fc.integer({ min: 60_000, max: 3 * DAY }),
    timezone: fc.constantFrom(...ZONES),
    exclude: fc.array(localDate, { maxLength: 3 }),
  })
  .filter((w) => w.end?.hour !== w.start.hour || w.end.minute !== w.start.minute)
  .map(({ end, durationMs, ...w }) => ({
    kind: 'recurring' as const,
    ...w,
    ...(end !== undefined ? { end } : { durationMs }),
  }));

const oneOffWindow: fc.Arbitrary<Window> = fc
  .record({
    name: fc.constantFrom('x', 'y'),
    priority: fc.integer({ min: 0, max: 2 }),
    target,
    from: instant,
    length: fc.integer({ min: 1, max: 10 * DAY }),
  })
  .map(({ length, ...w }) => ({ kind: 'oneOff' as const, ...w, to: w.from + length }));

export const window = fc.oneof(recurringWindow, oneOffWindow);

export const behavior = fc.record({
  scaleUp: fc.record({
    maxStep: partialByField((f) => inRange(f).filter((x) => x > 0)),
    cooldownMs: fc.integer({ min: 0, max: 3_600_000 }),
    leadTime: fc.constantFrom<'auto' | number>('auto', 0, 60_000, 20 * 60_000, 3 * 3_600_000),
  }),
  scaleDown: fc.record({
    maxStep: partialByField((f) => inRange(f).filter((x) => x > 0)),
    cooldownMs: fc.integer({ min: 0, max: 3_600_000 }),
    stabilizationMs: fc.integer({ min: 0, max: 3_600_000 }),
  }),
});

export const policy: fc.Arbitrary<Policy> = fc.record({
  name: fc.constant('p'),
  baseline: target,
  windows: fc.array(window, { maxLength: 4 }),
  behavior,
});

/** Pipe bounds as the loader admits them: on the platform grid, inside the range, min <= max. */
export const bounds: fc.Arbitrary<Bounds> = partialByField((f) =>
  fc.tuple(fc.option(inRange(f), { nil: undefined }), fc.option(inRange(f), { nil: undefined })).map(([a, b]) => {
    if (a !== undefined && b !== undefined) return { min: Math.min(a, b), max: Math.max(a, b) };
    return { ...(a !== undefined ? { min: a } : {}), ...(b !== undefined ? { max: b } : {}) };
  }),
);

export function pipeView(now: number): fc.Arbitrary<PipeView> {
  const near = fc.integer({ min: now - 2 * 3_600_000, max: now + 60_000 });
  return fc.record({
    kind: fc.constantFrom('stream', 'stream', 'objectStorage', 'database', null),
    state: fc.option(fc.constantFrom(...PipeState.options), { nil: null, freq: 10 }),
    applied: partialByField(inRange),
    bounds,
    lastChange: fc.record({ up: near, down: near }, { requiredKeys: [] }),
    recommendations: fc.array(fc.record({ at: near, values: partialByField(inRange) }), { maxLength: 5 }),
    endpoints: fc.dictionary(
      fc.constantFrom('e1', 'e2'),
      fc.constantFrom(...ReversePrivateEndpointStatus.options, 'Ready', 'Ready'),
    ),
    paused: fc.option(fc.record({ reason: fc.constant('ops'), until: fc.option(near, { nil: undefined }) }), {
      nil: undefined,
      freq: 5,
    }),
  });
}
