// One lead plan: the daemon's (lead-plans.ts), status's next scale-up (next-scale-up.ts), `plan`
// (policy/plan.ts) and `simulate` (policy/simulate.ts) all take it from leadPlanAt(), so for one
// config, measured actuation and instant they tell the same slot. The case is one where a span of
// simulate's own (its period plus the longest lead) left out a boundary of the daemon's plan whose
// changes push an earlier boundary's slot back.
import { describe, expect, it } from 'vitest';
import { generatedPipeIds } from '../../src/cloud/index.js';
import { leadPlanFor, leadUntilFor } from '../../src/daemon/lanes/lead-plans.js';
import { nextScaleUps } from '../../src/daemon/views/next-scale-up.js';
import { refOf } from '../../src/daemon/model/record.js';
import { nextSlot } from '../../src/policy/lead-plan.js';
import { plan } from '../../src/policy/plan.js';
import { simulate } from '../../src/policy/simulate.js';
import type { PipeConfig, PipeView } from '../../src/policy/types.js';
import { oneOff, policy, testConfig, uniquePrefix } from './helpers.js';

const H = 3_600_000;
const AT = Date.parse('2026-11-25T07:10:00Z');
const EARLY = AT + 2 * H; // pipe a's window
const LATE = AT + 25 * H; // 22 pipes' window: more than the 24 h before it at one change an hour
const ACTUATION = 60_000;

describe('the lead plan, one entry point', () => {
  it('the daemon, status, plan and simulate tell the same slot at one instant', () => {
    const pipes: PipeConfig[] = Array.from({ length: 23 }, (_, i) => ({
      name: i === 0 ? 'a' : `late-${i}`,
      ...generatedPipeIds(i + 1),
      policy: i === 0 ? 'early' : 'late',
      key: 'default',
      bounds: {},
    }));
    const config = testConfig({
      baseUrl: 'http://127.0.0.1:1',
      prefix: uniquePrefix('lead-plan-paths'),
      pipes,
      // one change an hour at the lead plan's share of the rate: the late window's changes reach
      // back past the early one's
      rateLimit: { requests: 1, perMs: 0.9 * H },
      policies: {
        early: policy('early', { replicas: 1 }, [oneOff('early', EARLY, EARLY + H, { replicas: 3 })]),
        late: policy('late', { replicas: 1 }, [oneOff('late', LATE, LATE + H, { replicas: 3 })]),
      },
    });
    const measured = { version: 1, actuationMs: () => ACTUATION };

    const daemon = nextSlot(leadPlanFor(config, AT, measured), 'a', AT);
    const status = nextScaleUps(
      config,
      AT,
      new Map(pipes.map((p) => [refOf(p), { ms: ACTUATION, source: 'pipe' as const, samples: 20 }])),
    ).get('a');
    const view: PipeView = {
      kind: 'stream',
      state: 'Running',
      applied: { replicas: 1 },
      bounds: {},
      lastChange: {},
      recommendations: [],
      endpoints: {},
    };
    const planned = plan(config, { a: view }, AT, config, { actuationMs: () => ACTUATION }).find(
      (e) => e.pipe.name === 'a',
    );
    const simulated = simulate(config, { a: view }, AT, AT + H / 2, 30_000, { actuationMs: () => ACTUATION }).find(
      (c) => c.pipe === 'a' && c.direction === 'up',
    );

    expect(daemon?.boundary).toBe(EARLY);
    // the late window's changes pushed a's slot back before the instant: the daemon may send it now
    expect(daemon!.start).toBeLessThan(AT);
    expect(leadUntilFor(config, pipes[0]!, AT, measured)).toBe(EARLY);
    expect({ boundary: status?.boundary, start: status?.sendFrom, expectedAt: status?.expectedAt }).toEqual({
      boundary: daemon!.boundary,
      start: daemon!.start,
      expectedAt: daemon!.expectedAt,
    });
    expect(planned?.leadSlot).toEqual(daemon);
    expect(planned?.decision.action).toBe('change');
    expect(simulated?.at).toBe(AT);
    expect(simulated?.lead?.boundary).toBe(EARLY);
    expect(simulated?.slot?.start).toBe(daemon!.start);
  });
});
