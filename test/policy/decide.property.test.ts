import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KIND_FIELDS, limitViolation } from '../../src/api/index.js';
import type { ScalingField, ScalingValues } from '../../src/api/index.js';
import { decide } from '../../src/policy/decide.js';
import type { Bounds } from '../../src/policy/types.js';
import { activeWindows, nextBoundary, occurrenceAt } from '../../src/policy/windows.js';
import { DAY, instant, policy, pipeView, window } from './arbitraries.js';

const scenario = instant.chain((now) => fc.tuple(fc.constant(now), policy, pipeView(now)));

function inBounds(field: ScalingField, v: number, b: Bounds): boolean {
  const x = b[field];
  return x === undefined || ((x.min === undefined || v >= x.min) && (x.max === undefined || v <= x.max));
}

describe('decide() over random policies, views and times', () => {
  it('stays in the platform ranges and the pipe bounds, sends only kind fields, is deterministic', () => {
    fc.assert(
      fc.property(scenario, ([now, p, v]) => {
        const d = decide(p, now, v);
        expect(decide(p, now, v)).toEqual(d);
        const allowed = v.kind === null ? [] : KIND_FIELDS[v.kind];
        for (const values of [d.recommendation, d.desired, d.changes] as ScalingValues[]) {
          for (const [f, x] of Object.entries(values) as [ScalingField, number][]) {
            expect(allowed).toContain(f);
            expect(limitViolation(f, x)).toBeNull();
            expect(inBounds(f, x, v.bounds), `${f}=${x} bounds ${JSON.stringify(v.bounds)}`).toBe(true);
          }
        }
        for (const [f, x] of Object.entries(d.changes) as [ScalingField, number][]) {
          expect(d.desired[f]).toBe(x);
          expect(v.applied[f]).not.toBe(x);
        }
        expect(d.action === 'change').toBe(Object.keys(d.changes).length > 0);
        if (d.action !== 'change') expect(d.direction).toBe('none');
        if (d.action === 'skip') expect(d.reasons).toHaveLength(1);
        expect(d.reasons.length).toBeGreaterThan(0);
        for (const r of d.reasons) expect(r.message.length).toBeGreaterThan(0);
      }),
      { numRuns: 400 },
    );
  });
});

describe('windows over random windows and times', () => {
  it('an occurrence contains now, and nothing changes strictly between two boundaries', () => {
    fc.assert(
      fc.property(
        fc.array(window, { minLength: 1, maxLength: 3 }),
        instant,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (ws, after, frac) => {
          for (const w of ws) {
            const occ = occurrenceAt(w, after);
            if (occ !== null) expect(occ.start <= after && after < occ.end).toBe(true);
          }
          const limit = after + 8 * DAY;
          const next = nextBoundary(ws, after, limit) ?? limit;
          expect(next).toBeGreaterThan(after);
          const names = (t: number): string[] => activeWindows(ws, t).active.map((w) => `${w.name}:${w.priority}`);
          // the state just after `after` holds until just before the next boundary
          const probe = after + 1 + Math.floor(frac * (next - after - 1));
          if (probe < next) expect(names(probe)).toEqual(names(after + 1 < next ? after + 1 : probe));
        },
      ),
      { numRuns: 200 },
    );
  });
});
