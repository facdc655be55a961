// `${VAR}` in the config: a plain value is typed as YAML would type the result (`replicas: ${N}` is
// a number), but a credential is text whatever it looks like: a key secret 123456, 0123 or true
// from the environment is that exact string.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { breakBase } from './config-fixture.js';

const withKey = (env: Record<string, string>) =>
  parseConfig(
    breakBase('baseUrl: embedded', 'baseUrl: https://api.example.com\n  keyId: ${KEY_ID}\n  keySecret: ${KEY_SECRET}') +
      'redis:\n  url: redis://h:6379\n  username: ${REDIS_USER}\n  password: ${REDIS_PW}\n',
    { file: 'c.yaml', env: { REDIS_USER: '007', REDIS_PW: 'false', ...env } },
  );

describe('interpolated credentials', () => {
  it.each(['123456', '0123', 'true', '1e3', 'null', '0x1F'])('keep %s as that exact string', (value) => {
    const config = withKey({ KEY_ID: value, KEY_SECRET: value });
    expect(config.api.keys.default).toMatchObject({ keyId: value, keySecret: value });
    expect(config.redis).toMatchObject({ username: '007', password: 'false' });
  });

  it('other values are still typed as YAML types them', () => {
    const text = breakBase('baseline: { replicas: 2 }', 'baseline:\n      replicas: ${N}');
    const config = parseConfig(text, { file: 'c.yaml', env: { N: '3' } });
    expect(config.policies.weekday?.baseline).toMatchObject({ replicas: { value: 3 } });
  });
});
