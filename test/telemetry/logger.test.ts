// Log lines for a person (pretty, at a terminal) carry no terminal control: a pause reason or a
// platform text with escape sequences is printed as text, not obeyed. JSON lines stay JSON.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/telemetry/index.js';
import { terminalSafeJson } from '../../src/telemetry/logger.js';

const HOSTILE = 'ok\u001b[2J\u001b]0;pwned\u0007\r\nforged\u009b31m\u202eevil';

function capture(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('pretty log lines', () => {
  it('print a hostile text without its control characters, on its own line', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', pretty: true, destination: out.stream });
    logger.warn({ reason: HOSTILE }, `paused: ${HOSTILE}`);
    const text = out.text();
    expect(text).toContain('ok');
    expect(text).toContain('forged');
    expect(
      text
        .trimEnd()
        .split('\n')
        .filter((l) => l.includes('forged')),
    ).toHaveLength(2);
    // only the line breaks pino-pretty itself writes between fields
    // eslint-disable-next-line no-control-regex -- what must not be there
    expect(text.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  });

  it('JSON lines keep the text as it was (escaped by JSON, for a log tool to read)', () => {
    const out = capture();
    const logger = createLogger({ level: 'info', pretty: false, destination: out.stream });
    logger.warn({ reason: HOSTILE }, 'paused');
    expect((JSON.parse(out.text()) as { reason: string }).reason).toBe(HOSTILE);
  });

  it('terminalSafeJson keeps an escaped backslash and the JSON valid', () => {
    const line = JSON.stringify({ msg: 'a\\nb \\\u001b c\u001bd' });
    expect(JSON.parse(terminalSafeJson(line))).toEqual({ msg: 'a\\nb \\  c d' });
  });
});
