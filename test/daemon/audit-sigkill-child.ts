// The child of audit-sigkill.test.ts: a daemon with the real logger on stdout and the audit log
// bound to its events, which SIGKILLs itself right after its first change answered 200 is
// recorded in Redis and handed to the logger, after a burst of other lines: whatever the logger
// has not written by then is lost. With `record` as its third argument it dies earlier: right after
// the answer is recorded in Redis, before the audit line is handed to the logger.
import { Redis } from 'ioredis';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { bindAuditLog, createLogger } from '../../src/telemetry/index.js';
import { demoPipe, FAST_WORKERS, policy, REDIS_URL, testConfig } from './helpers.js';

const [baseUrl, prefix, when = 'line'] = process.argv.slice(2) as [string, string, string?];
const config = testConfig({
  baseUrl,
  prefix,
  reconcileMs: 24 * 3_600_000,
  pipes: [demoPipe('orders-events', 'four')],
  policies: { four: policy('four', { replicas: 4, replicaCpuMillicores: 500, replicaMemoryGb: 2 }) },
});
const logger = createLogger({ pretty: false, level: 'info' });
const emitter = new DaemonEmitter();
bindAuditLog(emitter, logger);
// the lines of a busy tick (other pipes' changes) right before this change's answer is recorded:
// an asynchronous logger is still writing them when the audit line comes
emitter.on('apply:start', () => {
  for (let n = 0; n < 1_000; n++) logger.info({ pipe: `other-${n}`, n }, 'another line of the same tick');
});
// after the audit log's listener: the line was handed to the logger, and nothing more happens
emitter.on('decision', (d) => {
  if (d.result === 'applied' && when === 'line') process.kill(process.pid, 'SIGKILL');
});
// `record`: the change's answer is in Redis (its `applied` gauge comes right after the write), its
// line not yet written
let answered = false;
emitter.on('apply:start', () => (answered = true));
emitter.on('applied', () => {
  if (answered && when === 'record') process.kill(process.pid, 'SIGKILL');
});
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const daemon = createDaemon({
  config,
  redis,
  prefix,
  emitter,
  schedule: false,
  watch: false,
  workerOptions: FAST_WORKERS,
});
await daemon.start();
await daemon.tick(Date.now());
