// The policy engine's public face: pure functions over the normalized shapes of types.ts.
export * from './types.js';
export { activeWindows, nextBoundary, occurrenceAt, describeWindow, formatDuration } from './windows.js';
export type { Occurrence } from './windows.js';
export { combineTargets, resolveFieldTarget, resolveTarget, describeTarget, describeFieldTarget } from './target.js';
export type { ResolvedTarget } from './target.js';
export { applyBehavior, cooldownRemaining, stabilizationFloor } from './behavior.js';
export type { BehaviorResult, BehaviorView } from './behavior.js';
export { decide, changeDirections } from './decide.js';
export { pruneRecommendations, recommendationsAfter, type Recommendations } from './recommendations.js';
export { evaluateStep, afterChange, type Step, type Changed } from './step.js';
// The config: load and validate config/pipescaler.yaml into Config; plan and simulate over decide().
export { loadConfig, parseConfig, isDemoKey, type ParseOptions } from './load-config.js';
export { ConfigError, isConfigError, formatIssue, type ConfigIssue, type ConfigErrorCode } from './config-errors.js';
export { parseDuration } from './durations.js';
export { plan, unknownView, type PlanEntry } from './plan.js';
export { simulate, type SimulatedChange, type SimulateOptions } from './simulate.js';
export { keyPlans, describeKeyPlan, reconcilePeriodMs, scaleDownBoundMs, changesMs, readShareOf, humanMs, DEFAULT_READ_SHARE, type KeyPlan, type KeyRate } from './key-budget.js';
