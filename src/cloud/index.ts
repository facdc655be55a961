// The embedded cloud: a faithful HTTP implementation of the platform's API as docs/platform-api.md
// describes it, used by the daemon by default and by every test over real HTTP.
import type { CloudOptions, EmbeddedCloud } from './cloud.js';
export type { CloudOptions, EmbeddedCloud };

/**
 * Start the embedded cloud. The HTTP server (fastify) loads on the first call, so what only reads
 * fixtures (the CLI's offline views, the daemon's demo ids) never loads it.
 */
export async function startCloud(options: CloudOptions): Promise<EmbeddedCloud> {
  let cloud: typeof import('./cloud.js');
  try {
    cloud = await import('./cloud.js');
  } catch (err) {
    throw notInstalled(err) ?? err;
  }
  return cloud.startCloud(options);
}

/** The server's packages are optional dependencies: a production install may leave them out. */
export class CloudNotInstalledError extends Error {
  override readonly name = 'CloudNotInstalledError';
  readonly code = 'CLOUD_NOT_INSTALLED';
}

function notInstalled(err: unknown): CloudNotInstalledError | null {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (code !== 'ERR_MODULE_NOT_FOUND' || typeof message !== 'string') return null;
  const name = /Cannot find package '([^']+)'/.exec(message)?.[1] ?? 'fastify';
  return new CloudNotInstalledError(
    `the embedded cloud needs its server, the optional dependency ${name}, which this install left out ` +
      "(npm ci --omit=optional): run `npm install --include=optional`, or set api.baseUrl to the platform's URL",
  );
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
export { type StoredPipe, type StoredService, type StoredScaling } from './records.js';
export type { PendingChange } from './propagation.js';
export { LIMITED_KEPT, type CloudStats, type LimitedRequest } from './stats.js';
export type { RateLimit } from './rate-limit.js';
export { CloudStore } from './store.js';
export type { FaultKind } from './faults.js';
export { cloudState, CloudStateSchema, type CloudState } from './snapshot.js';
