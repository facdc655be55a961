// A YAML syntax error as one config issue, placed on the line of the mistake. yaml places some
// indentation mistakes elsewhere: a key indented deeper than its siblings reads as the previous
// value going on, and yaml reports where that value starts (the line above the mistake); a
// misaligned item after a comment is reported at the comment. Both are moved to the line an
// editor must change.
import type { LineCounter, YAMLError } from 'yaml';
import type { ConfigIssue } from './errors.js';

export const STACK_OVERFLOW = 'Maximum call stack size exceeded';
export const TOO_DEEP =
  'nested too deeply to read (hundreds of levels of mappings or lists): a config is a few levels deep; check the brackets and the indentation';

/** First character at or after `offset` that is neither blank nor part of a comment line. */
function firstContent(text: string, offset: number): number {
  let i = offset;
  for (;;) {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
    if (text[i] !== '#') return Math.min(i, text.length);
    const eol = text.indexOf('\n', i);
    if (eol < 0) return text.length;
    i = eol + 1;
  }
}

/** Where an editor fixes the error, as an offset in the text, and what to say there. */
function mistake(
  [first, second]: readonly [YAMLError, YAMLError | undefined],
  errors: number,
  text: string,
): { at: number; message?: string; errors: number } {
  // `baseUrl: embedded` then `   timeout: 30s` one column deeper: "embedded timeout" became a
  // key that spans lines. The mistake is on the line of that key's colon (its end).
  if (
    first.code === 'BLOCK_AS_IMPLICIT_KEY' &&
    second?.code === 'MULTILINE_IMPLICIT_KEY' &&
    second.pos[0] === first.pos[0]
  ) {
    const lineStart = text.lastIndexOf('\n', second.pos[1] - 1) + 1;
    return {
      at: firstContent(text, lineStart),
      message:
        "this key is indented deeper than the key above it (it reads as part of that key's value): align it with its siblings",
      errors: 2,
    };
  }
  if (first.code === 'BAD_INDENT') return { at: firstContent(text, first.pos[0]), errors: 1 };
  // yaml catches its own stack overflow on a document nested thousands of levels deep
  if (first.message.includes(STACK_OVERFLOW)) return { at: first.pos[0], message: TOO_DEEP, errors };
  return { at: first.pos[0], errors: 1 };
}

/** The first syntax error (the next ones mostly follow from it) as an issue with its line. */
export function syntaxIssue(errors: readonly YAMLError[], lc: LineCounter, text: string): ConfigIssue {
  const [first, second] = errors;
  if (first === undefined) throw new Error('syntaxIssue needs an error');
  const place = mistake([first, second], errors.length, text);
  const { line, col } = lc.linePos(place.at);
  // yaml's own messages can quote the source line (which may hold a secret) or a long token (a value):
  // keep its words without the quote
  const own = (first.message.split('\n')[0] ?? '') // split gives at least one piece
    .replace(/ at line \d+, column \d+.*$/, '')
    .replace(/: "(.{3,})"$/, '');
  const more = errors.length - place.errors;
  const then = more > 0 ? ` (then ${more} more syntax error${more > 1 ? 's' : ''} that may follow from it)` : '';
  return { path: '', line, column: col, message: `YAML syntax: ${place.message ?? own}${then}` };
}
