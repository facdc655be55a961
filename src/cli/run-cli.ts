// Runs the program and turns a user's mistake into one clear line and exit code 1, never a stack.
import { CommanderError, type Command } from 'commander';
import { isApiError, type ApiError } from '../api/index.js';
import { printable } from '../api/internal.js';
import type { CliErrorCode } from '../config/index.js';

/** A mistake of the user's (bad argument, bad file): printed as one line, exit 1. */
export class UserError extends Error {
  override readonly name = 'UserError';
  readonly code: CliErrorCode = 'CLI_USAGE';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/**
 * What the platform said, after our code: its text starts with its own reason ("BAD_REQUEST:
 * replicas must be ..."), which says again what the code says (API_BAD_REQUEST), so it is cut.
 */
export function apiErrorText(err: ApiError): string {
  const text = err.platformError ?? err.message;
  return /^[A-Z][A-Z_]+: (.+)$/s.exec(text)?.[1] ?? text;
}

export function describeError(err: unknown): string {
  if (isApiError(err)) {
    // the platform's words, on one line without terminal control
    const id = err.requestId ? ` (requestId ${printable(err.requestId)})` : '';
    return `error: ${err.code}: ${printable(apiErrorText(err))}${id}`;
  }
  // Ours (CONFIG_*, CLI_USAGE: src/config/error-codes.ts) and anything else say what is wrong in
  // their message; only the platform's words need its code in front.
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * A reader that closed our stdout early (`pipescaler simulate ... | head -1`) has all it wanted:
 * the command ends quietly with status 0 instead of dying on an unhandled EPIPE with a stack.
 */
export function endQuietlyOnClosedStdout(
  stream: NodeJS.WriteStream = process.stdout,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') exit(0);
    else {
      process.stderr.write(`error: cannot write to stdout: ${err.code ?? err.message}\n`);
      exit(1);
    }
  });
}

export async function runCli(program: Command, argv: readonly string[]): Promise<void> {
  endQuietlyOnClosedStdout();
  program.exitOverride();
  try {
    await program.parseAsync([...argv]);
  } catch (err) {
    if (err instanceof CommanderError) {
      // commander has printed its message already; help and version are exit 0.
      process.exitCode = err.exitCode;
      return;
    }
    process.stderr.write(`${describeError(err)}\n`);
    process.exitCode = err instanceof UserError ? err.exitCode : 1;
  }
}
