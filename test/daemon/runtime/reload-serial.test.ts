// Reloads run one at a time (src/daemon/runtime/reload.ts createReload): a SIGHUP and the file's
// watch ask together, and two loads of a large config at once held two parses in memory (the fleet
// bench: 500 MB peak RSS per replica against 320-360 before the load moved to a worker thread).
import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/index.js';
import { DaemonEmitter, silentLogger } from '../../../src/daemon/index.js';
import { createReload } from '../../../src/daemon/runtime/reload.js';
import type { StateStore } from '../../../src/daemon/store/state-store.js';
import { DEMO, demoPipe, policy, testConfig } from '../helpers.js';

function configWith(replicas: number): Config {
  return testConfig({
    baseUrl: 'http://127.0.0.1:1',
    prefix: 'reload-serial',
    pipes: [demoPipe('orders-events', 'p')],
    policies: { p: policy('p', { replicas }) },
  });
}

/** A reload whose loads of the file wait for the test: each load is a deferred the test settles. */
function harness() {
  let current = configWith(1);
  const loads: { resolve: (c: Config) => void }[] = [];
  let loading = 0;
  let most = 0;
  const swapped: number[] = [];
  const reload = createReload({
    load: () => {
      loading++;
      most = Math.max(most, loading);
      return new Promise<Config>((resolve) =>
        loads.push({
          resolve: (c) => {
            loading--;
            resolve(c);
          },
        }),
      );
    },
    fixedSettings: new Set(),
    store: { unpark: async () => {} } as unknown as StateStore,
    emitter: new DaemonEmitter(),
    logger: silentLogger,
    config: () => current,
    demoKey: () => ({ keyId: DEMO.keyId, keySecret: DEMO.keySecret, rateLimit: { requests: 1000, perMs: 1000 } }),
    lanes: () => null,
    swap: async (config) => {
      current = config;
      swapped.push((config.policies.p!.baseline.replicas as { value: number }).value);
    },
  });
  const flush = () => new Promise((r) => setImmediate(r));
  return { reload, loads, swapped, most: () => most, flush };
}

describe('reloads, one at a time', () => {
  it('a reload asked for while one loads waits for it; those asked for while one waits share it', async () => {
    const h = harness();
    const first = h.reload();
    // the load starts within the call
    expect(h.loads).toHaveLength(1);
    const second = h.reload();
    const third = h.reload();
    expect(third).toBe(second);
    await h.flush();
    expect(h.loads).toHaveLength(1);
    h.loads[0]!.resolve(configWith(2));
    expect(await first).toBe(true);
    await h.flush();
    // the waiting reload starts only now, and reads the file as it is now
    expect(h.loads).toHaveLength(2);
    // asked for after it started: a reload of its own, after it
    const fourth = h.reload();
    expect(fourth).not.toBe(second);
    h.loads[1]!.resolve(configWith(3));
    expect(await second).toBe(true);
    await h.flush();
    expect(h.loads).toHaveLength(3);
    h.loads[2]!.resolve(configWith(4));
    expect(await fourth).toBe(true);
    expect(h.swapped).toEqual([2, 3, 4]);
    expect(h.most()).toBe(1);
  });

  it('a reload with a config of its own waits its turn and is never shared', async () => {
    const h = harness();
    const fromFile = h.reload();
    const given = h.reload(configWith(7));
    const again = h.reload();
    expect(again).not.toBe(given);
    h.loads[0]!.resolve(configWith(2));
    await fromFile;
    expect(await given).toBe(true);
    await h.flush();
    h.loads[1]!.resolve(configWith(5));
    expect(await again).toBe(true);
    expect(h.swapped).toEqual([2, 7, 5]);
  });

  it('a refused or failed reload lets the next one run', async () => {
    const h = harness();
    const failing = h.reload();
    const next = h.reload();
    h.loads[0]!.resolve(Promise.reject(new Error('broken file')) as unknown as Config);
    expect(await failing).toBe(false);
    await h.flush();
    h.loads[1]!.resolve(configWith(6));
    expect(await next).toBe(true);
    expect(h.swapped).toEqual([6]);
  });
});
