// Collects what escapes as an unhandled rejection or uncaught exception while a test file runs,
// so a sweep can assert that bad input crashed nothing.
import { afterAll, beforeAll } from 'vitest';

export function collectEscapes(): readonly unknown[] {
  const escaped: unknown[] = [];
  const onEscape = (e: unknown): void => {
    escaped.push(e);
  };
  beforeAll(() => {
    process.on('unhandledRejection', onEscape);
    process.on('uncaughtException', onEscape);
  });
  afterAll(() => {
    process.off('unhandledRejection', onEscape);
    process.off('uncaughtException', onEscape);
  });
  return escaped;
}
