// The embedded cloud: a faithful HTTP implementation of the platform's API as docs/platform-api.md
// describes it, used by the daemon by default and by every test over real HTTP.
import type { CloudOptions, EmbeddedCloud } from './cloud.js';
export type { CloudOptions, EmbeddedCloud };

/**
 * Start the embedded cloud. The HTTP server (fastify) loads on the first call, so what only reads
 * fixtures (the CLI's offline views, the daemon's demo ids) never loads it.
 */
export async function startCloud(options: CloudOptions): Promise<EmbeddedCloud> {
  const cloud = await import('./cloud.js');
  return cloud.startCloud(options);
}
export { loadFixtures, parseFixtures, demoCredentials, FixturesError } from './fixtures.js';
export { generateFixtures, generatedPipeIds, seqUuid, type GenerateOptions } from './generate.js';
export type {
  Fixtures,
  ParsedFixtures,
  FaultConfig,
  FaultRule,
  Quirks,
  Propagation,
  PropagationDelay,
} from './fixtures-schema.js';
export type { PendingChange } from './propagation.js';
export type { CloudStats } from './stats.js';
export type { RateLimit } from './rate-limit.js';
export { CloudStore, type StoredPipe, type StoredService, type StoredScaling } from './store.js';
export type { FaultKind } from './faults.js';
