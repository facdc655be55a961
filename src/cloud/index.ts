// The embedded cloud: a faithful HTTP implementation of the platform's API as docs/platform-api.md
// describes it, used by the daemon by default and by every test over real HTTP.
export { startCloud, type CloudOptions, type EmbeddedCloud } from './cloud.js';
export { loadFixtures, parseFixtures, demoCredentials, FixturesError } from './fixtures.js';
export { generateFixtures, seqUuid, type GenerateOptions } from './generate.js';
export type { Fixtures, ParsedFixtures, FaultConfig, FaultRule, Quirks } from './fixtures-schema.js';
export type { CloudStats } from './stats.js';
export type { RateLimit } from './rate-limit.js';
export { CloudStore, type StoredPipe, type StoredService, type StoredScaling } from './store.js';
export type { FaultKind } from './faults.js';
