// The policy part's public surface: config loading and its errors (decide and windows are added
// by the engine).
export { loadConfig, parseConfig, isDemoKey, type ParseOptions } from './load-config.js';
export { ConfigError, isConfigError, formatIssue, type ConfigIssue, type ConfigErrorCode } from './config-errors.js';
export { parseDuration, formatDuration } from './durations.js';
export { interpolate, type Env } from './interpolate.js';
export type * from './types.js';
