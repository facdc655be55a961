// A reload's load in a worker thread (src/daemon/runtime/config-thread.ts), with the built worker
// (dist/: `npm test` builds first): the same Config as a load in this thread, the same error, the
// files it read noted for the watch, and this thread free while the worker parses.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadEffectiveConfig, type Config } from '../../../src/config/index.js';
import { loadOffThread, workerEntry } from '../../../src/daemon/runtime/config-thread.js';
import { ConfigFiles } from '../../../src/daemon/runtime/config-watch.js';

const BUILT = new URL('../../../dist/daemon/runtime/config-load-worker.js', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-config-thread-'));
const env = { PIPESCALER_KEY_ID: 'key-id-1', PIPESCALER_KEY_SECRET: 'key-secret-1' };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const inThread = (file: string): Config => loadEffectiveConfig(file, env);

/** A config of `n` pipes on one policy, with its key secret in a file of its own. */
function fleet(n: number): string {
  const secret = join(dir, 'key-secret');
  writeFileSync(secret, 'key-secret-from-file\n');
  const hex = (i: number, w: number) => i.toString(16).padStart(w, '0');
  const file = join(dir, `fleet-${n}.yaml`);
  writeFileSync(
    file,
    stringify({
      api: { baseUrl: 'https://api.example.com', keyId: '${PIPESCALER_KEY_ID}', keySecretFile: secret },
      redis: { url: 'redis://127.0.0.1:6379', prefix: 'config-thread' },
      pipes: Array.from({ length: n }, (_, i) => ({
        name: `p-${hex(i, 5)}`,
        organizationId: '00000000-0000-4000-8000-000000000001',
        serviceId: '00000000-0000-4000-8000-000000000002',
        pipeId: `00000000-0000-4000-9000-${hex(i, 12)}`,
        policy: 'steady',
      })),
      policies: { steady: { baseline: { replicas: 2 } } },
    }),
  );
  return file;
}

describe("a reload's load in a worker thread", () => {
  it('needs the built worker: none from the sources', () => {
    expect(existsSync(BUILT), 'build first: npm run build').toBe(true);
    expect(workerEntry(BUILT)).toEqual(BUILT);
    // this module's own sibling is TypeScript under the test runner: loads stay in this thread
    expect(workerEntry()).toBeNull();
  });

  it('gives the Config a load in this thread gives, down to its prototypes, for the worked example and a fleet', async () => {
    for (const file of [resolve('config/pipescaler.yaml'), fleet(2_000)]) {
      const answer = await loadOffThread(file, env, BUILT);
      expect(answer && 'config' in answer).toBe(true);
      expect(isDeepStrictEqual((answer as { config: Config }).config, inThread(file))).toBe(true);
    }
  });

  it("names every file it read (the config and its key's secret file), as the watch notes them", async () => {
    const file = fleet(3);
    const answer = (await loadOffThread(file, env, BUILT))!;
    expect(answer.reads.map((r) => r.path)).toEqual([file, join(dir, 'key-secret')]);
    const aside = new ConfigFiles();
    const config = await aside.loadOffThread(
      file,
      env,
      () => {
        throw new Error('loaded in this thread');
      },
      BUILT,
    );
    expect(config.api.keys.default?.keySecret).toBe('key-secret-from-file');
    const here = new ConfigFiles();
    here.load((readFile) => loadEffectiveConfig(file, env, 'all', readFile));
    expect(aside.contents()).toEqual(here.contents());
  });

  it('refuses a broken file with the error a load in this thread gives, line and field, and still notes what it read', async () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(
      file,
      'api:\n  baseUrl: embedded\nredis:\n  url: redis://127.0.0.1:6379\npipes:\n  - name: a\n    policy: nowhere\n',
    );
    let expected = '';
    try {
      inThread(file);
    } catch (err) {
      expected = (err as Error).message;
    }
    expect(expected).toMatch(/broken\.yaml:7:\d+ .*policy/);
    const answer = (await loadOffThread(file, env, BUILT))!;
    expect(answer).toMatchObject({ error: expected });
    expect(answer.reads.map((r) => r.path)).toEqual([file]);
    await expect(new ConfigFiles().loadOffThread(file, env, () => inThread(file), BUILT)).rejects.toThrow(expected);
    // the secret of the environment is in no message
    expect(expected).not.toContain('key-secret-1');
  });

  it('leaves this thread free while it parses: callbacks run before its answer', async () => {
    const file = fleet(2_000);
    let turns = 0;
    let going = true;
    const spin = (): void => {
      turns++;
      if (going) setImmediate(spin);
    };
    setImmediate(spin);
    const answer = await loadOffThread(file, env, BUILT);
    going = false;
    expect(answer && 'config' in answer).toBe(true);
    // a load in this thread is one synchronous call: no callback runs until it returns
    expect(turns).toBeGreaterThan(1);
  });

  it('answers null when no worker can (the caller then loads in this thread)', async () => {
    expect(await loadOffThread(fleet(3), env, null)).toBeNull();
    expect(await loadOffThread(fleet(3), env, new URL('file:///nonexistent/worker.js'))).toBeNull();
    const config = await new ConfigFiles().loadOffThread(fleet(3), env, (readFile) =>
      loadEffectiveConfig(fleet(3), env, 'all', readFile),
    );
    expect(config.pipes).toHaveLength(3);
  });
});
