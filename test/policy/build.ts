// Builders for the normalized policy shapes, so each test states only what it is about.
import type {
  Behavior,
  OneOffWindow,
  PipeConfig,
  ScalingConfig,
  PipeView,
  Policy,
  RecurringWindow,
  Target,
  Weekday,
} from '../../src/policy/types.js';

export const ALL_DAYS: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** `at('2026-03-29T01:00Z')` -> epoch ms. */
export function at(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad instant ${iso}`);
  return ms;
}

function hm(s: string): { hour: number; minute: number } {
  const [h, m] = s.split(':').map(Number);
  return { hour: h!, minute: m! };
}

export function recurring(o: {
  name?: string;
  days?: Weekday[];
  start: string;
  end?: string;
  durationMs?: number;
  timezone: string;
  exclude?: string[];
  priority?: number;
  target?: Target;
}): RecurringWindow {
  return {
    kind: 'recurring',
    name: o.name ?? 'w',
    priority: o.priority ?? 0,
    target: o.target ?? { replicas: { value: 5 } },
    days: o.days ?? ALL_DAYS,
    start: hm(o.start),
    timezone: o.timezone,
    exclude: o.exclude ?? [],
    ...(o.end !== undefined ? { end: hm(o.end) } : {}),
    ...(o.durationMs !== undefined ? { durationMs: o.durationMs } : {}),
  };
}

export function oneOff(o: {
  name?: string;
  from: string;
  to: string;
  priority?: number;
  target?: Target;
}): OneOffWindow {
  return {
    kind: 'oneOff',
    name: o.name ?? 'once',
    priority: o.priority ?? 0,
    target: o.target ?? { replicas: { value: 5 } },
    from: at(o.from),
    to: at(o.to),
  };
}

export const NO_BEHAVIOR: Behavior = {
  scaleUp: { maxStep: {}, cooldownMs: 0 },
  scaleDown: { maxStep: {}, cooldownMs: 0, stabilizationMs: 0 },
};

export function policy(o: Partial<Policy> = {}): Policy {
  return { name: 'p', baseline: { replicas: { value: 2 } }, windows: [], behavior: NO_BEHAVIOR, ...o };
}

export function view(o: Partial<PipeView> = {}): PipeView {
  return {
    kind: 'stream',
    state: 'Running',
    applied: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
    bounds: {},
    lastChange: {},
    recommendations: [],
    endpoints: {},
    ...o,
  };
}

/** The sale most plan and capacity tests scale for: from 2 replicas of 0.5 core and 2 GB to 6 of 1
 *  core, on 2026-11-23 from 09:00 to 12:00 UTC. */
export function salePolicy(): Policy {
  return policy({
    baseline: { replicas: { value: 2 }, replicaCpuMillicores: { value: 500 }, replicaMemoryGb: { value: 2 } },
    windows: [
      oneOff({
        name: 'sale',
        from: '2026-11-23T09:00:00Z',
        to: '2026-11-23T12:00:00Z',
        target: { replicas: { value: 6 }, replicaCpuMillicores: { value: 1000 } },
      }),
    ],
  });
}

/** One key of 10 requests per 10 s whose pipes (`names`, ids p0, p1...) all follow one policy,
 *  ticks every 30 s, actuation expected in a minute. */
export function oneKeyConfig(o: {
  readonly names: readonly string[];
  readonly key: string;
  readonly policyName: string;
  readonly policy: Policy;
  readonly kind?: PipeConfig['kind'];
}): ScalingConfig {
  const pipes: PipeConfig[] = o.names.map((name, i) => ({
    name,
    organizationId: 'o',
    serviceId: 's',
    pipeId: `p${i}`,
    policy: o.policyName,
    key: o.key,
    bounds: {},
    ...(o.kind !== undefined ? { kind: o.kind } : {}),
  }));
  return {
    api: { keys: { [o.key]: { rateLimit: { requests: 10, perMs: 10_000 } } } },
    evaluate: {
      cron: '*/30 * * * * *',
      reconcileMs: 600_000,
      actuation: { expectedMs: 60_000, maxMs: 600_000, minSamples: 20 },
    },
    pipes,
    policies: { [o.policyName]: { ...o.policy, name: o.policyName } },
  };
}
