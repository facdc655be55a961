export { createDaemon, type Daemon, type DaemonOptions, type DaemonStatus } from './runtime/daemon.js';
export {
  DaemonEmitter,
  STATE_LOSS_CAUSES,
  type DaemonEvents,
  type DecisionResult,
  type StateLossCause,
} from './model/events.js';
export { silentLogger, type DaemonLogger } from './model/logger.js';
export { StateStore } from './store/state-store.js';
export { OVERRIDE_KEPT_MS, type Orphan } from './store/operator-state.js';
export {
  readPipeStatuses,
  type ChangeOnItsWay,
  type ChangeState,
  type PipeStatus,
  type PlatformShown,
} from './views/status.js';
export {
  type PipeRecord,
  type PauseFlag,
  type StoredDecision,
  type StoredError,
  type StoredVerdict,
  refOf,
  type PipeIdentity,
  type StoredOverrideValue,
} from './model/record.js';
export { describeRefusal, isRejection, type KeyRefusal } from './store/key-auth.js';
export { handleSignals } from './runtime/signals.js';
export { ConfigFiles } from './runtime/config-watch.js';
export { connectRedis, connectRedisOnce } from './store/redis-connection.js';
export { EVALUATE_QUEUE, applyQueueName, evaluateJobId } from './lanes/queues.js';
export { readReplicas, HEARTBEAT_TTL_MS, type ReplicaBeat } from './store/heartbeat.js';
export { describeChanges } from './model/config-changes.js';
export { verdictText } from './outcomes/verdict-text.js';
export { describeRedis, endpointOf, isUnreachable, prefixProblem } from './store/redis-connection.js';
export { DEFAULT_CHECK_EVERY_MS, KeyChecks, checkPollMs, type CheckResult } from './lanes/key-checks.js';
export { SAFETY_VIOLATIONS } from './lifecycle/safety.js';
export { type ActuationEstimate, type ActuationSource } from './store/actuation-store.js';
export { nextScaleUps, readEstimates, type NextScaleUp } from './views/next-scale-up.js';
