// The scaling history: the outcome vocabulary every reporter shares, its compact storage in Redis
// (one list per pipe), the recorder that writes it from the daemon's events, and the reader the
// CLI and the telemetry endpoint use.
export {
  OUTCOMES,
  OUTCOME_SEVERITY,
  SEVERITIES,
  isOutcomeName,
  severityOf,
  type Outcome,
  type OutcomeName,
  type Severity,
} from './outcomes.js';
export { cleanText, type HistoryEntry } from './codec.js';
export {
  HistoryStore,
  historyLimits,
  DEFAULT_MAX_ENTRIES,
  DEFAULT_RETENTION_MS,
  type HistoryLimits,
  type HistoryPage,
  type HistoryQuery,
  type HistoryRedis,
} from './store.js';
export { recordHistory, MAX_PENDING, type HistoryRecorder, type OutcomeSource } from './recorder.js';
export { entryJson, parseOutcomes, parseSince } from './query.js';
export { historyRoute, DEFAULT_PAGE, MAX_PAGE, type RouteAnswer } from './http-route.js';
