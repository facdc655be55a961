// startCloud: fixtures -> store -> fastify server on host:port, with run-time controls.
import type { z } from 'zod';
import { PLATFORM_RATE_LIMIT } from '../api/index.js';
import {
  FaultConfig as FaultConfigSchema,
  Propagation as PropagationSchema,
  Quirks as QuirksSchema,
  type FaultConfig,
  type Fixtures,
  type Propagation,
} from './fixtures-schema.js';
import { loadFixtures, parseFixtures } from './fixtures.js';
import { KeyRing } from './auth.js';
import { LateHolds } from './late.js';
import { propagationOf } from './propagation.js';
import { parseBody } from './errors.js';
import { FixedWindowLimiter, type RateLimit } from './rate-limit.js';
import { buildServer } from './server.js';
import { StatsCounter, type CloudStats } from './stats.js';
import { CloudStore } from './store.js';
import { cloudState } from './snapshot.js';

export interface CloudOptions {
  /** Path to a fixtures YAML file, or fixtures already in memory (validated either way). */
  fixtures: string | Fixtures;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Default: the fixtures' setting, else the platform's 10 per 10 s. */
  rateLimit?: RateLimit | false;
  /** Enables /admin routes; else env PIPESCALER_CLOUD_ADMIN_TOKEN; else they answer 404. */
  adminToken?: string;
  /** Clock for timestamps, the rate-limit window and when a propagating change takes effect. */
  now?: () => number;
  /** Source of randomness for fault injection. */
  random?: () => number;
}

export interface EmbeddedCloud {
  readonly url: string;
  readonly store: CloudStore;
  setFaults(faults: FaultConfig): void;
  setRateLimit(limit: RateLimit | false): void;
  /** Replaces the propagation settings (validated; durations as ms or `30s`, `never` for stuck).
   *  Changes already taken keep the instant they were given. */
  setPropagation(p: z.input<typeof PropagationSchema>): void;
  propagation(): Propagation;
  /** Resolves once every request held by the `late` fault has been carried out. */
  settled(): Promise<void>;
  stats(): CloudStats;
  resetStats(): void;
  close(): Promise<void>;
}

export async function startCloud(options: CloudOptions): Promise<EmbeddedCloud> {
  const fixtures =
    typeof options.fixtures === 'string' ? loadFixtures(options.fixtures) : parseFixtures(options.fixtures);
  const now = options.now ?? Date.now;
  const store = CloudStore.fromFixtures(fixtures, now);
  let propagation = propagationOf(fixtures);
  const setPropagation = (p: unknown) => {
    propagation = parseBody(PropagationSchema, p);
  };
  const late = new LateHolds();
  const fromFixtures: RateLimit | false | undefined =
    fixtures.rateLimit === undefined
      ? undefined
      : fixtures.rateLimit === false
        ? false
        : { requests: fixtures.rateLimit.requests, perMs: fixtures.rateLimit.per };
  const limiter = new FixedWindowLimiter(options.rateLimit ?? fromFixtures ?? PLATFORM_RATE_LIMIT, now);
  const stats = new StatsCounter();
  let faults: FaultConfig = fixtures.faults ?? {};
  const setFaults = (f: FaultConfig) => {
    faults = parseBody(FaultConfigSchema, f);
  };
  const adminToken = options.adminToken ?? process.env.PIPESCALER_CLOUD_ADMIN_TOKEN;
  const app = buildServer({
    store,
    keys: new KeyRing(fixtures.apiKeys),
    limiter,
    stats,
    quirks: QuirksSchema.parse(fixtures.quirks ?? {}),
    now,
    random: options.random ?? Math.random,
    faults: () => faults,
    propagation: () => propagation,
    late,
    admin: adminToken
      ? {
          token: adminToken,
          faults: () => faults,
          setFaults,
          rateLimit: () => limiter.current,
          setRateLimit: (l) => limiter.set(l),
          propagation: () => propagation,
          setPropagation,
          stats: () => stats.snapshot(),
          resetStats: () => stats.reset(),
          state: () => cloudState(store),
        }
      : null,
  });
  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('embedded cloud: no TCP address');
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${host}:${addr.port}`,
    store,
    setFaults,
    setRateLimit: (l) => limiter.set(l),
    setPropagation,
    propagation: () => propagation,
    settled: () => late.settled(),
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    close: async () => {
      await app.close();
    },
  };
}
