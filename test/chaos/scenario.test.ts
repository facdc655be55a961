// The chaos scenario's arithmetic, without processes: boundaries, alternating targets, the final
// desired scaling of each pipe, and how the observer's record is counted.
import { describe, expect, it } from 'vitest';
import { SCALING_LIMITS, limitViolation, type ScalingField } from '../../src/api/index.js';
import { parseConfig } from '../../src/config/index.js';
import { activeWindows } from '../../src/policy/index.js';
import { buildScenario, chaosFixtures, FULL_PARAMS, type ChaosParams } from '../../bench/chaos/scenario.js';
import { countPatches } from '../../bench/chaos/summary.js';
import type { SentPatch } from '../../bench/chaos/observer.js';

const params: ChaosParams = {
  ...FULL_PARAMS,
  pipes: 30,
  boundaries: 4,
  boundaryEveryMs: 5_000,
  keys: 3,
  leadMs: 2_000,
};
const START = Date.UTC(2026, 10, 22, 3, 0, 0, 250);
const targets = { apiUrl: 'http://127.0.0.1:1', redisUrl: 'redis://127.0.0.1:6395', prefix: 'chaos' };

describe('chaos scenario', () => {
  const fixtures = chaosFixtures(params);
  const s = buildScenario(params, fixtures, targets, START);
  const config = parseConfig(s.configYaml, { file: 'chaos.yaml', env: s.env });

  it('puts B boundaries on whole seconds, every boundaryEveryMs, after the lead', () => {
    expect(s.boundaries).toEqual([
      START - 250 + 3_000,
      START - 250 + 8_000,
      START - 250 + 13_000,
      START - 250 + 18_000,
    ]);
  });

  it("changes every policy's target at every boundary", () => {
    for (const policy of Object.values(config.policies)) {
      const segment = (at: number) =>
        activeWindows(policy.windows, at)
          .winners.map((w) => w.name)
          .join() || 'baseline';
      const seen = [s.boundaries[0]! - 1, ...s.boundaries].map(segment);
      expect(seen).toEqual(['baseline', 'w0', 'w1', 'w2', 'baseline']);
    }
  });

  it('takes the API URL and keys from the environment and spreads the pipes over them', () => {
    expect(s.configYaml).not.toContain('bench-secret');
    // each replica gets its own prefix of the URL in PIPESCALER_API_URL (processes.ts)
    expect(s.configYaml).toContain('baseUrl: ${PIPESCALER_API_URL}');
    expect(config.api.baseUrl).toBe(targets.apiUrl);
    expect(Object.keys(config.api.keys).sort()).toEqual(['default', 'k2', 'k3']);
    expect(new Set(config.pipes.map((p) => p.key)).size).toBe(3);
    expect(config.api.keys.k2!.rateLimit).toEqual({
      requests: params.rateLimit.requests,
      perMs: params.rateLimit.perMs,
    });
  });

  it("knows each pipe's final scaling: its kind's fields, within bounds and platform ranges", () => {
    expect(s.pipes).toHaveLength(30);
    expect(s.pipes.filter((p) => p.kind === 'objectStorage')).toHaveLength(6);
    for (const p of s.pipes) {
      const fields = Object.keys(p.final).sort();
      expect(fields).toEqual(
        p.kind === 'stream' ? ['replicaCpuMillicores', 'replicaMemoryGb', 'replicas'] : ['concurrency'],
      );
      for (const [f, v] of Object.entries(p.final)) expect(limitViolation(f as ScalingField, v)).toBeNull();
    }
    // index 20: policy chaos-0 (baseline 2 replicas) and bounded to replicas 3..6: lifted to 3
    expect(config.pipes[20]!.policy).toBe('chaos-0');
    expect(config.pipes[20]!.bounds.replicas).toEqual({ min: 3, max: 6 });
    expect(s.pipes[20]!.final).toEqual({ replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 1.5 });
    // index 0: chaos-0, unbounded: the baseline as is
    expect(s.pipes[0]!.final).toEqual({ replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 1.5 });
    // index 27: an object-storage pipe, chaos-3 (concurrency 24) bounded to max 20
    expect(s.pipes[27]).toMatchObject({ kind: 'objectStorage', final: { concurrency: 20 } });
  });

  it("window targets sit on the platform's edges", () => {
    const w = config.policies['chaos-0']!.windows;
    const edges = new Set<number>(Object.values(SCALING_LIMITS).flatMap((l) => [l.min, l.max]));
    for (const win of w)
      for (const t of Object.values(win.target)) expect(edges.has((t as { value: number }).value)).toBe(true);
  });
});

describe('countPatches', () => {
  const p = (body: Record<string, unknown>, key: string | undefined, status: SentPatch['status']): SentPatch => ({
    at: 0,
    pipeId: 'x',
    keyId: undefined,
    body,
    idempotencyKey: key,
    status,
    answeredAt: null,
  });

  it('counts changes, their retries by Idempotency-Key, failures by kind, and reads apart', () => {
    const c = countPatches([
      p({ replicas: 3 }, 'k1', 500),
      p({ replicas: 3 }, 'k1', 'reset'),
      p({ replicas: 3 }, 'k1', 200),
      p({ concurrency: 0 }, 'k2', 200),
      p({}, 'r1', 200),
      p({ replicas: null }, 'r2', 429),
    ]);
    expect(c).toEqual({ sent: 4, applied: 2, retried: 2, failed: { 500: 1, reset: 1 }, reads: 2 });
  });
});

describe('expected values', () => {
  it('lists per pipe what each segment of the schedule asks: baseline and both window targets', () => {
    const s = buildScenario(params, chaosFixtures(params), targets, START);
    expect(s.pipes[0]!.expected).toEqual({
      replicas: [2, 10, 1],
      replicaCpuMillicores: [500, 2_000, 125],
      replicaMemoryGb: [1.5, 8, 0.5],
    });
    // bounded (replicas 3..6): the edges are clipped
    expect(s.pipes[20]!.expected.replicas).toEqual([3, 6]);
  });
});
