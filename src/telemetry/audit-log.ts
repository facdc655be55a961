// Daemon events -> log lines: one audit line per decision (what changed, why, the platform's
// requestId), and a line for each thing an operator must know about (parking, reload failures,
// 429 pauses, drift, Redis going away).
import { describeChanges, verdictText, type DaemonEmitter, type DaemonEvents } from '../daemon/index.js';
import type { TelemetryLogger } from './logger.js';
import { subscribe, type DaemonListeners } from './subscribe.js';

type Decision = DaemonEvents['decision'];

const MESSAGES: Record<Decision['result'], string> = {
  applied: 'scaling applied',
  skipped: 'decision skipped',
  failed: 'scaling failed',
  dry_run: 'scaling not applied (dry run)',
  none: 'no change needed',
};

function auditDecision(logger: TelemetryLogger, d: Decision): void {
  const line = {
    audit: true,
    pipe: d.pipe,
    direction: d.direction,
    result: d.result,
    reason: d.reason,
    windows: d.windows,
    before: d.before,
    after: d.after,
    reasons: d.reasons.map((r) =>
      r.field === undefined ? `${r.code}: ${r.message}` : `${r.code} (${r.field}): ${r.message}`,
    ),
    requestId: d.requestId,
    ...(d.idempotencyKey !== undefined ? { idempotencyKey: d.idempotencyKey } : {}),
    ...(d.outcomeReported !== undefined ? { outcomeReported: d.outcomeReported } : {}),
    // written by a later turn: its sender died between recording the 200 and writing this line
    ...(d.answeredAt !== undefined ? { answeredAt: new Date(d.answeredAt).toISOString() } : {}),
    ...(d.read !== undefined ? { read: d.read, error: d.message } : {}),
  };
  const message = d.read !== undefined ? 'pipe read failed' : MESSAGES[d.result];
  // A refused key (401) fails every call of it: its key's line says so once (key-checks.ts), not
  // a line per pipe; the pipe's own stays at debug.
  if (d.result === 'failed' && d.reason === 'API_UNAUTHORIZED') logger.debug(line, message);
  // a read that failed changed nothing: it is no "scaling failed"
  else if (d.result === 'failed') logger.error(line, message);
  else logger.info(line, MESSAGES[d.result]);
}

/** Subscribe the logger to the daemon's events; returns the unsubscribe. */
export function bindAuditLog(emitter: DaemonEmitter, logger: TelemetryLogger): () => void {
  let redisReady: boolean | undefined;
  const listeners: DaemonListeners = {
    decision: (d) => auditDecision(logger, d),
    tick: ({ at, pipes }) => logger.debug({ tickAt: new Date(at).toISOString(), pipes }, 'tick'),
    evaluation: ({ pipe, durationMs, lagMs, decision }) =>
      logger.debug(
        { pipe, action: decision.action, direction: decision.direction, durationMs, lagMs },
        'pipe evaluated',
      ),
    paused: ({ pipe, paused, reason, until }) =>
      logger.info(
        { pipe, reason, until: until === undefined ? undefined : new Date(until).toISOString() },
        paused ? 'pipe paused' : 'pipe resumed',
      ),
    parked: ({ pipe, code, message }) =>
      logger.error(
        { pipe, code, error: message },
        'pipe parked: its API key keeps failing auth; fix the key and reload',
      ),
    backoff: ({ pipe, backingOff, failures, code, delayMs }) =>
      backingOff
        ? logger.warn(
            { pipe, code, delayMs },
            "pipe's calls failing: its attempts back off, exponentially up to its reconcile period",
          )
        : logger.info({ pipe, failures }, "pipe's calls answered again after failing: backoff ended"),
    // one audit line per window start and pipe: the figure the product stands on
    verdict: (v) => {
      const line = {
        audit: true,
        pipe: v.pipe,
        verdict: v.verdict,
        windows: v.windows,
        boundary: new Date(v.boundary).toISOString(),
        target: v.target,
        lateMs: v.lateMs,
        confirmedAt: v.confirmedAt === undefined ? undefined : new Date(v.confirmedAt).toISOString(),
        reason: v.reason,
        early: v.early,
        short: v.short,
      };
      const text = `window verdict ${verdictText(v)}`;
      if (v.verdict === 'late' || v.verdict === 'missed') logger.warn(line, text);
      else logger.info(line, text);
    },
    // a change whose answer was lost, found in force by a read: its one outcome (a 200 of it that
    // still comes is a `scaling applied` line with outcomeReported landed_late)
    'change:landed': ({ pipe, sent, sentAt, at, idempotencyKey }) =>
      logger.warn(
        {
          audit: true,
          pipe,
          result: 'landed_late',
          after: sent,
          sentAt: new Date(sentAt).toISOString(),
          lateMs: at - sentAt,
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
        },
        'scaling landed late',
      ),
    // a change whose answer was lost, settled by a read that cannot tell whether it landed: said
    // so by its key (a 200 of it that still comes is its `scaling applied` line)
    'change:unknown': ({ pipe, sent, sentAt, at, idempotencyKey }) =>
      logger.warn(
        {
          audit: true,
          pipe,
          result: 'outcome_unknown',
          after: sent,
          sentAt: new Date(sentAt).toISOString(),
          afterMs: at - sentAt,
          ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
        },
        'scaling outcome unknown: its answer was lost, and a read cannot tell whether it landed',
      ),
    'apply:retry': ({ pipe, code, attempt, delayMs }) => logger.warn({ pipe, code, attempt, delayMs }, 'apply retried'),
    'rate-limited': ({ key, resetMs }) =>
      logger.warn({ key, resetMs }, 'API key rate limited: its apply queue pauses until the window resets'),
    'rate-limit:reset-invalid': ({ key, value, usedMs }) =>
      logger.warn(
        { key, value, usedMs },
        'X-RateLimit-Reset of a 429 not believed (missing, unparsable or too long): the key waits one window',
      ),
    'read:recovered': ({ pipe, code }) => logger.info({ pipe, code }, 'pipe read again after failing'),
    'api:envelope-issue': ({ pipe, key, issue }) =>
      logger.warn({ pipe, key, issue }, 'scaling answer applied although its envelope does not fit'),
    'state:invalid': ({ pipe, fields }) =>
      logger.warn(
        { pipe, fields },
        "pipe's record in Redis had unreadable fields: they were dropped and the pipe is read again",
      ),
    drift: ({ pipe, expected, actual, onDrift }) =>
      logger.warn(
        { pipe, expected, actual, onDrift: onDrift ?? 'revert' },
        onDrift === 'hold' || onDrift === 'adoptAsFloor'
          ? `pipe scaling changed by hand: kept (onDrift ${onDrift}) as an override with reason manual`
          : 'pipe scaling drifted from what was applied',
      ),
    override: ({ pipe, action, id, source, values, until, reason }) =>
      logger.info(
        { pipe, action, id, source, values, until: new Date(until).toISOString(), reason },
        `override ${action}`,
      ),
    freeze: (f) =>
      f.action === 'held'
        ? logger.info(
            { pipe: f.pipe, freezes: f.freezes, held: f.held, until: new Date(f.until).toISOString() },
            'change held by a freeze until it ends',
          )
        : logger.info({ pipe: f.pipe, freezes: f.freezes }, 'freeze no longer holds a change'),
    'config:reload': ({ result, errors, changes }) => {
      if (result === 'success')
        logger.info(
          { result, ...changes },
          changes ? `config reloaded: ${describeChanges(changes)}` : 'config reloaded',
        );
      else logger.error({ result, errors }, 'config reload failed; the previous config stays in force');
    },
    'redis:status': ({ ready, cause, where }) => {
      const redis = where !== undefined ? { where } : {};
      const at = where !== undefined ? ` (${where})` : '';
      // a mistake of the settings (TLS, password) is said as one, whatever the state was
      if (!ready && cause !== undefined)
        logger.error({ redis: 'down', ...redis, cause }, `redis${at} connection failed: ${cause}`);
      if (ready === redisReady) return;
      // a connection never made was not lost: the first attempt failed (Redis not up yet, a wrong url)
      const never = redisReady === undefined;
      redisReady = ready;
      if (ready) logger.info({ redis: 'ready', ...redis }, `redis${at} connection ready`);
      else if (never)
        logger.warn(
          { redis: 'down', ...redis },
          `redis${at} not reachable at start; evaluations wait for it, and the daemon keeps trying`,
        );
      else logger.warn({ redis: 'down', ...redis }, `redis${at} connection lost; evaluations wait for it`);
    },
    'redis:waiting': ({ where, downForMs }) =>
      logger.warn(
        { redis: 'down', where, downForMs },
        `redis (${where}) still not reachable after ${Math.round(downForMs / 1000)} s; evaluations wait for it, and the daemon keeps trying`,
      ),
  };
  return subscribe(emitter, listeners);
}
