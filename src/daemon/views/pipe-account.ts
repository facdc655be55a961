// What status tells of a pipe from its record, and nothing it does not know: the values the
// platform last showed with the instant it showed them, and the newest change sent with its state.
// A target is never given as the pipe's values: only a read or a change's answer puts values in
// `applied`. Pure; status.ts builds each row's platform and change with it.
import type { PipeState, ScalingValues } from '../../api/index.js';
import { IN_FLIGHT } from '../lifecycle/unsettled.js';
import type { PipeRecord } from '../model/record.js';

/**
 * - sending: its request is out, its answer awaited (until api.timeout after its send);
 * - confirming: answered 2xx, no read has shown it in force yet;
 * - outcome_unknown: its answer was lost (a timeout, a cut connection): the platform may carry it
 *   out later or never; a read settles it;
 * - unconfirmed: not in force within evaluate.actuation.max of its send.
 */
export type ChangeState = 'sending' | 'confirming' | 'outcome_unknown' | 'unconfirmed';

export interface ChangeOnItsWay {
  readonly state: ChangeState;
  /** What the pipe is to hold once it is in force (its fields, over an older change's still on its way). */
  readonly target: ScalingValues;
  /** Since when it is in this state: sent (sending, confirming: its first send), its answer lost
   *  (outcome_unknown), its limit passed (unconfirmed). */
  readonly since: number;
  /** The first send of this target. */
  readonly sentAt: number;
  readonly unconfirmedAt: number | null;
  /** Sends of this target after the first (after the limit, or a reload). */
  readonly resends: number;
  /** outcome_unknown: the error that lost its answer (API_TIMEOUT, API_NETWORK...). */
  readonly code?: string;
}

/** What the platform last showed of the pipe: its values and state, and when (null: never read). */
export interface PlatformShown {
  readonly values: ScalingValues;
  readonly state: PipeState | null;
  readonly at: number | null;
}

export interface PipeAccount {
  readonly platform: PlatformShown;
  /** The newest change sent that no read has shown in force, or null: the platform's values are
   *  what the daemon expects. */
  readonly change: ChangeOnItsWay | null;
}

/** The pipe as the record knows it at `now` (`now` only tells a request still out from one whose
 *  time ran out). */
export function accountOf(rec: PipeRecord, now: number): PipeAccount {
  const platform = { values: rec.applied, state: rec.state, at: rec.lastReadAt };
  return { platform, change: changeOf(rec, now) };
}

function changeOf(rec: PipeRecord, now: number): ChangeOnItsWay | null {
  const u = rec.unsettled;
  const c = rec.confirming;
  // A change of unknown outcome sent after the one being confirmed is the newest; one adopted as
  // the change being confirmed (answers.ts afterRead: its settle read did not show it)
  // is that confirmation, sent at its instant.
  if (u !== null && (c === null || c.lastSentAt < u.at)) {
    const base = {
      target: { ...(c?.target ?? {}), ...u.sent },
      sentAt: u.at,
      unconfirmedAt: null,
      resends: 0,
    };
    if (u.code === IN_FLIGHT) {
      const until = u.until;
      return until === undefined || now < until
        ? { ...base, state: 'sending', since: u.at }
        : { ...base, state: 'outcome_unknown', since: until };
    }
    if (u.taken === true) return { ...base, state: 'confirming', since: u.at };
    return { ...base, state: 'outcome_unknown', since: u.at, code: u.code };
  }
  if (c === null) return null;
  const base = { target: c.target, sentAt: c.sentAt, unconfirmedAt: c.unconfirmedAt, resends: c.resends };
  if (c.unconfirmedAt !== null) return { ...base, state: 'unconfirmed', since: c.unconfirmedAt };
  if (c.outcomeUnknown === true) {
    const code = u !== null && u.at === c.lastSentAt && u.code !== IN_FLIGHT ? { code: u.code } : {};
    return { ...base, state: 'outcome_unknown', since: c.lastSentAt, ...code };
  }
  return { ...base, state: 'confirming', since: c.sentAt };
}
