// `pipescaler recommend` on the shipped example config, with a recorded lag series this test makes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/policy/forecast.js';
import { seasonalTrace } from '../policy/seasonal-trace.js';

const BIN = 'dist/cli/main.js';
const FROM = '2026-11-02T00:00:00Z';
const TO = '2026-11-05T00:00:00Z';
let dir: string;
let file: string;

function run(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pstest-recommend-'));
  file = join(dir, 'lag.json');
  const from = Date.parse(FROM);
  const points = seasonalTrace({ from, to: from + 3 * DAY_MS, stepMs: 60_000, floor: 20_000, peak: 300_000 });
  const answer = {
    status: 'success',
    data: {
      resultType: 'matrix',
      result: [
        {
          metric: { consumergroup: 'pipescaler-orders-lag' },
          values: points.map(([t, v]) => [t / 1000, String(Math.round(v))]),
        },
      ],
    },
  };
  writeFileSync(file, JSON.stringify(answer));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('pipescaler recommend', () => {
  it('replays the example policy over the grid and names the cheapest that keeps the SLO, never a dearer one', () => {
    const r = run(['recommend', 'config/pipescaler.yaml', '--metrics', file, '--from', FROM, '--to', TO]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'recommend: policy orders-by-lag, 2026-11-02T00:00:00.000Z .. 2026-11-05T00:00:00.000Z every 1m, 1 pipe: orders-lag',
    );
    expect(r.stdout).toMatch(
      /^current: {6}targetPerReplica 50000, baseline min 1, stabilization 5m, window mins x1: /m,
    );
    expect(r.stdout).toMatch(/^recommended: {2}/m);
    expect(r.stdout).toMatch(/candidates \(\d{2,3}, cheapest first\):/);
    const json = JSON.parse(run(['recommend', '--metrics', file, '--from', FROM, '--to', TO, '--json']).stdout) as {
      current: { capacityHours: number };
      best: { capacityHours: number } | null;
      candidates: { lost?: string; overMinutes: number }[];
      diff: string[];
    };
    expect(json.best === null || json.best.capacityHours <= json.current.capacityHours).toBe(true);
    expect(json.candidates.filter((c) => c.lost?.includes('min over target')).length).toBeGreaterThan(0);
    if (json.best) expect(json.diff.every((l) => l.startsWith('policies.orders-by-lag.'))).toBe(true);
  }, 120_000);

  it('refuses bad flags with the flag named, exit 1, no stack', () => {
    const slo = run(['recommend', '--metrics', file, '--from', FROM, '--to', TO, '--slo', 'soon']);
    expect(slo.code).toBe(1);
    expect(slo.stderr).toContain('--slo: "soon" is not a duration');
    expect(slo.stderr).not.toContain('    at ');
    const policy = run(['recommend', '--metrics', file, '--from', FROM, '--to', TO, '--policy', 'nightly-s3']);
    expect(policy.stderr).toContain(
      '--policy: "nightly-s3" is not a metric policy with targetPerReplica (there: orders-by-lag)',
    );
    const missing = run(['recommend', '--metrics', join(dir, 'none.json'), '--from', FROM, '--to', TO]);
    expect(missing.stderr).toContain('--metrics: cannot read');
  });
});
