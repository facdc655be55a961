// The forecast of a metric policy (metric.forecast): one range query per policy per refresh period
// for the whole fleet. The first evaluation of a policy in a period (on any replica) takes a short
// lock in Redis, reads the history, fits every series (policy/forecast-set.ts) and stores the
// predictions under the period; every other evaluation, here or on another replica, reads them.
// A failed query or too little history is stored as the period's error for a minute, then tried
// again: the policy reacts meanwhile as without a forecast.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  FORECAST_STEP_MS,
  forecastLookup,
  makeForecasts,
  type ForecastReading,
  type ForecastSet,
  type MetricPolicy,
} from '../../policy/index.js';
import type { PrometheusClient } from '../../prometheus/index.js';
import type { DaemonEmitter } from '../model/events.js';
import { metricVariant } from './metric-variant.js';
import type { RedisClient } from '../store/redis-connection.js';
import { redisKeys } from '../store/redis-keys.js';
import { parseStored } from '../model/record-fields.js';

const PointSchema = z.tuple([z.number(), z.number()]);
const StoredSchema = z.union([
  z.object({
    at: z.number(),
    series: z.array(z.object({ labels: z.record(z.string(), z.string()), points: z.array(PointSchema) })),
    peakError: z.number().nullable(),
  }),
  z.object({ at: z.number(), error: z.string() }),
]);

/** A failed forecast is tried again after this long (within its period). */
const RETRY_MS = 60_000;
const POLL_MS = 50;
/** The lock outlives the query and the fits of a large fleet. */
const LOCK_EXTRA_MS = 30_000;

export interface ForecastSourceOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly emitter: DaemonEmitter;
  readonly now: () => number;
  readonly prometheus: () => PrometheusClient | null;
  readonly timeoutMs: () => number;
}

type Lookup = (wanted: Readonly<Record<string, string>>) => ForecastReading;

export class ForecastSource {
  private readonly keys;
  /** Per policy: the period its lookup is of, kept until the next period or a retry. */
  private readonly cache = new Map<
    string,
    { readonly key: string; readonly until: number; readonly lookup: Promise<Lookup> }
  >();
  private readonly loading = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly o: ForecastSourceOptions) {
    this.keys = redisKeys(o.prefix);
  }

  /** The forecast of the series a pipe's match picks, for the refresh period holding `tickAt`. */
  async forecast(
    policy: MetricPolicy,
    wanted: Readonly<Record<string, string>>,
    tickAt: number,
  ): Promise<ForecastReading> {
    const spec = policy.metric.forecast;
    if (!spec) return { error: 'the policy has no forecast' };
    const slot = Math.floor(tickAt / spec.refreshMs) * spec.refreshMs;
    const key = JSON.stringify([slot, metricVariant(policy.metric), spec, Object.keys(policy.metric.match).sort()]);
    const cached = this.cache.get(policy.name);
    if (cached?.key === key && this.o.now() < cached.until) return (await cached.lookup)(wanted);
    const set = this.load(policy, slot);
    this.loading.add(set);
    const settled = () => this.loading.delete(set);
    set.then(settled, settled);
    const lookup = set.then((s) => {
      // an error is tried again a minute on; a forecast holds for its period
      const until = 'error' in s ? this.o.now() + RETRY_MS : slot + spec.refreshMs;
      this.cache.set(policy.name, { key, until, lookup });
      return forecastLookup(s, policy.metric.match);
    });
    this.cache.set(policy.name, { key, until: slot + spec.refreshMs, lookup });
    return (await lookup)(wanted);
  }

  /** Lets the forecasts under way store their results, then forgets them. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.loading]);
    this.cache.clear();
  }

  private async load(policy: MetricPolicy, slot: number): Promise<ForecastSet> {
    let set: ForecastSet;
    try {
      set = await this.shared(policy, slot);
    } catch (err) {
      set = { at: slot, error: `forecast not shared: ${err instanceof Error ? err.message : String(err)}` };
    }
    this.o.emitter.emit('forecast:status', {
      policy: policy.name,
      at: set.at,
      ...('error' in set ? { error: set.error } : { series: set.series.length, peakError: set.peakError }),
    });
    return set;
  }

  private async shared(policy: MetricPolicy, slot: number): Promise<ForecastSet> {
    const { redis } = this.o;
    const variant = metricVariant(policy.metric);
    const resultKey = this.keys.forecast(policy.name, slot, variant);
    const read = (text: string): ForecastSet =>
      parseStored(StoredSchema, text) ?? { at: slot, error: 'the forecast stored in Redis is unreadable' };
    const found = await redis.get(resultKey);
    if (found !== null) return read(found);
    if (this.closed) return { at: slot, error: 'the daemon is stopping' };
    const timeoutMs = this.o.timeoutMs();
    const lockKey = this.keys.forecastLock(policy.name, slot, variant);
    const won = await redis.set(lockKey, randomUUID(), 'PX', timeoutMs + LOCK_EXTRA_MS, 'NX');
    if (won === 'OK') {
      const set = await this.make(policy, slot);
      const spec = policy.metric.forecast;
      const ttl = 'error' in set || !spec ? RETRY_MS : spec.refreshMs + spec.horizonMs;
      await redis.set(resultKey, JSON.stringify(set), 'PX', ttl);
      // a failure frees the period for a retry once its result expires
      if ('error' in set) await redis.pexpire(lockKey, RETRY_MS);
      return set;
    }
    const deadline = Date.now() + timeoutMs + LOCK_EXTRA_MS;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const later = await redis.get(resultKey);
      if (later !== null) return read(later);
    }
    return { at: slot, error: 'no forecast from the replica making it' };
  }

  /** One range query over the history, then the fits: the period's forecast or its error. */
  private async make(policy: MetricPolicy, slot: number): Promise<ForecastSet> {
    const spec = policy.metric.forecast;
    const client = this.o.prometheus();
    if (!spec) return { at: slot, error: 'the policy has no forecast' };
    if (!client) return { at: slot, error: 'no metrics.prometheus configured' };
    const started = performance.now();
    let set: ForecastSet;
    try {
      const history = await client.queryRange(policy.metric.query, slot - spec.historyMs, slot, FORECAST_STEP_MS);
      set = makeForecasts(history, slot, spec);
    } catch (err) {
      set = { at: slot, error: `range query failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    this.o.emitter.emit('forecast:made', {
      policy: policy.name,
      durationMs: performance.now() - started,
      ...('error' in set ? { error: set.error } : { series: set.series.length }),
    });
    return set;
  }
}
