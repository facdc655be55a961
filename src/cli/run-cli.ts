// Runs the program and turns a user's mistake into one clear line and exit code 1, never a stack.
import { CommanderError, type Command } from 'commander';
import { isApiError } from '../api/index.js';

/** A mistake of the user's (bad argument, bad file): printed as one line, exit 1. */
export class UserError extends Error {
  override readonly name = 'UserError';
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

export function describeError(err: unknown): string {
  if (isApiError(err)) {
    const text = err.platformError ?? err.message;
    return `error: ${err.code}: ${text}${err.requestId ? ` (requestId ${err.requestId})` : ''}`;
  }
  if (err instanceof UserError) return `error: ${err.message}`;
  if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('CONFIG_')) {
    return `error: ${err.message}`;
  }
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}

export async function runCli(program: Command, argv: readonly string[]): Promise<void> {
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
