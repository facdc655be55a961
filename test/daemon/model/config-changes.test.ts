// configChanges() and describeChanges(): what a reload changed, by name, for its log line.
import { describe, expect, it } from 'vitest';
import { configChanges, describeChanges } from '../../../src/daemon/model/config-changes.js';
import type { Config } from '../../../src/config/types.js';
import { demoPipe, oneOff, policy, testConfig } from '../helpers.js';

const base = testConfig({
  baseUrl: 'http://127.0.0.1:1',
  prefix: 'p',
  pipes: [demoPipe('orders-events', 'a'), demoPipe('clickstream', 'b')],
  policies: { a: policy('a', { replicas: 2 }), b: policy('b', { replicas: 3 }) },
});

describe('configChanges', () => {
  it('finds nothing between a config and a copy of it', () => {
    const c = configChanges(base, structuredClone(base));
    expect(describeChanges(c)).toBe('nothing changed');
  });

  it('names the pipes added, removed and changed, the policies, the keys and the settings', () => {
    const next: Config = {
      ...base,
      pipes: [{ ...demoPipe('clickstream', 'b'), bounds: { replicas: { min: 2 } } }, demoPipe('nightly-s3', 'c')],
      policies: {
        b: policy('b', { replicas: 3 }, [oneOff('peak', 0, 1, { replicas: 6 })]),
        c: policy('c', { concurrency: 2 }),
      },
      api: {
        ...base.api,
        timeoutMs: 1_000,
        keys: {
          default: { ...base.api.keys.default!, rateLimit: { requests: 5, perMs: 10_000 } },
          other: { keyId: 'o', keySecret: 's', rateLimit: { requests: 1, perMs: 1 } },
        },
      },
      evaluate: { ...base.evaluate, cron: '*/10 * * * * *' },
    };
    const c = configChanges(base, next);
    expect(c).toEqual({
      pipesAdded: ['nightly-s3'],
      pipesRemoved: ['orders-events'],
      pipesChanged: ['clickstream'],
      policiesAdded: ['c'],
      policiesRemoved: ['a'],
      policiesChanged: ['b'],
      keysAdded: ['other'],
      keysRemoved: [],
      keysChanged: ['default'],
      settingsChanged: ['api.timeout', 'evaluate.cron'],
    });
    expect(describeChanges(c)).toBe(
      'pipes added: nightly-s3; pipes removed: orders-events; pipes changed: clickstream; ' +
        'policies added: c; policies removed: a; policies changed: b; keys added: other; keys changed: default; ' +
        'settings changed: api.timeout, evaluate.cron',
    );
  });

  it("sees a changed secret without saying it, and no change in the order of a policy's keys", () => {
    const next: Config = {
      ...base,
      api: { ...base.api, keys: { default: { ...base.api.keys.default!, keySecret: 'new-secret-value' } } },
    };
    const c = configChanges(base, next);
    expect(c.keysChanged).toEqual(['default']);
    expect(JSON.stringify(c)).not.toContain('new-secret-value');
    const reordered = {
      ...base.policies.a!,
      behavior: base.policies.a!.behavior,
      baseline: base.policies.a!.baseline,
      name: 'a',
    };
    expect(configChanges(base, { ...base, policies: { ...base.policies, a: reordered } }).policiesChanged).toEqual([]);
  });
});
