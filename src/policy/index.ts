// The policy engine's public face: pure functions over the normalized shapes of types.ts.
export * from './types.js';
export { parseDuration } from './durations.js';
export { policyOf, keyOf } from './config-lookup.js';
export { hasMetric, metricField, type MetricPolicy } from './metric.js';
export { activeWindows, nextBoundary, occurrenceAt, describeWindow, formatDuration } from './windows.js';
export { combineTargets, resolveFieldTarget, resolveTarget } from './target.js';
export { applyBehavior, cooldownRemaining, stabilizationFloor } from './behavior.js';
export type { BehaviorView } from './behavior.js';
export { decide, changeDirections } from './decide.js';
export { outcomeReason, skipCode } from './outcome-reason.js';
export { pruneRecommendations, recommendationsAfter } from './recommendations.js';
export { evaluateStep, afterChange } from './step.js';
// Plan and simulate over decide().
export { plan, type PlanEntry } from './plan.js';
export { simulate, type SimulatedChange } from './simulate.js';
export {
  keyPlans,
  describeKeyPlan,
  reconcilePeriodMs,
  scaleDownBoundMs,
  changesMs,
  readShareOf,
  type KeyPlan,
} from './key-budget.js';
export { type Capacity } from './capacity.js';
export { type ChangeDiff, type ConfigDiff, type DiffSide, type PipeDiff, type Spent } from './diff.js';
export { assignPools } from './key-pool.js';
export { assumedKind, assumedView, describeAssumed } from './kind.js';
export {
  ACTUATION_DEFAULTS,
  CONFIRM_READS_PLANNED,
  expectedActuationMs,
  FIRST_READ_MS,
  leadPlanAt,
  leadPlanSpan,
  leadUntil,
  needAround,
  nextSlot,
  slotStartIn,
  tickIntervalMs,
  type LeadPlan,
  type LeadPlanOptions,
  type LeadSlot,
} from './lead-plan.js';
export {
  indexSamples,
  matchKey,
  parseSampleValue,
  resolveMatch,
  selectSample,
  templateRefs,
  type Sample,
} from './metric-match.js';
export {
  metricBands,
  parseRangeQuery,
  recordedReading,
  type BandSegment,
  type RecordedSeries,
} from './metric-series.js';
export { type MetricAt } from './simulate.js';
export { pipeTimeline, type PipeTimeline } from './timeline.js';
export { count } from './words.js';
export { diffConfigs } from './diff.js';
export { withArticle } from './words.js';
export { fitForecast, predictAt, predictSpan, peakBetween } from './forecast.js';
export { peakError, scoreForecast } from './forecast-score.js';
export { FORECAST_STEP_MS, forecastLookup, makeForecasts, type ForecastSet } from './forecast-set.js';
export { replayedForecast, sampled, withReplayedForecast } from './forecast-replay.js';
export { pickSeries } from './metric-series.js';
export {
  candidateGrid,
  recommend,
  settingsDiff,
  type CandidateResult,
  type RecordedPipe,
  type Recommendation,
} from './recommend.js';
export { overrideValuesAt, describeValues } from './override.js';
export { activeFreezes, describeFreeze } from './freeze.js';
export { type Override, type OverrideRamp, type OverridesAllowed, type OnDrift } from './types.js';
export type { Freeze } from './types.js';
export { onDriftAction } from './drift.js';
export { confirmationAfterAnswer, type Confirmed, type ConfirmationAnswer, type HeldSpan } from './confirmation.js';
export {
  atTarget,
  exclusionOf,
  judgeVerdict,
  stateLostAround,
  verdictDue,
  windowStartsIn,
  EXCLUSIONS,
  MISSES,
  VERDICTS,
  VERDICT_LIMIT_DEFAULT_MS,
  type Exclusion,
  type Judged,
  type Miss,
  type StateLoss,
  type VerdictDue,
  type VerdictName,
} from './verdict.js';
export {
  addMinutes,
  capacityAround,
  describeMinutes,
  fieldsOfPipe,
  isNoMinutes,
  limitEarlyMs,
  limitLeadMs,
  formatMinutes,
  plannedCapacity,
  plannedCapacityOver,
  slotCapacity,
  stepPerMinute,
  verdictCapacity,
  CAPACITY_UNITS,
  NO_MINUTES,
  UNIT_WORDS,
  type BoundaryCapacity,
  type PlannedSlot,
  type CapacityMinutes,
  type CapacityUnit,
} from './early-capacity.js';
