// What the rest of the project uses from the API layer beyond its public face (index.ts, the
// package's "exports"): helpers the embedded cloud, the config loader and the telemetry share
// with the client, kept out of the published surface.
export { formatPath } from './issue-path.js';
export { REASONS } from './schemas/envelope.js';
export { RETRIABLE_CODES } from './errors.js';
export type { PathParamOf, SentResultOf } from './endpoints.js';
export { MAX_TEXT, bounded, boundedTexts, printable, safeUrl } from './safe-text.js';
