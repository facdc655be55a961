// The value of a pipe's metric at a tick. One Prometheus query per metric policy per tick for the
// whole fleet: the first evaluation of a policy at a tick (on any replica) takes a short lock in
// Redis, queries, and stores the result under the tick; every other evaluation, on this replica or
// another, reads that result. Within a replica, one read per policy and tick is shared by all its
// evaluations (an indexed vector, so a pipe finds its sample with one lookup). A policy with a
// forecast gets the pipe's predicted values on its reading too (forecast-source.ts).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RedisClient } from '../store/redis-connection.js';
import {
  indexSamples,
  matchKey,
  resolveMatch,
  selectSample,
  type Sample,
  type MetricReading,
  type MetricPolicy,
  hasMetric,
  type PipeConfig,
  type Policy,
} from '../../policy/index.js';
import type { Config, PrometheusConfig } from '../../config/index.js';
import { PrometheusClient } from '../../prometheus/index.js';
import type { DaemonEmitter } from '../model/events.js';
import { ForecastSource } from './forecast-source.js';
export { metricVariant } from './metric-variant.js';
import { metricVariant } from './metric-variant.js';
import { redisKeys } from '../store/redis-keys.js';
import { parseStored } from '../model/record-fields.js';

/** A tick's stored result: the samples as [labels, value, own time (ms: the tick less its age) if known], or the query's error.
 *  An unknown time reads back as null: JSON writes an array's undefined as null. */
/** A tick's result as one replica stores it for the others; read back through this schema. */
const StoredSchema = z.union([
  z.object({
    at: z.number(),
    samples: z.array(
      z.union([
        z.tuple([z.record(z.string(), z.string()), z.union([z.number(), z.string()])]),
        z.tuple([z.record(z.string(), z.string()), z.union([z.number(), z.string()]), z.number().nullable()]),
      ]),
    ),
  }),
  z.object({ at: z.number(), error: z.string() }),
]);
type Stored = z.infer<typeof StoredSchema>;
type StoredSample = Extract<Stored, { samples: unknown }>['samples'][number];

interface TickVector {
  readonly at: number;
  readonly error?: string;
  readonly samples: readonly Sample[];
  readonly index: Map<string, Sample[]>;
  readonly labelNames: readonly string[];
}

/** Long enough for every replica to read a tick's result; far shorter than a day of ticks. */
const RESULT_TTL_MS = 5 * 60_000;
/** Read results kept in memory (a few ticks of every policy). */
const MAX_CACHED = 256;
const POLL_MS = 25;

export interface MetricSourceOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly emitter: DaemonEmitter;
  readonly now: () => number;
  readonly config: () => Config;
}

export class MetricSource {
  private readonly keys;
  private readonly vectors = new Map<string, { readonly tickAt: number; readonly vector: Promise<TickVector> }>();
  /** Loads not yet settled: close() lets them store their result before the client goes. */
  private readonly loading = new Set<Promise<TickVector>>();
  private closed = false;
  private client: PrometheusClient | null = null;
  private clientFor: PrometheusConfig | null = null;
  private readonly forecasts: ForecastSource;

  constructor(private readonly o: MetricSourceOptions) {
    this.keys = redisKeys(o.prefix);
    this.forecasts = new ForecastSource({
      ...o,
      prometheus: () => this.prometheus(),
      timeoutMs: () => o.config().metrics?.prometheus.timeoutMs ?? 5_000,
    });
  }

  /** The pipe's reading at the tick: its sample's value, or why there is none. */
  async reading(policy: Policy, pipe: PipeConfig, tickAt: number): Promise<MetricReading> {
    if (!hasMetric(policy)) return { error: `policy ${policy.name} has no metric` };
    const spec = policy.metric;
    const v = await this.vector(policy, tickAt);
    if (v.error !== undefined) return { error: v.error };
    const wanted = resolveMatch(spec.match, pipe);
    const matching = v.labelNames.length === 0 ? v.samples : (v.index.get(matchKey(v.labelNames, wanted)) ?? []);
    const reading = selectSample(matching, wanted, v.at);
    if (spec.forecast === undefined || 'error' in reading) return reading;
    return { ...reading, forecast: await this.forecasts.forecast(policy, wanted, tickAt) };
  }

  /**
   * Starts loading the tick's result of each metric policy, so the query runs while the tick's
   * evaluations are still being enqueued instead of holding up the first of them. A failure is
   * the tick's result (an error every evaluation of the policy then reads), never a rejection.
   */
  prefetch(policies: Iterable<Policy>, tickAt: number): void {
    for (const policy of policies) if (hasMetric(policy)) void this.vector(policy, tickAt).catch(() => undefined);
  }

  /**
   * The tick's indexed vector of a policy, loaded once per replica and tick. Kept while a late
   * evaluation may still ask (the stored result's lifetime), and at most MAX_CACHED of them.
   */
  private vector(policy: MetricPolicy, tickAt: number): Promise<TickVector> {
    const spec = policy.metric;
    const labelNames = Object.keys(spec.match).sort();
    const cacheKey = JSON.stringify([policy.name, tickAt, spec.query, spec.staleAfterMs, labelNames]);
    const cached = this.vectors.get(cacheKey);
    if (cached) return cached.vector;
    const vector = this.load(policy, tickAt, labelNames);
    this.loading.add(vector);
    const settled = () => this.loading.delete(vector);
    vector.then(settled, settled);
    this.vectors.set(cacheKey, { tickAt, vector });
    for (const [key, entry] of this.vectors) {
      if (this.vectors.size <= MAX_CACHED && entry.tickAt >= tickAt - RESULT_TTL_MS) break;
      this.vectors.delete(key);
    }
    return vector;
  }

  /** Lets the loads under way store their results (a replica waits on them), then closes the client. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.loading, this.forecasts.close()]);
    await this.client?.close();
    this.client = null;
  }

  private prometheus(): PrometheusClient | null {
    if (this.closed) return null;
    const cfg = this.o.config().metrics?.prometheus ?? null;
    if (cfg !== this.clientFor) {
      void this.client?.close();
      this.client = cfg ? new PrometheusClient(cfg) : null;
      this.clientFor = cfg;
    }
    return this.client;
  }

  private async load(policy: MetricPolicy, tickAt: number, labelNames: readonly string[]): Promise<TickVector> {
    let stored: Stored;
    try {
      stored = await this.shared(policy, tickAt);
    } catch (err) {
      stored = {
        at: this.o.now(),
        error: `metric result not shared: ${err instanceof Error ? err.message : String(err)}`,
      };
    }
    await this.reportAge(policy.name);
    if ('error' in stored) return { at: stored.at, error: stored.error, samples: [], index: new Map(), labelNames };
    const samples = stored.samples.map(([labels, value, at]) => ({
      labels,
      value: typeof value === 'string' ? Number(value) : value,
      ...(at !== undefined && at !== null ? { at } : {}),
    }));
    return { at: stored.at, samples, index: indexSamples(samples, labelNames), labelNames };
  }

  /** A stored result that does not fit its schema is an error of the tick, never a value. */
  private readStored(text: string): Stored {
    return (
      parseStored(StoredSchema, text) ?? {
        at: this.o.now(),
        error: 'the result stored in Redis for this tick is unreadable',
      }
    );
  }

  /** The tick's result from Redis, querying Prometheus first when this replica is the first to ask. */
  private async shared(policy: MetricPolicy, tickAt: number): Promise<Stored> {
    const { redis } = this.o;
    const variant = metricVariant(policy.metric);
    const resultKey = this.keys.metricTick(policy.name, tickAt, variant);
    const found = await redis.get(resultKey);
    if (found !== null) return this.readStored(found);
    // A stopping replica takes no lock: another one would wait for a result it may never store.
    if (this.closed) return { at: this.o.now(), error: 'the daemon is stopping' };
    const timeoutMs = this.o.config().metrics?.prometheus.timeoutMs ?? 5_000;
    const won = await redis.set(
      this.keys.metricLock(policy.name, tickAt, variant),
      randomUUID(),
      'PX',
      timeoutMs + 10_000,
      'NX',
    );
    if (won === 'OK') {
      const result = await this.query(policy, tickAt);
      await redis.set(resultKey, JSON.stringify(result), 'PX', RESULT_TTL_MS);
      if (!('error' in result)) await redis.set(this.keys.metricGood(policy.name), String(result.at));
      return result;
    }
    // Another evaluation (here or on another replica) queries: its result arrives within its timeout.
    const deadline = Date.now() + timeoutMs + 5_000;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const later = await redis.get(resultKey);
      if (later !== null) return this.readStored(later);
    }
    return { at: this.o.now(), error: 'no result from the replica querying Prometheus for this tick' };
  }

  private async query(policy: MetricPolicy, tickAt: number): Promise<Stored> {
    const started = performance.now();
    const client = this.prometheus();
    let result: Stored;
    if (!client) {
      result = { at: this.o.now(), error: 'no metrics.prometheus configured' };
    } else {
      try {
        // Each sample's age comes in the same request where PromQL keeps its time, for staleAfter:
        // dated that long before the tick, which staleAfter is judged at, so an evaluation that runs
        // late (a backlog, up to 5 min) does not take its lag off the age; nor does a skew between
        // the two clocks count.
        const samples = await client.queryWithAges(policy.metric.query, policy.metric.staleAfterMs);
        const now = this.o.now();
        result =
          samples.length === 0
            ? { at: now, error: 'the query returned no samples' }
            : {
                at: now,
                samples: samples.map((s): StoredSample => {
                  const value = Number.isFinite(s.value) ? s.value : String(s.value);
                  return s.ageMs !== undefined ? [s.labels, value, tickAt - s.ageMs] : [s.labels, value];
                }),
              };
      } catch (err) {
        result = { at: this.o.now(), error: (err as Error).message };
      }
    }
    this.o.emitter.emit('metric:query', {
      policy: policy.name,
      durationMs: performance.now() - started,
      ...('error' in result ? { error: result.error } : { samples: result.samples.length }),
    });
    return result;
  }

  private async reportAge(policy: string): Promise<void> {
    try {
      const good = await this.o.redis.get(this.keys.metricGood(policy));
      this.o.emitter.emit('metric:age', {
        policy,
        lastGoodAgeMs: good === null ? null : Math.max(0, this.o.now() - Number(good)),
      });
    } catch {
      // the gauge waits for the next tick
    }
  }
}
