// The measured actuation at a key's boundaries, as bench/actuation.ts runs them but on the
// platform's scale and a fixed clock: N pipes on one key at 10 requests per 10 s, half of them
// scaled up at a boundary T on the key's lead plan (lead-schedule.ts scheduleKey), the other half
// down after it; the changes found due at the ticks (every 30 s) and sent one a slot before any
// read; the confirmation reads (confirmation.ts) in the slots the changes leave free, the oldest
// change's first; each confirmation a sample as the daemon records it (sampledAt, actuationSample:
// the instant its read was due, with the last read that did not show the target as its lower end)
// in the kind's last KIND_SAMPLES_KEPT; the estimate (estimateOf) read again every minute for the
// confirmation reads, and at each boundary for its plan. The platform carries every change out
// exactly D after its send, so the propagation's p95 is D. For each D: a boundary on the plan of
// the budget alone (evaluate.actuation.measured false), then boundaries counting what the ones
// before measured.
import { describe, expect, it } from 'vitest';
import { estimateOf, KIND_SAMPLES_KEPT } from '../../src/daemon/store/actuation-store.js';
import {
  actuationSample,
  confirmTiming,
  firstDueAt,
  nextDueAt,
  sampledAt,
} from '../../src/daemon/lifecycle/confirmation.js';
import { keyLanes, scheduleKey } from '../../src/policy/lead-schedule.js';

const SEC = 1_000;
const MIN = 60 * SEC;
const TICK = 30 * SEC;
const RATE = { requests: 10, perMs: 10 * SEC };
const SLOT = RATE.perMs / RATE.requests;
const SETTINGS = { expectedMs: 0, maxMs: 10 * MIN, minSamples: 20, firstReadMs: 15 * SEC };
const UP = { target: { replicas: 4 }, notYet: [{ replicas: 2 }] };
const DOWN = { target: { replicas: 1 }, notYet: [{ replicas: 4 }] };
const PIPES = 600;

interface Confirming {
  readonly up: boolean;
  readonly sentAt: number;
  dueAt: number;
  /** The last read that did not show the target. */
  notShownAt?: number;
}

/** What a sample counts, from the pair around the propagation (lowMs, ms] and the read's own
 *  instant (atMs): the daemon's is `ms` (the upper end less the read's wait). */
type Count = (s: { readonly ms: number; readonly lowMs?: number; readonly atMs: number }) => number;
const daemonCount: Count = (s) => s.ms;

/** What the samples give (the kind's p95, rising fast); undefined with fewer than minSamples. */
const estimate = (kind: readonly number[]) => estimateOf([], kind, SETTINGS.minSamples).ms;

/**
 * One boundary from `start`: its plan (counting `counted`, the estimate, or none), its changes and
 * their confirmations until every change is confirmed. The kind's samples (newest first) grow with
 * its confirmations. Its end, and its samples below D from reads that went after D (they waited).
 */
function boundary(k: number, D: number, counted: boolean, kind: number[], start: number, count: Count) {
  const all = Array.from({ length: PIPES }, (_, i) => i);
  const ups = all.filter((i) => i % 2 === k % 2);
  const downs = all.filter((i) => i % 2 !== k % 2);
  const planned = counted ? (estimate(kind) ?? 0) : 0;
  // lead-plan.ts expectedActuationMs: firstRead at least, max at most, 0 when none
  const actuationMs = planned > 0 ? Math.min(Math.max(planned, SETTINGS.firstReadMs), SETTINGS.maxMs) : 0;
  const far = 1e12;
  const jobs = ups.map((i) => ({ pipe: String(i), index: i, boundary: far, actuationMs }));
  const plan = scheduleKey('key', jobs, keyLanes(RATE, 2 * TICK));
  const T = Math.ceil((start + (plan.lead?.leadMs ?? 0) + 5 * TICK) / TICK) * TICK;
  const from = new Map(plan.slots.map((s) => [Number(s.pipe), T - (far - s.slot.start)]));
  const queue: { pipe: number; up: boolean }[] = [];
  const confirming = new Map<number, Confirming>();
  let downsQueued = false;
  let waitedPast = 0;
  let bracketed = 0;
  let measured = counted ? estimate(kind) : undefined;
  for (let t = Math.ceil(start / SLOT) * SLOT; ; t += SLOT) {
    if (t % TICK === 0) {
      for (const [i, at] of from)
        if (at <= t) {
          queue.push({ pipe: i, up: true });
          from.delete(i);
        }
      if (!downsQueued && t >= T) for (const i of downs) queue.push({ pipe: i, up: false });
      downsQueued ||= t >= T;
    }
    if (counted && t % MIN === 0) measured = estimate(kind);
    const timing = confirmTiming(SETTINGS, measured);
    const change = queue.shift();
    if (change) {
      confirming.set(change.pipe, { up: change.up, sentAt: t, dueAt: firstDueAt(t, timing, change.up) });
      continue;
    }
    let read: [number, Confirming] | undefined;
    for (const e of confirming) if (e[1].dueAt <= t && (!read || e[1].sentAt < read[1].sentAt)) read = e;
    if (read) {
      const [pipe, c] = read;
      if (t - c.sentAt < D) {
        c.notShownAt = t;
        c.dueAt = nextDueAt({ lastSentAt: c.sentAt, ...(c.up ? UP : DOWN) }, t, timing) ?? Infinity;
      } else {
        const dueAt = sampledAt({ lastSentAt: c.sentAt, dueAt: c.dueAt }, t, timing);
        const sample = actuationSample({ sentAt: c.sentAt, at: t, dueAt, notShownAt: c.notShownAt });
        if (!('ms' in sample)) throw new Error('no sample');
        // the pair brackets the propagation: (the last read not showing it, the read's own instant]
        expect(sample.lowMs ?? 0).toBeLessThan(D);
        kind.unshift(count({ ...sample, atMs: t - c.sentAt }));
        if (sample.lowMs !== undefined) bracketed++;
        if (sample.ms < D) waitedPast++;
        kind.length = Math.min(kind.length, KIND_SAMPLES_KEPT);
        confirming.delete(pipe);
      }
    }
    if (downsQueued && queue.length === 0 && confirming.size === 0) return { end: t, planned, waitedPast, bracketed };
  }
}

/** The estimate each boundary counted (0: none), over D: the budget alone, then `counted` more. */
function boundaries(
  D: number,
  counted: number,
  count: Count = daemonCount,
): { ratios: number[]; waitedPast: number[]; bracketed: number[] } {
  let at = Date.parse('2026-11-23T10:00:00Z');
  const kind: number[] = [];
  const ratios: number[] = [];
  const waitedPast: number[] = [];
  const bracketed: number[] = [];
  for (let k = 0; k <= counted; k++) {
    const b = boundary(k, D, k > 0, kind, at, count);
    ratios.push(b.planned / D);
    waitedPast.push(b.waitedPast);
    bracketed.push(b.bracketed);
    at = b.end + MIN;
  }
  return { ratios, waitedPast, bracketed };
}

describe("the measured actuation at a key's boundaries", () => {
  // The budget-alone plan leaves its confirmation reads no slot: they wait behind its changes past
  // the propagation, and each is sampled at its due instant, the firstRead floor (15 s).
  it('a boundary on the plan of the budget alone measures the firstRead floor, not the platform: 0.5 of 30 s, 0.083 of 3 min', () => {
    for (const D of [30 * SEC, 3 * MIN]) {
      const { ratios, waitedPast } = boundaries(D, 1);
      expect(ratios[1], `D ${D / SEC} s`).toBeCloseTo(SETTINGS.firstReadMs / D, 3);
      expect(waitedPast[0], `D ${D / SEC} s`).toBeGreaterThan(0.95 * PIPES);
    }
  });

  // The pair around the propagation: what a boundary's confirmations know of it. The budget-alone
  // boundary's reads, nearly all waiting past it with no read before them, bracket it between the
  // change's answer and their own instant only. The boundaries that count an estimate bracket few
  // too: their first changes' reads step up from the estimate and lift it within the boundary (it
  // is read again every minute), and the rest read once at it and find the target (scale-ups), or
  // are probed only after it, behind the scale-downs' changes: their samples are upper ends.
  it('next to no sample is bracketed from below at these boundaries: the estimate is an upper end', () => {
    for (const D of [30 * SEC, 3 * MIN]) {
      const { bracketed } = boundaries(D, 3);
      for (const b of bracketed) expect(b, `D ${D / SEC} s: ${bracketed.join(' ')}`).toBeLessThan(0.1 * PIPES);
    }
  });

  // Counting the wait of a read that waited (the pair's midpoint with the read's own instant as its
  // upper end) makes the estimate several times the propagation, and it stays there (a scale-up
  // read once at the estimate can only hold it): the daemon counts the due instant (confirmation.ts
  // actuationSample says why).
  it("counting the pair's midpoint with the read's own instant instead: several times the propagation, and it stays", () => {
    const midpoint: Count = (s) => ((s.lowMs ?? 0) + s.atMs) / 2;
    const { ratios } = boundaries(30 * SEC, 3, midpoint);
    // 9.8, then 5 at every boundary after it
    expect(ratios[1], ratios.map((x) => x.toFixed(2)).join(' ')).toBeGreaterThan(9);
    for (const r of ratios.slice(2)) expect(r, ratios.map((x) => x.toFixed(2)).join(' ')).toBeGreaterThan(4);
  });

  // Counting it, the next boundary's reads (15 % apart from the floor) find the propagation, the
  // oldest changes' first, and the estimate rises to it: the boundaries after count it.
  it('the boundaries that count what the ones before measured: within 1 to 1.2 of the propagation, at 30 s and 3 min', () => {
    for (const D of [30 * SEC, 3 * MIN]) {
      const { ratios } = boundaries(D, 3);
      for (const r of ratios.slice(2)) {
        // at or above it: the plan's one confirming read of a scale-up finds its target in force
        expect(r, `D ${D / SEC} s: ${ratios.map((x) => x.toFixed(3)).join(' ')}`).toBeGreaterThanOrEqual(1);
        expect(r, `D ${D / SEC} s: ${ratios.map((x) => x.toFixed(3)).join(' ')}`).toBeLessThanOrEqual(1.2);
      }
    }
  });
});
