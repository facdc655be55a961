// Issue 10 item 5: a reload is fully validated, including what the daemon needs to run it, before
// anything is swapped. A truncated file (`: > config.yaml`), a config whose API key id resolves to
// empty, or one without pipes is refused with a reason naming the field; the last good config
// keeps running (the truncated file used to exit the process: "TypeError: keyId is required").
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../../src/daemon/index.js';
import { DEMO, FAST_WORKERS, REDIS_URL, cleanupPrefix, collect, drained, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('reloadref');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-reloadref-'));
const T0 = Date.parse('2026-11-23T10:00:00Z');

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

const pipes = `
pipes:
  - name: orders-events
    organizationId: ${DEMO.org}
    serviceId: ${DEMO.analytics}
    pipeId: ${DEMO.pipes['orders-events']}
    policy: steady
`;
const rest = (replicas: number) => `
redis:
  url: ${REDIS_URL}
  prefix: ${prefix}
evaluate:
  reconcile: 24h
policies:
  steady:
    baseline: { replicas: ${replicas}, replicaCpuMillicores: 500, replicaMemoryGb: 2 }
`;
const good = (baseUrl: string, replicas: number) => `
api:
  baseUrl: ${baseUrl}
  keyId: ${DEMO.keyId}
  keySecret: \${PS_TEST_SECRET}
  rateLimit: { requests: 1000, per: 1s }
${pipes}${rest(replicas)}`;
// embedded, with credentials from variables that are set but empty
const emptyKey = `
api:
  baseUrl: embedded
  keyId: \${PS_EMPTY}
  keySecret: \${PS_EMPTY}
${pipes}${rest(5)}`;

describe('a reload the daemon could not run is refused before anything is swapped', () => {
  it('a truncated file, an empty key id and a config without pipes: each refused with its reason; the last good config keeps scaling', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const path = join(dir, 'pipescaler.yaml');
    writeFileSync(path, good(cloud.url, 3));
    const emitter = new DaemonEmitter();
    let clock = T0;
    const daemon = createDaemon({
      config: path,
      env: { PS_TEST_SECRET: DEMO.keySecret, PS_EMPTY: '' },
      redis,
      prefix,
      now: () => clock,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    const reloads = collect(emitter, 'config:reload');
    const replicas = () => cloud.store.pipe(DEMO.pipes['orders-events'])!.scaling.replicas;
    const tick = async (at: number) => {
      clock = at;
      await daemon.tick(at);
      await drained([daemon]);
    };
    try {
      await daemon.start();
      await tick(T0);
      await tick(T0 + 30_000);
      expect(replicas()).toBe(3);

      writeFileSync(path, '');
      expect(await daemon.reload()).toBe(false);
      expect(reloads.at(-1)!.errors!.join('\n')).toMatch(/the config file is empty/);

      writeFileSync(path, emptyKey);
      expect(await daemon.reload()).toBe(false);
      expect(reloads.at(-1)!.errors!.join('\n')).toMatch(/api\.keyId: is empty/);

      writeFileSync(path, good(cloud.url, 4).replace(pipes, '\npipes: []\n'));
      expect(await daemon.reload()).toBe(false);
      expect(reloads.at(-1)!.errors!.join('\n')).toMatch(
        /pipes: the new config has no pipes \(the running one has 1\)/,
      );
      expect(reloads.every((r) => r.result === 'failure')).toBe(true);
      expect(JSON.stringify(reloads)).not.toContain(DEMO.keySecret);

      // still the last good config, and it still scales
      expect(daemon.config().policies.steady!.baseline.replicas).toEqual({ value: 3 });
      writeFileSync(path, good(cloud.url, 4));
      expect(await daemon.reload()).toBe(true);
      await tick(T0 + 60_000);
      expect(replicas()).toBe(4);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  });
});
