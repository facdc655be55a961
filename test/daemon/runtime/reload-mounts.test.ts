// The daemon's reloads where it runs: its config and holiday calendar from a ConfigMap volume and
// its key's secret from a Secret volume, laid out and updated as the kubelet does (`..data` swap):
// each update is a `config:reload` saying what changed, and the next requests use the new secret.
// SIGHUP (emitted in-process, so the test worker itself is never signalled) re-reads the secret file
// and the calendar too, with the file watch off so only the signal can have done it.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { startCloud } from '../../../src/cloud/index.js';
import { createDaemon, DaemonEmitter, handleSignals, silentLogger } from '../../../src/daemon/index.js';
import { DEMO, FAST_WORKERS, REDIS_URL, cleanupPrefix, uniquePrefix, waitForEvent } from '../helpers.js';
import { holidayCalendar as ical, writeVolume } from '../kubelet-volume.js';

const prefix = uniquePrefix('reload-mounts');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const root = mkdtempSync(join(tmpdir(), 'pipescaler-mounts-'));

afterAll(async () => {
  rmSync(root, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

const yaml = (baseUrl: string, secretFile: string) => `
api:
  baseUrl: ${baseUrl}
  keyId: ${DEMO.keyId}
  keySecretFile: ${secretFile}
  rateLimit: { requests: 1000, per: 1s }
redis:
  url: ${REDIS_URL}
  prefix: ${prefix}
evaluate:
  reconcile: 24h
pipes:
  - name: orders-events
    organizationId: ${DEMO.org}
    serviceId: ${DEMO.analytics}
    pipeId: ${DEMO.pipes['orders-events']}
    policy: steady
policies:
  steady:
    baseline: { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }
    windows:
      - name: office
        days: [mon, tue, wed, thu, fri]
        start: "08:00"
        end: "18:00"
        timezone: Europe/Berlin
        set: { replicas: 4 }
        exclude: [{ calendar: holidays.ics }]
`;

function daemonFor(path: string, emitter: DaemonEmitter, watch: boolean) {
  return createDaemon({
    config: path,
    redis,
    prefix,
    emitter,
    schedule: false,
    watch,
    workerOptions: FAST_WORKERS,
  });
}

const holidays = (config: ReturnType<ReturnType<typeof createDaemon>['config']>) => {
  const window = config.policies.steady?.windows[0];
  return window && 'exclude' in window ? window.exclude : undefined;
};

describe('reloads of mounted files', () => {
  it('follows a Kubernetes Secret update of the key secret and a ConfigMap update of the calendar', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const configMap = join(root, 'config');
    const secret = join(root, 'secret');
    mkdirSync(configMap);
    mkdirSync(secret);
    const secretFile = join(secret, 'key-secret');
    writeVolume(secret, { 'key-secret': `${DEMO.keySecret}\n` });
    const configYaml = yaml(cloud.url, secretFile);
    writeVolume(configMap, { 'pipescaler.yaml': configYaml, 'holidays.ics': ical('2027-01-01') });
    const emitter = new DaemonEmitter();
    const daemon = daemonFor(join(configMap, 'pipescaler.yaml'), emitter, true);
    await daemon.start();
    try {
      expect(daemon.config().api.keys.default?.keySecret).toBe(DEMO.keySecret);

      let reload = waitForEvent(emitter, 'config:reload');
      writeVolume(secret, { 'key-secret': 'rotated-secret\n' });
      let result = await reload;
      expect(result.result).toBe('success');
      expect(result.changes?.keysChanged).toEqual(['default']);
      expect(daemon.config().api.keys.default?.keySecret).toBe('rotated-secret');

      reload = waitForEvent(emitter, 'config:reload');
      writeVolume(configMap, { 'pipescaler.yaml': configYaml, 'holidays.ics': ical('2027-12-24') });
      result = await reload;
      expect(result.result).toBe('success');
      expect(result.changes?.policiesChanged).toEqual(['steady']);
      expect(holidays(daemon.config())).toEqual(['2027-12-24']);
    } finally {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    }
  });

  it('re-reads the secret file and the calendar on SIGHUP', async () => {
    const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
    const dir = join(root, 'plain');
    mkdirSync(dir);
    const path = join(dir, 'pipescaler.yaml');
    writeFileSync(join(dir, 'key-secret'), `${DEMO.keySecret}\n`);
    writeFileSync(join(dir, 'holidays.ics'), ical('2027-01-01'));
    writeFileSync(path, yaml(cloud.url, 'key-secret'));
    const emitter = new DaemonEmitter();
    const daemon = daemonFor(path, emitter, false);
    await daemon.start();
    let exitCode: number | null = null;
    const exited = new Promise<void>((resolve) => {
      handleSignals(daemon, {
        timeoutMs: 2_000,
        logger: silentLogger,
        exit: (code) => {
          exitCode = code;
          resolve();
        },
      });
    });
    try {
      // as an editor saves: the new content under a temporary name, renamed over the old
      writeFileSync(join(dir, 'key-secret.new'), 'rotated-secret\n');
      renameSync(join(dir, 'key-secret.new'), join(dir, 'key-secret'));
      writeFileSync(join(dir, 'holidays.ics'), ical('2027-12-24'));
      const reload = waitForEvent(emitter, 'config:reload');
      process.emit('SIGHUP');
      const result = await reload;
      expect(result.result).toBe('success');
      expect(result.changes?.keysChanged).toEqual(['default']);
      expect(result.changes?.policiesChanged).toEqual(['steady']);
      expect(daemon.config().api.keys.default?.keySecret).toBe('rotated-secret');
      expect(holidays(daemon.config())).toEqual(['2027-12-24']);
    } finally {
      process.emit('SIGTERM');
      await exited;
      await cloud.close();
    }
    expect(exitCode).toBe(0);
  });
});
