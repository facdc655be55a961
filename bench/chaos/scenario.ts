// The chaos scenario as data: the cloud's fixtures, the daemon's config (one-off windows that
// alternate targets every few seconds, so B schedule boundaries pass within a minute or two) and
// each pipe's desired scaling after the last boundary, computed with decide() on the loaded config.
import { stringify } from 'yaml';
import { KIND_FIELDS, type PipeKind, type ScalingField, type ScalingValues } from '../../src/api/index.js';
import { generateFixtures, type FaultRule, type Fixtures } from '../../src/cloud/index.js';
import { parseConfig } from '../../src/config/index.js';
import { decide } from '../../src/policy/index.js';
import type { PipeView } from '../../src/policy/types.js';

export interface ChaosParams {
  /** Pipes in all; about a fifth are object-storage pipes, the rest Kafka stream pipes. */
  readonly pipes: number;
  /** Schedule boundaries: instants at which every pipe's target changes. At least 2. */
  readonly boundaries: number;
  /** Time between two boundaries. */
  readonly boundaryEveryMs: number;
  /** API keys (each is an apply lane of the daemon with its own limiter); pipes go round-robin. */
  readonly keys: number;
  /** The platform's limit per key during the run; the daemon's per-key rateLimit is set to match. */
  readonly rateLimit: { readonly requests: number; readonly perMs: number };
  /** Injected on every operation of the cloud. */
  readonly faults: FaultRule;
  /** Live-API quirks of the cloud: quantity strings ("500m", "2Gi") and transient 0/null after a change. */
  readonly quirks: { readonly quantityStrings: boolean; readonly transientZeroMs: number };
  /** Time from the start until the first boundary (replicas boot and make first contact). */
  readonly leadMs: number;
  /** The daemon's reconcile interval (a read of each pipe). */
  readonly reconcileMs: number;
  /** Bound on the wait, after the last boundary, for every pipe to reach its final scaling. */
  readonly convergeTimeoutMs: number;
  /** Daemon replicas on the one Redis (one of them is SIGKILLed 300 ms after a boundary). */
  readonly replicas: number;
  /** One Redis restart per entry, in order: `empty` comes back with nothing (queues, locks, state
   *  and history gone), `keep` with its data (SHUTDOWN SAVE, loaded at start). */
  readonly redisRestarts: readonly RedisRestart[];
  /** The cloud's propagation: a change answered 200 takes effect this long after (0: at once);
   *  the daemon's evaluate.actuation is set to match. */
  readonly propagationMs: number;
  /** Seed of the cloud's fault dice. */
  readonly seed: number;
}

export const REDIS_RESTARTS = ['keep', 'empty'] as const;
export type RedisRestart = (typeof REDIS_RESTARTS)[number];

/** The chaos fault mix: 20% 500/503, 5% resets, 5% 429, 200 ms to 2 s of latency on every request. */
export const CHAOS_FAULTS: FaultRule = {
  reset: 0.05,
  error500: 0.1,
  error503: 0.1,
  error429: 0.05,
  latency: { probability: 1, minMs: 200, maxMs: 2_000 },
};

export const FULL_PARAMS: ChaosParams = {
  pipes: 200,
  boundaries: 20,
  boundaryEveryMs: 8_000,
  keys: 4,
  rateLimit: { requests: 50, perMs: 1_000 },
  faults: CHAOS_FAULTS,
  quirks: { quantityStrings: true, transientZeroMs: 500 },
  leadMs: 8_000,
  reconcileMs: 30_000,
  convergeTimeoutMs: 120_000,
  replicas: 2,
  redisRestarts: ['empty'],
  propagationMs: 0,
  seed: 1,
};

export interface ScenarioPipe {
  readonly name: string;
  readonly pipeId: string;
  readonly kind: Exclude<PipeKind, 'database'>;
  /** What the pipe must have once the last boundary has passed (only its kind's fields). */
  readonly final: ScalingValues;
  /** Per field, every value the schedule asks of this pipe at some time (before, in and after the
   *  windows); anything else sent for it is a bug even when it is within the platform's range. */
  readonly expected: Readonly<Partial<Record<ScalingField, readonly number[]>>>;
}

export interface Scenario {
  readonly fixtures: Fixtures;
  /** The config file's text; secrets come from `env`. */
  readonly configYaml: string;
  /** The API URL, key ids and secrets the replicas read through `${...}` in the config. */
  readonly env: Record<string, string>;
  /** Epoch ms of each boundary, ascending. */
  readonly boundaries: readonly number[];
  readonly pipes: readonly ScenarioPipe[];
}

// The two window targets sit on the platform's edges, so any off-by-one in a clamp shows; the
// baselines (the final targets) differ per policy variant and from both window targets.
const HIGH = { replicas: 10, replicaCpuMillicores: 2_000, replicaMemoryGb: 8, concurrency: 34 };
const LOW = { replicas: 1, replicaCpuMillicores: 125, replicaMemoryGb: 0.5, concurrency: 0 };
const BASELINES = [
  { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 1.5, concurrency: 3 },
  { replicas: 3, replicaCpuMillicores: 750, replicaMemoryGb: 2, concurrency: 8 },
  { replicas: 4, replicaCpuMillicores: 1_000, replicaMemoryGb: 3.5, concurrency: 16 },
  { replicas: 5, replicaCpuMillicores: 1_500, replicaMemoryGb: 6, concurrency: 24 },
];
/** Every BOUNDED_EVERY-th pipe has bounds that clip both window targets and some baselines. */
const BOUNDED_EVERY = 7;
const PIPE_BOUNDS = { replicas: { min: 3, max: 6 }, concurrency: { max: 20 } };

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * evaluate.actuation for the cloud's propagation. The run compresses days into minutes: a change
 * reset on its way (5 %) and not shown by its settle read is waited for up to the limit (it may
 * land late), then sent again; 30 s instead of 10 min keeps that within the run. With a
 * propagation the plan counts on it (`expected`, not what the daemon measures) and the first
 * confirmation read follows a change when it can show it in force (`firstRead`, default 15 s).
 */
export function actuationOf(propagationMs: number): Record<string, string | boolean> {
  const max = Math.max(30_000, 10 * propagationMs);
  if (propagationMs <= 0) return { max: `${max}ms` };
  return {
    expected: `${propagationMs}ms`,
    max: `${max}ms`,
    firstRead: `${Math.max(1_000, propagationMs)}ms`,
    measured: false,
  };
}

/** The cloud's fixtures: one organization, `keys` keys, about a fifth object-storage pipes. */
export function chaosFixtures(p: ChaosParams): Fixtures {
  if (p.pipes < 1 || p.keys < 1) throw new Error('chaos: pipes and keys must be at least 1');
  const objectPipes = Math.floor(p.pipes / 5);
  const fixtures = generateFixtures({
    streamPipes: p.pipes - objectPipes,
    objectStoragePipes: objectPipes,
    keysPerOrganization: p.keys,
    servicesPerOrganization: Math.max(1, Math.ceil(p.pipes / 50)),
    rateLimit: { requests: p.rateLimit.requests, per: `${p.rateLimit.perMs}ms` },
  });
  fixtures.quirks = { ...p.quirks };
  return fixtures;
}

/** The config and timeline for these fixtures, the first boundary `leadMs` after `startAt`. */
export function buildScenario(
  p: ChaosParams,
  fixtures: Fixtures,
  targets: { apiUrl: string; redisUrl: string; prefix: string },
  startAt: number,
): Scenario {
  if (p.boundaries < 2) throw new Error('chaos: boundaries must be at least 2');
  const org = fixtures.organizations![0]!;
  const services = org.services ?? [];

  // Boundary k at first + k * every: baseline -> window 0 -> ... -> window B-2 -> baseline.
  const first = Math.ceil((startAt + p.leadMs) / 1_000) * 1_000;
  const boundaries = Array.from({ length: p.boundaries }, (_, k) => first + k * p.boundaryEveryMs);
  const policies = Object.fromEntries(
    BASELINES.map((baseline, v) => [
      `chaos-${v}`,
      {
        baseline,
        windows: boundaries.slice(0, -1).map((from, i) => ({
          name: `w${i}`,
          from: iso(from),
          to: iso(boundaries[i + 1]!),
          set: (i + v) % 2 === 0 ? HIGH : LOW,
        })),
      },
    ]),
  );

  // The replicas each get their own prefix of it (processes.ts): the observer knows who sent what.
  const env: Record<string, string> = { PIPESCALER_API_URL: targets.apiUrl };
  const rateLimit = { requests: p.rateLimit.requests, per: `${p.rateLimit.perMs}ms` };
  const keyNames = fixtures.apiKeys.map((k, i) => {
    const name = i === 0 ? 'default' : `k${i + 1}`;
    const idVar = i === 0 ? 'PIPESCALER_KEY_ID' : `CHAOS_KEY_ID_${i + 1}`;
    const secretVar = i === 0 ? 'PIPESCALER_KEY_SECRET' : `CHAOS_KEY_SECRET_${i + 1}`;
    env[idVar] = k.keyId;
    env[secretVar] = k.keySecret;
    return { name, spec: { keyId: `\${${idVar}}`, keySecret: `\${${secretVar}}`, rateLimit } };
  });

  let n = 0;
  const pipes = services.flatMap((svc) =>
    (svc.pipes ?? []).map((pipe) => {
      const i = n++;
      return {
        name: pipe.name,
        organizationId: org.id,
        serviceId: svc.id,
        pipeId: pipe.id,
        policy: `chaos-${i % BASELINES.length}`,
        key: keyNames[i % keyNames.length]!.name,
        ...(i % BOUNDED_EVERY === BOUNDED_EVERY - 1 ? { bounds: PIPE_BOUNDS } : {}),
      };
    }),
  );

  const [defaultKey, ...more] = keyNames;
  const config = {
    api: {
      baseUrl: '${PIPESCALER_API_URL}',
      ...defaultKey!.spec,
      timeout: '10s',
      ...(more.length > 0 ? { keys: Object.fromEntries(more.map((k) => [k.name, k.spec])) } : {}),
    },
    redis: { url: targets.redisUrl, prefix: targets.prefix },
    evaluate: {
      cron: '* * * * * *',
      reconcile: `${p.reconcileMs}ms`,
      concurrency: 20,
      actuation: actuationOf(p.propagationMs),
    },
    telemetry: { listen: '127.0.0.1:0', logLevel: 'info' },
    dryRun: false,
    pipes,
    policies,
  };
  const configYaml = stringify(config, { lineWidth: 0 });

  // The targets, from the config as the daemon loads it and decide() in each segment of the
  // timeline (before the first boundary, in each window, after the last boundary).
  const loaded = parseConfig(configYaml, { file: 'chaos.yaml', env });
  const segments = [boundaries[0]! - 1, ...boundaries];
  const kinds = new Map(
    services.flatMap((s) =>
      (s.pipes ?? []).map((pp) => [pp.id, pp.source.kafka ? 'stream' : 'objectStorage'] as const),
    ),
  );
  const scenarioPipes = loaded.pipes.map((pc): ScenarioPipe => {
    const kind = kinds.get(pc.pipeId)!;
    const view: PipeView = {
      kind,
      state: 'Running',
      applied: {},
      bounds: pc.bounds,
      lastChange: {},
      recommendations: [],
      endpoints: {},
    };
    const desires = segments.map((at) => decide(loaded.policies[pc.policy]!, at, view).desired);
    const fields = KIND_FIELDS[kind];
    const final = Object.fromEntries(fields.map((f) => [f, desires.at(-1)![f]])) as ScalingValues;
    const expected = Object.fromEntries(fields.map((f) => [f, [...new Set(desires.map((d) => d[f]!))]]));
    return { name: pc.name, pipeId: pc.pipeId, kind, final, expected };
  });
  return { fixtures, configYaml, env, boundaries, pipes: scenarioPipes };
}
