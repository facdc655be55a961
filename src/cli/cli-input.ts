// Reading what a user typed: numeric flags and JSON bodies, each failure one line naming its source.
import { readFile } from 'node:fs/promises';
import { UserError } from './run-cli.js';

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A flag's value as a number, or undefined when the flag was not given. Only the syntax is
 * checked: ranges are the platform's to judge, so its 400 text reaches the user unchanged.
 */
export function numberFlag(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = raw.trim();
  if (!NUMBER.test(s)) throw new UserError(`${flag}: "${raw}" is not a number`);
  return Number(s);
}

/** A JSON body from --file F (or "-" for stdin), or from stdin when it is not a terminal. */
export async function readJsonBody(
  file: string | undefined,
  stdin: NodeJS.ReadStream = process.stdin,
): Promise<unknown> {
  let text: string;
  let source: string;
  if (file !== undefined && file !== '-') {
    source = `--file ${file}`;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new UserError(`${source}: cannot read it (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else {
    if (file === undefined && stdin.isTTY) throw new UserError('no body: pass --file FILE or pipe the JSON on stdin');
    source = 'stdin';
    text = await readAll(stdin);
  }
  if (text.trim() === '') throw new UserError(`${source}: the body is empty`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UserError(`${source}: not valid JSON (${(err as Error).message})`);
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) text += chunk as string;
  return text;
}

/** Where a command reads its config when none is named. */
export const DEFAULT_CONFIG = 'config/pipescaler.yaml';

/**
 * The config file of a command that takes it either way, `pipescaler plan FILE` or
 * `pipescaler plan -c FILE` (as pause, resume and status): both is fine when they agree.
 */
export function configFile(positional: string | undefined, option: string | undefined): string {
  if (positional !== undefined && option !== undefined && positional !== option) {
    throw new UserError(`two config files given (${positional} and -c ${option}): give one`);
  }
  return positional ?? option ?? DEFAULT_CONFIG;
}
