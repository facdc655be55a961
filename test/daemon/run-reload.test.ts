// `pipescaler run` (the built bin) and its reloads: an edit that changes what takes a restart
// (here redis.prefix and telemetry.listen, both from the file) is refused with its reason; one that
// changes a policy and the log level goes through, says what it changed, and the level follows.
// No `redis connection lost` at start. Mounted as Kubernetes mounts a ConfigMap and a Secret, a
// Secret update (the `..data` swap) of the key's secret file is reloaded without the secret in the
// log, and a real SIGHUP reloads. Needs `npm run build` first (dist/).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO, REDIS_URL, cleanupPrefix, uniquePrefix } from './helpers.js';
import { writeVolume } from './kubelet-volume.js';

const prefix = uniquePrefix('runreload');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-runreload-'));

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

const config = (o: { prefix: string; listen: string; replicas: number; level: string }) => `
api:
  baseUrl: embedded
  fixtures: ${resolve('config/cloud.yaml')}
redis:
  url: ${REDIS_URL}
  prefix: ${o.prefix}
telemetry:
  listen: ${o.listen}
  logLevel: ${o.level}
evaluate:
  cron: "*/2 * * * * *"
pipes:
  - name: orders-events
    organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b
    serviceId: a1000000-0000-4000-8000-000000000001
    pipeId: b1000000-0000-4000-8000-000000000001
    policy: steady
policies:
  steady:
    baseline: { replicas: ${o.replicas}, replicaCpuMillicores: 500, replicaMemoryGb: 2 }
`;

const msg = (l: Record<string, unknown>) => String(l.msg);

/** `pipescaler run <path>` from dist/: its JSON log lines, and a wait for the next one that matches. */
function runBin(path: string) {
  const unset = ['PIPESCALER_REDIS_URL', 'PIPESCALER_REDIS_PREFIX', 'PIPESCALER_TELEMETRY_LISTEN'];
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !unset.includes(k)));
  const child = spawn(process.execPath, ['dist/cli/main.js', 'run', path], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const lines: Record<string, unknown>[] = [];
  const waiters: { pred: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] =
    [];
  let buffer = '';
  child.stdout.on('data', (b: Buffer) => {
    buffer += b.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    for (const p of parts) {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(p) as Record<string, unknown>;
      } catch {
        continue;
      }
      lines.push(entry);
      for (const w of waiters.splice(0)) {
        if (w.pred(entry)) w.resolve(entry);
        else waiters.push(w);
      }
    }
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const next = (what: string, pred: (l: Record<string, unknown>) => boolean, ms = 30_000) =>
    new Promise<Record<string, unknown>>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`no ${what} within ${ms} ms; stderr: ${stderr}`)), ms);
      waiters.push({
        pred,
        resolve: (l) => {
          clearTimeout(timer);
          ok(l);
        },
      });
    });
  return { child, lines, next, exited, stderr: () => stderr };
}

describe('pipescaler run, reloading its file', () => {
  it('refuses what takes a restart, says what a reload changed, and takes the new log level', async () => {
    expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
    const path = join(dir, 'pipescaler.yaml');
    const good = { prefix, listen: '127.0.0.1:0', replicas: 3, level: 'info' };
    writeFileSync(path, config(good));
    const { child, lines, next, exited, stderr } = runBin(path);
    try {
      await next('start', (l) => msg(l) === 'daemon started');
      await next('the first change', (l) => l.result === 'applied');

      // the prefix and the telemetry address take a restart: refused, naming both
      const refused = next('a refused reload', (l) => msg(l).startsWith('config reload failed'));
      writeFileSync(path, config({ ...good, prefix: `${prefix}-moved`, listen: '127.0.0.1:9999', replicas: 5 }));
      const errors = (await refused).errors as string[];
      expect(errors).toHaveLength(2);
      expect(errors[0]).toMatch(/^redis\.prefix: changed from ".*" to ".*-moved"; this takes a restart/);
      expect(errors[1]).toMatch(
        /^telemetry\.listen: changed from "127\.0\.0\.1:0" to "127\.0\.0\.1:9999"; this takes a restart/,
      );

      // a policy and the log level: reloaded, said, and the debug lines start
      const reloaded = next('a reload', (l) => msg(l).startsWith('config reloaded'));
      writeFileSync(path, config({ ...good, replicas: 4, level: 'debug' }));
      expect(msg(await reloaded)).toBe(
        'config reloaded: policies changed: steady; settings changed: telemetry.logLevel',
      );
      await next('a debug line', (l) => l.level === 20);
      expect(lines.map(msg)).not.toContain('redis connection lost; evaluations wait for it');
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
    const [code] = await exited;
    expect(code).toBe(0);
    expect(stderr()).toBe('');
  }, 120_000);

  it('follows a Kubernetes Secret update of its key secret file, and reloads on a real SIGHUP', async () => {
    expect(existsSync('dist/cli/main.js'), 'build first: npm run build').toBe(true);
    const configMap = join(dir, 'k8s-config');
    const secret = join(dir, 'k8s-secret');
    mkdirSync(configMap);
    mkdirSync(secret);
    writeVolume(secret, { 'key-secret': `${DEMO.keySecret}\n` });
    const text = config({ prefix, listen: '127.0.0.1:0', replicas: 3, level: 'info' }).replace(
      '  baseUrl: embedded\n',
      `  baseUrl: embedded\n  keyId: ${DEMO.keyId}\n  keySecretFile: ${join(secret, 'key-secret')}\n`,
    );
    writeVolume(configMap, { 'pipescaler.yaml': text });
    const { child, lines, next, exited, stderr } = runBin(join(configMap, 'pipescaler.yaml'));
    try {
      await next('start', (l) => msg(l) === 'daemon started');

      const reloaded = next('a reload', (l) => msg(l).startsWith('config reloaded'));
      writeVolume(secret, { 'key-secret': 'rotated-key-secret\n' });
      expect(msg(await reloaded)).toBe('config reloaded: keys changed: default');

      const signalled = next('a reload on SIGHUP', (l) => msg(l) === 'config reloaded: nothing changed');
      child.kill('SIGHUP');
      await signalled;
      expect(lines.find((l) => msg(l) === 'reloading config')?.signal).toBe('SIGHUP');
      expect(JSON.stringify(lines)).not.toContain('rotated-key-secret');
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
    const [code] = await exited;
    expect(code).toBe(0);
    expect(stderr()).toBe('');
  }, 120_000);
});
