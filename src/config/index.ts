// Config loading: read, interpolate and validate config/pipescaler.yaml (or a Redis-only file)
// into the operational Config (types.ts), with each error's field and line.
export { loadConfig, parseConfig, isDemoKey, type ParseOptions } from './load.js';
export { clusterPrefixProblem, parseRedisUrl, type HostPort, type RedisEndpoint } from './redis.js';
export { LOG_LEVELS } from './schema.js';
export { didYouMean } from './did-you-mean.js';
export { ConfigError, isConfigError, formatIssue, type ConfigIssue, type ConfigErrorCode } from './errors.js';
export { withCurrentNames, deprecatedEnvLines, RENAMED_ENV } from './env-names.js';
export type {
  Config,
  ApiKeyConfig,
  RedisSettings,
  PrometheusConfig,
  HistorySettings,
  NotifySettings,
  NotifySink,
} from './types.js';
export { loadEffectiveConfig, withEnvOverrides, ENV_OVERRIDES } from './effective.js';
export { ERROR_CODES, errorCodeOf, type ErrorCode, type CliErrorCode } from './error-codes.js';
