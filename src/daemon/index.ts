export { createDaemon, type Daemon, type DaemonOptions, type DaemonStatus } from './daemon.js';
export { DaemonEmitter, type DaemonEvents, type DecisionResult } from './events.js';
export { silentLogger, type DaemonLogger } from './context.js';
export { StateStore, type PipeRecord, type PauseFlag, type StoredDecision, type StoredError } from './state-store.js';
export { readPipeStatuses, type PipeStatus } from './status.js';
export { handleSignals } from './signals.js';
export { connectRedis, connectRedisOnce } from './redis-connection.js';
export { EVALUATE_QUEUE, applyQueueName, evaluateJobId } from './queues.js';
export { readReplicas, HEARTBEAT_TTL_MS, type ReplicaBeat } from './heartbeat.js';
