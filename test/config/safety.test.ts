// Issue 10, "Also": an error never repeats what `${VAR}` read from the environment (it names the
// variable), and names every JavaScript object has (`__proto__`, `constructor`...) are refused as
// policy and key names with a clear error instead of crashing validate and plan.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';

const PIPE = (name: string, policy = 'p', n = 1) => `
  - name: ${name}
    organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b
    serviceId: a1000000-0000-4000-8000-000000000001
    pipeId: b1000000-0000-4000-8000-00000000000${n}
    policy: ${policy}`;

function problems(text: string, env: Record<string, string> = {}): string {
  try {
    parseConfig(text, { file: 'c.yaml', env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the config was accepted');
}

describe('config errors and the environment', () => {
  it('a value read by ${VAR} is never repeated in an error: the variable is named', () => {
    const secret = 'Sup3r-DB-Passw0rd!';
    const msg = problems(`pipes:${PIPE('${DB_PASS}')}\npolicies:\n  p:\n    baseline: { replicas: 2 }\n`, {
      DB_PASS: secret,
    });
    expect(msg).toContain('pipes[0].name: pipe name ${DB_PASS} must be lower-case');
    expect(msg).not.toContain(secret);
    expect(msg).not.toContain('Sup3r');
  });
});

describe('reserved names', () => {
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    it(`a policy named ${name} is refused with a clear error`, () => {
      const msg = problems(`pipes:${PIPE('a', name)}\npolicies:\n  ${name}:\n    baseline: { replicas: 2 }\n`);
      expect(msg).toContain(
        `policies.${name}: "${name}" cannot be a name: it is a property of every JavaScript object; rename it`,
      );
      expect(msg).toContain(`pipes[0].policy: unknown policy "${name}"`);
      expect(msg).not.toMatch(/Cannot read properties/);
    });
  }

  it('an API key named constructor is refused', () => {
    const msg = problems(
      `api:\n  keys:\n    constructor: { keyId: k, keySecret: s }\npipes:${PIPE('a', 'p')}\n    key: constructor\npolicies:\n  p:\n    baseline: { replicas: 2 }\n`,
    );
    expect(msg).toContain('api.keys.constructor: "constructor" cannot be a name');
  });
});
