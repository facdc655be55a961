// One metric-tick run (metric.ts), in a fresh process: N stream pipes spread over metric policies
// whose Prometheus answers a lag that keeps every pipe where it is; first contact, one warm tick,
// then the measured tick: from daemon.tick() until every pipe's evaluation event. Counts the
// queries Prometheus served during the measured tick from its own /metrics.
import type { Policy } from '../src/policy/types.js';
import { firstContact, NO_BEHAVIOR, startHarness, waitForPipes } from './daemon-harness.js';

export interface MetricTickArgs {
  pipes: number;
  policies: number;
  concurrency: number;
  deadlineMs: number;
  prometheusUrl: string;
}

export interface MetricTickResult {
  tickMs: number;
  /** /api/v1/query requests Prometheus served during the measured tick. */
  queries: number;
  /** metric:query events of the daemon in the measured tick. */
  daemonQueries: number;
  /** The slowest of the measured tick's queries (ms), as the daemon timed it. */
  slowestQueryMs: number;
  unavailable: number;
  applies: number;
}

export const policyName = (k: number): string => `lag-${k}`;

function lagPolicy(k: number): Policy {
  return {
    name: policyName(k),
    // generateFixtures' stream pipes run 1 replica, 250 millicores, 1 GB
    baseline: { replicas: { min: 1, max: 10 }, replicaCpuMillicores: { value: 250 }, replicaMemoryGb: { value: 1 } },
    windows: [],
    behavior: NO_BEHAVIOR,
    metric: {
      query: `kafka_consumergroup_lag{policy="${policyName(k)}"}`,
      match: { consumergroup: '{{ .labels.consumerGroup }}' },
      targetPer: { replicas: 100 },
      onError: { kind: 'hold' },
      staleAfterMs: 120_000,
      tolerance: 0.1,
    },
  };
}

async function queriesServed(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('prometheus_http_requests_total{') && line.includes('handler="/api/v1/query"'))
      n += Number(line.split(' ').at(-1));
  }
  return n;
}

export async function runOnce(args: MetricTickArgs): Promise<MetricTickResult> {
  const policies = Array.from({ length: args.policies }, (_, k) => lagPolicy(k));
  const h = await startHarness({
    pipes: args.pipes,
    policy: policies[0]!,
    cloudRateLimit: false,
    concurrency: args.concurrency,
    scenario: 'metric',
    keyRateLimit: { requests: 500, perMs: 1_000 },
    configure: (c) => ({
      ...c,
      pipes: c.pipes.map((p, i) => ({
        ...p,
        policy: policyName(i % args.policies),
        labels: { consumerGroup: `cg-${i + 1}` },
      })),
      policies: Object.fromEntries(policies.map((p) => [p.name, p])),
      metrics: { prometheus: { url: args.prometheusUrl, timeoutMs: 5_000, headers: {} } },
    }),
  });
  let applies = 0;
  let daemonQueries = 0;
  let unavailable = 0;
  h.daemon.emitter.on('apply:start', () => applies++);
  let slowest = 0;
  h.daemon.emitter.on('metric:query', (e) => {
    daemonQueries++;
    slowest = Math.max(slowest, e.durationMs);
  });
  h.daemon.emitter.on('evaluation', (e) => {
    if (e.decision.reasons.some((r) => r.code === 'metric_unavailable')) unavailable++;
  });
  try {
    await firstContact(h, args.pipes, args.deadlineMs);
    const contactApplies = applies;
    let tickMs = 0;
    let queries = 0;
    let measuredQueries = 0;
    let slowestQueryMs = 0;
    for (const measured of [false, true]) {
      h.clock += 30_000;
      daemonQueries = 0;
      slowest = 0;
      unavailable = 0;
      const before = await queriesServed(args.prometheusUrl);
      const done = waitForPipes(h.daemon, 'evaluation', args.pipes, args.deadlineMs);
      const t0 = performance.now();
      await h.daemon.tick(h.clock);
      await done;
      if (measured) {
        tickMs = performance.now() - t0;
        queries = (await queriesServed(args.prometheusUrl)) - before;
        measuredQueries = daemonQueries;
        slowestQueryMs = Math.round(slowest);
      }
    }
    return {
      tickMs,
      queries,
      daemonQueries: measuredQueries,
      slowestQueryMs,
      unavailable,
      applies: applies - contactApplies,
    };
  } finally {
    await h.close();
  }
}
