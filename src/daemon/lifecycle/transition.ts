// What an answer makes of a pipe's record, in types: the answer (a read's or a change's), what
// comes after it, and what it did to the change being confirmed. answers.ts computes them.
import type { PipeKind, PipeScaling, PipeState, ScalingValues } from '../../api/index.js';
import type { PipeRecord } from '../model/record.js';

/** What a read or a change answered about the pipe. */
export interface PipeAnswer {
  readonly kind: PipeKind | null;
  readonly state: PipeState;
  readonly scaling: PipeScaling;
  readonly endpointIds: readonly string[];
}

/** What comes after an answer: a turn on the key's queue (a read, or a change with its
 *  direction), a new evaluation at the same tick instant, or nothing. */
export type Then =
  | { readonly then: 'read' }
  | { readonly then: 'change'; readonly up: boolean }
  | { readonly then: 'evaluate' }
  | { readonly then: 'nothing' };

export interface Transition {
  readonly write: Partial<PipeRecord>;
  readonly next: Then;
  /** Fields that differ from what pipescaler last applied: changed behind its back. */
  readonly drift: { readonly expected: ScalingValues; readonly actual: ScalingValues } | null;
  /** A change whose outcome was unknown shows in the answer, and nothing else explains its values
   *  (answers.ts landedLate): it landed late (reported once). Shown but explained otherwise, it is
   *  settled all the same (never drift), as `unknown`. */
  readonly landed?: {
    readonly sent: ScalingValues;
    readonly at: number;
    readonly id?: string;
    /** Its Idempotency-Key. */
    readonly key?: string;
  };
  /** A change of unknown outcome settled without knowing whether it landed: its values shown in
   *  force but explained otherwise (an earlier send of them still being confirmed, or values the
   *  pipe held already), or never shown within UNSETTLED_MS. Its 200, if one came, went to a sender
   *  that did not record it (killed, or stalled past its request's time): the audit log says the
   *  outcome is unknown, by its Idempotency-Key, rather than nothing. */
  readonly unknown?: Transition['landed'];
  /** A change of unknown outcome that a newer change replaced (the record's `replaced`), carried out
   *  after it: the answer shows its values, new and explained by nothing else (unsettled.ts
   *  replacedShown). Landed late (reported once), never drift, and the pipe is decided again. */
  readonly landedReplaced?: Transition['landed'];
  /** The change being confirmed is in force, went unconfirmed, or stopped being unconfirmed. */
  readonly confirmation?: ConfirmationChange;
}

/** What an answer did to the change being confirmed (confirmation.ts). */
export type ConfirmationChange =
  /** A read (or the change's own answer) showed the target in force: actuation from its first send. */
  | {
      readonly is: 'confirmed';
      readonly values: ScalingValues;
      readonly sentAt: number;
      readonly at: number;
      /** The instant the read that showed it stood for (confirmation.ts sampledAt: the record's
       *  dueAt as the read was taken, or the confirming read's instant for a probe that went after
       *  it; past the limit, the limit); null: the change's own answer showed it. A read that came
       *  late measures the queue, not the platform (confirmation.ts actuationSample). */
      readonly dueAt: number | null;
      /** The last read that did not show it (Confirming.notShownAt): the lower end of its
       *  actuation sample; absent when no read came before the one that showed it. */
      readonly notShownAt?: number;
      /** The pipe's change being confirmed had gone unconfirmed (that state clears). */
      readonly wasUnconfirmed: boolean;
      /** This target went past its limit before it was confirmed: from its first send, its
       *  actuation measures a lost or stuck change. */
      readonly pastLimit: boolean;
      /** Its outcome had been unknown (a timeout, a cut, an unreadable answer). */
      readonly outcomeUnknown: boolean;
    }
  /** The limit passed with the target not in force. */
  | { readonly is: 'unconfirmed'; readonly target: ScalingValues; readonly sentAt: number; readonly resends: number }
  /** An unconfirmed change replaced by another target, or by a change made by hand. */
  | { readonly is: 'dropped'; readonly target: ScalingValues; readonly reason: 'new_target' | 'drift' };
