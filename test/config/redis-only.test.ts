// parseConfig(..., needs: 'redis'): what status, pause and resume load. The API's connection and
// credentials and the Prometheus server are not read; the Redis settings and everything else are.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';

const text = `
api:
  baseUrl: \${PS_BASE_URL}
  keyId: \${PS_KEY_ID}
  keySecretFile: /nonexistent/secret
  keys:
    other:
      keyId: \${PS_OTHER_ID}
      keySecretFile: /nonexistent/other
      rateLimit: { requests: 5, per: 10s }
redis:
  url: redis://127.0.0.1:6379
  prefix: \${PS_PREFIX:-ops}
metrics:
  prometheus:
    url: \${PS_PROMETHEUS}
    bearerTokenFile: /nonexistent/token
pipes:
  - { name: a, organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b, serviceId: a1000000-0000-4000-8000-000000000001,
      pipeId: b1000000-0000-4000-8000-000000000001, policy: p, key: other }
policies:
  p: { baseline: { replicas: 2 } }
`;

describe('a config loaded for Redis only', () => {
  it("needs none of the API's or Prometheus' variables and reads no key file", () => {
    const reads: string[] = [];
    const config = parseConfig(text, {
      file: 'c.yaml',
      env: {},
      needs: 'redis',
      readFile: (p) => {
        reads.push(p);
        throw new Error('no');
      },
    });
    expect(reads).toEqual([]);
    expect(config.redis).toMatchObject({ url: 'redis://127.0.0.1:6379', prefix: 'ops' });
    expect(config.pipes.map((p) => [p.name, p.key])).toEqual([['a', 'other']]);
    // each key is there for its budget's numbers, without credentials
    expect(config.api.keys.other).toEqual({ keyId: '', keySecret: '', rateLimit: { requests: 5, perMs: 10_000 } });
    expect(config.api.keys.default!.keySecret).toBe('');
  });

  it('is the same config otherwise: the full load refuses what it needs', () => {
    expect(() => parseConfig(text, { file: 'c.yaml', env: {} })).toThrow(/PS_BASE_URL/);
  });

  it('still needs the Redis settings and a valid rest', () => {
    expect(() =>
      parseConfig(text.replace('prefix: ${PS_PREFIX:-ops}', 'prefix: ${PS_PREFIX}'), {
        file: 'c.yaml',
        env: {},
        needs: 'redis',
      }),
    ).toThrow(/redis\.prefix: environment variable \$\{PS_PREFIX\} not set/);
    expect(() =>
      parseConfig(text.replace('policy: p', 'policy: q'), { file: 'c.yaml', env: {}, needs: 'redis' }),
    ).toThrow(/unknown policy "q"/);
  });
});
