// A pipe's lifecycle, as pure functions and one table (docs/architecture.md#a-pipes-lifecycle).
// nextStep() says what the pipe's next turn does, from its stored record, its situation (the
// config in force, the pause, its service's state, the metric, the lead plan) and the instant;
// answers.ts says what an answer makes of the record and what is enqueued next. The
// evaluate and apply processors only carry these out: every rule about what a pipe gets next, and
// the safety check before every PATCH (safety.ts), is here and nowhere else.
import type { ScalingValues } from '../../api/index.js';
import { evaluateStep, skipCode, type Decision, type Direction } from '../../policy/index.js';
import { confirmDue, expectedValues, resendDue } from './confirmation.js';
import { takesScaling, unsafeChange, type SafetyViolation } from './safety.js';
import { changesFor, isEmpty } from '../model/scaling-values.js';
import { trustedState } from './service-state.js';
import { refOf, toView, type PipeRecord } from '../model/record.js';
import { type Next, type NextStep, type Situation, type Stage } from './steps.js';
import { sending, unsettled } from './unsettled.js';

/** Answers that the same request would get again: bad request, unknown pipe, idle service. */
export const REFUSALS: ReadonlySet<string> = new Set(['API_BAD_REQUEST', 'API_NOT_FOUND', 'API_FAILED_DEPENDENCY']);

/**
 * After a refusal the pipe's changes wait for its next reconcile read rather than repeating every
 * tick: an idle service answered 424 to every 30 s tick (2,880 wasted calls a day per pipe, from
 * the key's shared 10-per-10-s budget). A read that succeeds clears the error.
 */
export function refused(rec: PipeRecord, now: number, reconcileMs: number): boolean {
  const err = rec.lastError;
  return err !== null && REFUSALS.has(err.code) && now - err.at < reconcileMs;
}

/**
 * The pipe's calls keep failing and its next attempt is not due (backoff.ts afterCallFailure): an
 * evaluation queues no turn for it and a turn sends nothing until then, so a few failing pipes
 * cannot spend their key's budget. The job's retry, which the backoff scheduled, goes ahead.
 */
export function backingOff(rec: PipeRecord, now: number): boolean {
  return rec.failures > 0 && rec.retryAt !== null && now < rec.retryAt;
}

export function stageOf(rec: PipeRecord, sit: Situation, now: number): Stage {
  if (rec.ref !== null && rec.ref !== refOf(sit.pipe)) return 'moved';
  if (unsettled(rec)) return 'unsettled';
  if (rec.parked) return 'parked';
  if (refused(rec, now, sit.reconcileMs)) return 'refused';
  // A record that names no ids was never seen as this pipe (written by hand, or partly).
  if (rec.lastReadAt === null || rec.kind === null || rec.ref === null) return 'unseen';
  if (rec.endpointsDue.length > 0) return 'endpoints';
  if (rec.confirming !== null) return 'confirming';
  return takesScaling(rec) ? 'seen' : 'unscalable';
}

/** Whether the stage decides (the metric is fetched for these only). */
export function decides(stage: Stage): boolean {
  return stage === 'seen' || stage === 'unscalable' || stage === 'refused' || stage === 'confirming';
}

/**
 * The instant a turn on the apply queue decides at: now, never earlier than the newest stored
 * decision (a replica whose clock lags the tick's would otherwise decide as of an older instant
 * than a decision already made, and send a desire that one replaced).
 */
export function turnInstant(rec: PipeRecord, now: number): number {
  return Math.max(now, rec.decidedAt ?? 0);
}

export function readDue(rec: PipeRecord, sit: Situation, now: number): boolean {
  if (rec.readDue || rec.lastReadAt === null) return true;
  return sit.asker === 'tick' && now - rec.lastReadAt >= sit.readDueAfterMs;
}

/** What the pipe's next turn does at `now`. */
export function nextStep(rec: PipeRecord, sit: Situation, now: number): Next {
  const next = stepOf(rec, sit, now);
  const request = next.step.do !== 'forget' && next.step.do !== 'wait' && next.step.do !== 'skip';
  // Decided all the same (the desire is stored, status shows it): only the request waits.
  return request && sit.retry !== true && backingOff(rec, now)
    ? { ...next, step: { do: 'wait', reason: 'backoff' } }
    : next;
}

function stepOf(rec: PipeRecord, sit: Situation, now: number): Next {
  const stage = stageOf(rec, sit, now);
  const due = readDue(rec, sit, now);
  const only = (step: NextStep): Next => ({ stage, step, readDue: due });
  switch (stage) {
    case 'moved':
      return only({ do: 'forget' });
    case 'unsettled':
      return only(sending(rec, now) ? { do: 'wait', reason: 'sending' } : { do: 'read', why: 'settle' });
    case 'parked':
      return only({ do: 'skip', reason: 'parked' });
    case 'unseen':
      // Never read: a first contact that was refused waits out its reconcile period, else read.
      return only(
        refused(rec, now, sit.reconcileMs) ? { do: 'wait', reason: 'refused' } : { do: 'read', why: 'first_contact' },
      );
    case 'endpoints':
      return only({ do: 'read_endpoint', endpointId: rec.endpointsDue[0] ?? '' });
    case 'refused':
      if (rec.lastReadAt === null || rec.kind === null || rec.ref === null)
        return only({ do: 'wait', reason: 'refused' });
  }
  const serviceState = trustedState(sit.service, now, sit.serviceTrustMs);
  // A change on its way is decided against as if in force: its old values are not yet.
  const expecting = { ...rec, applied: expectedValues(rec.applied, rec.confirming) };
  const view = {
    ...toView(expecting, sit.pipe.bounds, sit.pause, serviceState ?? undefined, sit.override),
    ...(sit.metric ? { metric: sit.metric } : {}),
    ...(sit.leadUntil !== undefined ? { leadUntil: sit.leadUntil } : {}),
  };
  const { decision, recommendations } = evaluateStep(sit.policy, now, view);
  const step = changeStep(expecting, rec, sit, decision, now, due, stage, serviceState === undefined);
  return { stage, step, decision, recommendations, readDue: due };
}

function changeStep(
  expecting: PipeRecord,
  rec: PipeRecord,
  sit: Situation,
  decision: Decision,
  now: number,
  due: boolean,
  stage: Stage,
  serviceUnknown: boolean,
): NextStep {
  // A confirmation read comes before a reconcile read (and stands for it), after any change.
  const read: NextStep | null = confirmDue(rec.confirming, now)
    ? { do: 'read', why: 'confirm' }
    : due
      ? { do: 'read', why: 'reconcile' }
      : null;
  const idle: NextStep =
    stage === 'confirming'
      ? { do: 'wait', reason: rec.confirming && rec.confirming.unconfirmedAt !== null ? 'unconfirmed' : 'confirming' }
      : { do: 'wait', reason: 'at_target' };
  if (decision.action !== 'change') {
    // The limit passed with the target not in force: sent once more, as decided then.
    if (decision.action === 'none' && resendDue(rec.confirming, sit.reloadedAt) && rec.kind) {
      const again = changesFor(rec.kind, rec.confirming?.target ?? {}, rec.applied);
      const send = isEmpty(again) ? null : sendStep(rec, sit, again, decision, now, serviceUnknown);
      if (send !== null && send.do !== 'skip') return send;
    }
    if (read) return read;
    if (decision.action === 'skip') return { do: 'skip', reason: skipCode(decision) };
    return idle;
  }
  // rec.kind is known in every deciding stage (stageOf).
  const body = rec.kind ? changesFor(rec.kind, decision.desired, expecting.applied) : {};
  if (isEmpty(body)) return read ?? idle;
  if (sit.dryRun) return read ?? { do: 'wait', reason: 'dry_run' };
  if (sit.stateLost !== null) return read ?? { do: 'wait', reason: 'state_lost' };
  if (stage === 'refused') return read ?? { do: 'wait', reason: 'refused' };
  const send = sendStep(rec, sit, body, decision, now, serviceUnknown);
  return send.do === 'skip' ? (read ?? send) : send;
}

/** A change of `body`, if the safety invariants allow it now; else the violation as a skip. */
function sendStep(
  rec: PipeRecord,
  sit: Situation,
  body: ScalingValues,
  decision: Decision,
  now: number,
  serviceUnknown: boolean,
): NextStep {
  // The safety invariants hold whatever decide() said and whatever an economy rule would like.
  const unsafe: SafetyViolation | null = unsafeChange(rec, sit, body, now);
  if (unsafe !== null) return { do: 'skip', reason: unsafe };
  // A change to an idle or stopped service would be refused (424): its state is listed first.
  if (serviceUnknown) return { do: 'list_services', direction: decision.direction };
  return { do: 'change', body, direction: directionOf(decision, rec, body) };
}

/** A re-send's direction (decide() said none): the way its fields move from what the pipe has. */
function directionOf(decision: Decision, rec: PipeRecord, body: ScalingValues): Direction {
  if (decision.action === 'change') return decision.direction;
  return Object.entries(body).some(([f, v]) => v > (rec.applied[f as keyof ScalingValues] ?? 0)) ? 'up' : 'down';
}
