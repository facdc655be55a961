// The measured actuation at a key's boundaries, as bench/actuation.ts runs them but on the
// platform's scale and a fixed clock: N pipes on one key at 10 requests per 10 s, half of them
// scaled up at a boundary T on the key's lead plan (lead-schedule.ts scheduleKey), the other half
// down after it; the changes found due at the ticks (every 30 s) and sent one a slot before any
// read; the confirmation reads (confirmation.ts) in the slots the changes leave free, the oldest
// change's first; each confirmation a sample as the daemon records it (sampledAt, actuationSample)
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
}

/** What the samples give (the kind's p95, rising fast); undefined with fewer than minSamples. */
const estimate = (kind: readonly number[]) => estimateOf([], kind, SETTINGS.minSamples).ms;

/**
 * One boundary from `start`: its plan (counting `counted`, the estimate, or none), its changes and
 * their confirmations until every change is confirmed. The kind's samples (newest first) grow with
 * its confirmations. Its end, and its samples below D from reads that went after D (they waited).
 */
function boundary(k: number, D: number, counted: boolean, kind: number[], start: number) {
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
        c.dueAt = nextDueAt({ lastSentAt: c.sentAt, ...(c.up ? UP : DOWN) }, t, timing) ?? Infinity;
      } else {
        const dueAt = sampledAt({ lastSentAt: c.sentAt, dueAt: c.dueAt }, t, timing);
        const sample = actuationSample({ sentAt: c.sentAt, at: t, dueAt });
        if ('ms' in sample) kind.unshift(sample.ms);
        if ('ms' in sample && sample.ms < D) waitedPast++;
        kind.length = Math.min(kind.length, KIND_SAMPLES_KEPT);
        confirming.delete(pipe);
      }
    }
    if (downsQueued && queue.length === 0 && confirming.size === 0) return { end: t, planned, waitedPast };
  }
}

/** The estimate each boundary counted (0: none), over D: the budget alone, then `counted` more. */
function boundaries(D: number, counted: number, kind: number[] = []): { ratios: number[]; waitedPast: number[] } {
  let at = Date.parse('2026-11-23T10:00:00Z');
  const ratios: number[] = [];
  const waitedPast: number[] = [];
  for (let k = 0; k <= counted; k++) {
    const b = boundary(k, D, k > 0, kind, at);
    ratios.push(b.planned / D);
    waitedPast.push(b.waitedPast);
    at = b.end + MIN;
  }
  return { ratios, waitedPast };
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

  // Counting it, the next boundary's reads (15 % apart from the floor) find the propagation, the
  // oldest changes' first, and the estimate rises to it: the boundaries after count it.
  it('the boundaries that count what the ones before measured: within 0.8 to 1.2 of the propagation, at 30 s and 3 min', () => {
    for (const D of [30 * SEC, 3 * MIN]) {
      const { ratios } = boundaries(D, 3);
      for (const r of ratios.slice(2)) {
        expect(r, `D ${D / SEC} s: ${ratios.map((x) => x.toFixed(3)).join(' ')}`).toBeGreaterThanOrEqual(0.8);
        expect(r, `D ${D / SEC} s: ${ratios.map((x) => x.toFixed(3)).join(' ')}`).toBeLessThanOrEqual(1.2);
      }
    }
  });
});
