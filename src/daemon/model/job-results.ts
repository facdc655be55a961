// What a job did, as BullMQ keeps it (a job's returnvalue): queue listings, tests and the bench
// read it. One word per meaning: a turn that sent nothing says whether it waited or skipped, and why.
import type { Direction } from '../../policy/index.js';

/** Why a read is made: a first contact is what every change waits for (the full budget), and so
 *  is a settle; a confirmation read takes the key's read share ahead of reconcile reads. */
export type ReadWhy = 'first_contact' | 'settle' | 'confirm' | 'reconcile';

export type DropReason =
  | 'unknown_pipe'
  | 'unknown_policy'
  | 'no_key'
  | 'stale'
  | 'superseded'
  | 'pipe_changed'
  /** An evaluation of a state Redis lost (evaluate.ts). */
  | 'state_lost';

export type JobResult =
  /** Dropped before anything was decided or sent. */
  | { readonly done: 'dropped'; readonly why: DropReason }
  /** A reload gave the pipe another key: the turn went to that key's queue. */
  | { readonly done: 'key_moved'; readonly key: string }
  /** The record was of other ids (a reload changed them): forgotten, the pipe is read afresh. */
  | { readonly done: 'forgot' }
  /** An evaluation queued a turn: a read, or a change (its services list first, if need be). */
  | { readonly done: 'queued'; readonly turn: 'read' | 'change'; readonly direction: Direction }
  | { readonly done: 'read'; readonly why: ReadWhy; readonly drift: boolean }
  | { readonly done: 'read_endpoint' }
  | { readonly done: 'change'; readonly direction: Direction }
  /** A change whose outcome is unknown (timed out, cut, an unreadable 2xx): a read settles it next. */
  | { readonly done: 'unsettled'; readonly code: string }
  /** Nothing sent: the pipe waits (at target, dry run, refused, state lost) or is skipped. */
  | { readonly done: 'nothing'; readonly step: 'wait' | 'skip'; readonly reason: string };

export const dropped = (why: DropReason): JobResult => ({ done: 'dropped', why });
