// Key pools (key-pool.ts): the stable assignment of pipes to a pool's keys (weighted rendezvous
// hashing of the pipe's name), and the config that declares pools: secrets per key as for any key,
// every mistake named with its line.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { assignPools, poolsOf, rendezvousKey, type PoolMember } from '../../src/policy/key-pool.js';
import { parseConfig } from '../../src/config/load.js';
import type { PipeConfig } from '../../src/policy/types.js';
import type { Config } from '../../src/config/types.js';
import { ORG, SERVICE } from '../config/config-fixture.js';

const RATE = { requests: 10, perMs: 10_000 };
const member = (key: string, rateLimit = RATE): PoolMember => ({ key, rateLimit });
const names = Array.from({ length: 3_000 }, (_, i) => `pipe-${i}`);
const assign = (members: readonly PoolMember[]) => new Map(names.map((n) => [n, rendezvousKey(n, members)]));
const count = (a: ReadonlyMap<string, string>, key: string) => [...a.values()].filter((k) => k === key).length;

describe("the stable assignment of a pool's pipes", () => {
  it("depends only on the pipe's name and the pool's keys (not their order)", () => {
    const ab = assign([member('a'), member('b')]);
    expect(assign([member('b'), member('a')])).toEqual(ab);
    expect(rendezvousKey('orders', [member('a'), member('b')])).toBe(
      rendezvousKey('orders', [member('a'), member('b')]),
    );
  });

  it('spreads the pipes evenly over keys of the same rate', () => {
    const a = assign([member('a'), member('b')]);
    // 3,000 fair coin flips: 1,500 +- 4 standard deviations (27)
    expect(Math.abs(count(a, 'a') - 1_500)).toBeLessThan(110);
    const abc = assign([member('a'), member('b'), member('c')]);
    for (const k of ['a', 'b', 'c']) expect(Math.abs(count(abc, k) - 1_000)).toBeLessThan(110);
  });

  it('adding a key moves only about 1/n of the pipes, every one of them to the new key', () => {
    const before = assign([member('a'), member('b')]);
    const after = assign([member('a'), member('b'), member('c')]);
    const moved = names.filter((n) => before.get(n) !== after.get(n));
    expect(moved.every((n) => after.get(n) === 'c')).toBe(true);
    expect(Math.abs(moved.length - 1_000)).toBeLessThan(110);
  });

  it("removing a key moves only that key's pipes", () => {
    const before = assign([member('a'), member('b'), member('c')]);
    const after = assign([member('a'), member('c')]);
    for (const n of names) if (before.get(n) !== 'b') expect(after.get(n)).toBe(before.get(n));
  });

  it('weighs a key by its rate: twice the limit, about twice the pipes', () => {
    const a = assign([member('a'), member('big', { requests: 20, perMs: 10_000 })]);
    expect(Math.abs(count(a, 'big') - 2_000)).toBeLessThan(110);
  });

  it('assignPools gives each pipe that names a pool one of its keys, and leaves the others', () => {
    const pipe = (name: string, key: string): PipeConfig => ({
      name,
      organizationId: ORG,
      serviceId: SERVICE,
      pipeId: name,
      policy: 'p',
      key,
      bounds: {},
    });
    const config = {
      api: {
        keys: {
          default: { keyId: 'd', keySecret: 's', rateLimit: RATE },
          b1: { keyId: '1', keySecret: 's', rateLimit: RATE, pool: 'batch' },
          b2: { keyId: '2', keySecret: 's', rateLimit: RATE, pool: 'batch' },
        },
      },
      pipes: [pipe('x', 'default'), ...names.slice(0, 100).map((n) => pipe(n, 'batch'))],
    } as unknown as Config;
    expect([...poolsOf(config.api.keys)].map(([p, ms]) => [p, ms.map((m) => m.key)])).toEqual([
      ['batch', ['b1', 'b2']],
    ]);
    const out = assignPools(config);
    expect(out.pipes[0]).toBe(config.pipes[0]);
    const pooled = out.pipes.slice(1);
    expect(pooled.every((p) => p.pool === 'batch' && (p.key === 'b1' || p.key === 'b2'))).toBe(true);
    expect(pooled.some((p) => p.key === 'b1') && pooled.some((p) => p.key === 'b2')).toBe(true);
    // assigned again (a reload of the same config, or with the pool's keys changed): from the pool
    expect(assignPools(out).pipes).toEqual(out.pipes);
    const grown = assignPools({
      ...out,
      api: {
        ...out.api,
        keys: { ...out.api.keys, b3: { keyId: '3', keySecret: 's', rateLimit: RATE, pool: 'batch' } },
      },
    });
    expect(grown.pipes.slice(1).every((p, i) => p.key === pooled[i]!.key || p.key === 'b3')).toBe(true);
  });
});

// Keys of a pool, each with its secret from the environment or a file, as any key.
const pooled = (extraKeys: string, pipes: readonly { name: string; key: string }[]) => `api:
  baseUrl: https://api.example.com
  keyId: \${KEY_ID}
  keySecret: \${KEY_SECRET}
  keys:
    batch-1:
      keyId: \${B1_ID}
      keySecret: \${B1_SECRET}
      pool: batch
    batch-2: { keyId: b2, keySecretFile: secrets/b2, pool: batch }
${extraKeys}pipes:
${pipes.map((p, i) => `  - { name: ${p.name}, organizationId: ${ORG}, serviceId: ${SERVICE}, pipeId: b1000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}, policy: two, key: ${p.key} }`).join('\n')}
policies:
  two: { baseline: { replicas: 2 } }
`;
const ENV = { KEY_ID: 'd', KEY_SECRET: 'secret-default', B1_ID: 'b1', B1_SECRET: 'secret-b1' };
const parse = (text: string) =>
  parseConfig(text, {
    file: 'conf/pipescaler.yaml',
    env: ENV,
    readFile: (p) => {
      if (p === 'conf/secrets/b2') return 'secret-b2\n';
      throw Object.assign(new Error('missing'), { code: 'ENOENT' });
    },
  });
const issues = (text: string) => {
  try {
    parse(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as ConfigError;
    for (const secret of ['secret-default', 'secret-b1', 'secret-b2']) expect(e.message).not.toContain(secret);
    return e.issues.map((i) => `${i.line} ${i.path}: ${i.message}`);
  }
  return expect.unreachable('the config loaded');
};

describe('a config with a key pool', () => {
  const pipes = Array.from({ length: 40 }, (_, i) => ({ name: `p-${i}`, key: 'batch' }));

  it("loads each key's secret as for any key, and gives every pipe of the pool one of its keys", () => {
    const c = parse(pooled('', [...pipes, { name: 'solo', key: 'default' }]));
    expect(c.api.keys['batch-1']).toEqual({ keyId: 'b1', keySecret: 'secret-b1', rateLimit: RATE, pool: 'batch' });
    expect(c.api.keys['batch-2']).toEqual({ keyId: 'b2', keySecret: 'secret-b2', rateLimit: RATE, pool: 'batch' });
    const keys = c.pipes.slice(0, 40).map((p) => p.key);
    expect(new Set(keys)).toEqual(new Set(['batch-1', 'batch-2']));
    expect(
      c.pipes
        .slice(0, 40)
        .every((p) => p.pool === 'batch' && p.key === rendezvousKey(p.name, [member('batch-1'), member('batch-2')])),
    ).toBe(true);
    expect(c.pipes[40]).toMatchObject({ name: 'solo', key: 'default' });
    expect(c.pipes[40]!.pool).toBeUndefined();
  });

  it('refuses a pipe naming an unknown pool or key, with the pools it knows', () => {
    expect(issues(pooled('', [{ name: 'a', key: 'batchh' }]))).toEqual([
      '12 pipes[0].key: unknown API key or pool "batchh" (did you mean "batch"?); known: default (api.keys); pools: batch (api.keys.<key>.pool)',
    ]);
  });

  it('refuses a pool no key serves: a pipe naming it names nothing', () => {
    expect(issues(pooled('', [{ name: 'a', key: 'stream' }]))).toEqual([
      expect.stringContaining('12 pipes[0].key: unknown API key or pool "stream"'),
    ]);
    // an empty pool name (an unset variable) is no pool: refused where it is written
    expect(issues(pooled('', [{ name: 'a', key: 'batch' }]).replace('pool: batch\n', 'pool: ""\n'))).toEqual([
      '9 api.keys.batch-1.pool: pool name "" must be lower-case letters, digits and "-" (1 to 63, not starting or ending with "-")',
    ]);
  });

  it('refuses a key that is both pooled and named by a pipe', () => {
    expect(
      issues(
        pooled('', [
          { name: 'a', key: 'batch' },
          { name: 'b', key: 'batch-2' },
        ]),
      ),
    ).toEqual([
      '13 pipes[1].key: the key "batch-2" serves the pool "batch": name the pool (key: batch), which spreads its pipes over its keys; a pooled key serves only its pool',
    ]);
  });

  it('refuses a pool that has the name of a key (key: <name> would be ambiguous)', () => {
    const text = pooled('    batch: { keyId: b0, keySecretFile: secrets/b2 }\n', [{ name: 'a', key: 'batch' }]);
    expect(issues(text)).toEqual([
      '9 api.keys.batch-1.pool: pool "batch" has the name of an API key, so key: batch would be ambiguous; rename the pool or the key',
      '10 api.keys.batch-2.pool: pool "batch" has the name of an API key, so key: batch would be ambiguous; rename the pool or the key',
    ]);
    expect(issues(pooled('', [{ name: 'a', key: 'default' }]).replace('pool: batch\n', 'pool: default\n'))).toEqual([
      expect.stringMatching(/^9 api\.keys\.batch-1\.pool: pool "default" has the name of an API key/),
    ]);
  });

  it('refuses a pool name that is not a key-like name, and pool on the default key', () => {
    expect(issues(pooled('', [{ name: 'a', key: 'batch' }]).replace('pool: batch\n', 'pool: Batch_A\n'))).toEqual([
      expect.stringMatching(/^9 api\.keys\.batch-1\.pool: pool name "Batch_A" must be lower-case/),
    ]);
    expect(
      issues(
        pooled('', [{ name: 'a', key: 'batch' }]).replace(
          '  keyId: ${KEY_ID}\n',
          '  keyId: ${KEY_ID}\n  pool: batch\n',
        ),
      ),
    ).toEqual([expect.stringMatching(/^4 api\.pool: unknown key "pool"/)]);
  });
});
