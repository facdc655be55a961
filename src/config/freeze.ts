// The config's keys for a human in the loop: a policy's `freezes` (when it sends no scale-downs, or
// no changes) and `behavior.onDrift` / `behavior.overrides` (what a change made by hand becomes,
// and what `pipescaler override` may do). Times as windows write them (window-timing.ts).
import { z } from 'zod';
import type { Freeze, OnDrift, OverridesAllowed } from '../policy/index.js';
import { didYouMean } from './did-you-mean.js';
import { durationMs, field, lowerName } from './fields.js';
import type { Strict } from './metric.js';
import { timingOf, timingShape } from './window-timing.js';

const SCOPES = ['scaleDown', 'all'] as const;

/** `freezes: [{ name?, scope?, <window timing> }]`; scope defaults to all. */
export function freezesSchema(strict: Strict) {
  const one = strict({
    name: lowerName('freeze name').optional(),
    scope: field<(typeof SCOPES)[number]>((v) =>
      (SCOPES as readonly unknown[]).includes(v)
        ? { ok: v as (typeof SCOPES)[number] }
        : `must be scaleDown (no scale-downs) or all (no changes)${typeof v === 'string' ? didYouMean(v, SCOPES) : ''}`,
    ).optional(),
    ...timingShape,
  }).transform((f, ctx): Freeze => ({
    scope: f.scope ?? 'all',
    window: { name: f.name ?? '', priority: 0, target: {}, ...timingOf(f, ctx, 'freeze') },
  }));
  return z
    .array(one)
    .transform((list): Freeze[] =>
      list.map((f, i) => (f.window.name === '' ? { ...f, window: { ...f.window, name: `freeze-${i + 1}` } } : f)),
    );
}

/** `behavior.onDrift`: revert | adoptAsFloor | { hold: <duration> }. */
export function onDriftSchema(strict: Strict) {
  const hold = strict({ hold: durationMs() }).transform((h, ctx): OnDrift => {
    if (h.hold <= 0) ctx.addIssue({ code: 'custom', path: ['hold'], message: 'must be above 0 (e.g. 2h)' });
    return { kind: 'hold', durationMs: h.hold };
  });
  const word = field<OnDrift>((v) =>
    v === 'revert' || v === 'adoptAsFloor'
      ? { ok: { kind: v } }
      : `must be revert, adoptAsFloor or { hold: <duration> } (e.g. { hold: 2h })${typeof v === 'string' ? didYouMean(v, ['revert', 'adoptAsFloor', 'hold']) : ''}`,
  );
  // an object is a hold (its duration's own message), anything else one of the words
  return z.unknown().transform((v, ctx): OnDrift => {
    const r = (typeof v === 'object' && v !== null ? hold : word).safeParse(v);
    if (r.success) return r.data;
    for (const i of r.error.issues) ctx.addIssue(i as never);
    return z.NEVER;
  });
}

export const overridesAllowed = field<OverridesAllowed>((v) =>
  v === 'any' || v === 'scaleUpOnly'
    ? { ok: v }
    : `must be any or scaleUpOnly${typeof v === 'string' ? didYouMean(v, ['any', 'scaleUpOnly']) : ''}`,
);
