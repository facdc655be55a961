export { createDaemon, type Daemon, type DaemonOptions, type DaemonStatus } from './daemon.js';
export { DaemonEmitter, type DaemonEvents, type DecisionResult } from './events.js';
export { silentLogger, type DaemonLogger } from './logger.js';
export { StateStore } from './state-store.js';
export { OVERRIDE_KEPT_MS, type Orphan } from './operator-state.js';
export {
  readPipeStatuses,
  type ChangeOnItsWay,
  type ChangeState,
  type PipeStatus,
  type PlatformShown,
} from './status.js';
export {
  type PipeRecord,
  type PauseFlag,
  type StoredDecision,
  type StoredError,
  type StoredVerdict,
  refOf,
  type PipeIdentity,
  type StoredOverrideValue,
} from './record.js';
export { describeRefusal, isRejection, type KeyRefusal } from './key-auth.js';
export { handleSignals } from './signals.js';
export { ConfigFiles } from './config-watch.js';
export { connectRedis, connectRedisOnce } from './redis-connection.js';
export { EVALUATE_QUEUE, applyQueueName, evaluateJobId } from './queues.js';
export { readReplicas, HEARTBEAT_TTL_MS, type ReplicaBeat } from './heartbeat.js';
export { describeChanges } from './reload-changes.js';
export { verdictText } from './verdict-text.js';
export { describeRedis, endpointOf, isUnreachable, prefixProblem } from './redis-connection.js';
export { DEFAULT_CHECK_EVERY_MS, KeyChecks, checkPollMs, type CheckResult } from './key-checks.js';
export { SAFETY_VIOLATIONS } from './safety.js';
export { type ActuationEstimate, type ActuationSource } from './actuation-store.js';
export { nextScaleUps, readEstimates, type NextScaleUp } from './next-scale-up.js';
