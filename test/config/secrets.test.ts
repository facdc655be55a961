// The key's credentials for a real API: when the variables the config names are unset, the error
// names those variables (whatever the config calls them), not a generic pair.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { breakBase } from './config-fixture.js';

function messages(text: string, env: Record<string, string>): string[] {
  try {
    parseConfig(text, { file: 'c.yaml', env });
  } catch (err) {
    return (err as ConfigError).issues.map((i) => `${i.line} ${i.path}: ${i.message}`);
  }
  throw new Error('the config was accepted');
}

const real = (key: string) => breakBase('baseUrl: embedded', `baseUrl: https://api.example.com\n${key}`);

describe('unset key variables', () => {
  it('are named when every one of them is unset', () => {
    const text = real('  keyId: ${ACME_KEY_ID:-}\n  keySecret: ${ACME_KEY_SECRET:-}');
    expect(messages(text, {})).toEqual([
      "2 api: baseUrl is not embedded and the key's environment variables ACME_KEY_ID, ACME_KEY_SECRET are not set: export them (or use keySecretFile)",
    ]);
  });

  it('is named when only the secret is unset', () => {
    const text = real('  keyId: ${ACME_KEY_ID:-}\n  keySecret: ${ACME_KEY_SECRET:-}');
    expect(messages(text, { ACME_KEY_ID: 'k-1' })).toEqual([
      '4 api.keySecret: is empty: ACME_KEY_SECRET is not set or empty (${ACME_KEY_SECRET:-} resolved to nothing)',
    ]);
  });
});
