// The reason an operator gives a pause or an override: one definition for both commands. It is a
// line of `status`, of the audit log and of the history, never a document: short, printable.
import { printable } from '../api/internal.js';
import { UserError } from './run-cli.js';

/** The longest reason, in characters. */
export const MAX_REASON = 500;

/** `--reason` trimmed and checked; a UserError naming the flag otherwise. */
export function operatorReason(text: string): string {
  const reason = text.trim();
  if (reason === '') throw new UserError('--reason: give a reason (it is shown in status, history and logs)');
  if (reason.length > MAX_REASON) {
    throw new UserError(`--reason: ${reason.length} characters, at most ${MAX_REASON} (a line of status)`);
  }
  if (printable(reason) !== reason) throw new UserError('--reason: control characters are not allowed');
  return reason;
}
