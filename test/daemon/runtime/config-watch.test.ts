// The reload watch on real folders: a Kubernetes ConfigMap or Secret update (the `..data` symlink
// swap, laid out as the kubelet does), an editor's save through a rename and a plain write each
// call back once the debounce fires, for the config, its key's secret file and its calendar; a swap
// that changes nothing and a file the config does not name do not. The debounce's timer is the
// test's: it fires once the folder's events armed it, so nothing waits on real time.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { ConfigFiles, type WatchTimers } from '../../../src/daemon/runtime/config-watch.js';
import type { Config } from '../../../src/config/index.js';
import { BASE } from '../../config/config-fixture.js';
import { holidayCalendar as ical, writeVolume } from '../kubelet-volume.js';

const root = mkdtempSync(join(tmpdir(), 'pipescaler-watch-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** BASE with the default key's secret from a file and the window's holidays from a calendar. */
const yaml = (secretFile: string, replicas = 2) =>
  BASE.replace('  baseUrl: embedded\n', `  baseUrl: embedded\n  keyId: watch-test\n  keySecretFile: ${secretFile}\n`)
    .replace('baseline: { replicas: 2 }', `baseline: { replicas: ${String(replicas)} }`)
    .replace(
      '        set: { replicas: 6 }\n',
      '        set: { replicas: 6 }\n        exclude: [{ calendar: holidays.ics }]\n',
    );

/** The debounce's timer, fired by the test. */
function manualTimers() {
  let pending: (() => void) | undefined;
  let waiter: (() => void) | undefined;
  const timers: WatchTimers = {
    set(fn) {
      pending = fn;
      waiter?.();
      waiter = undefined;
      return fn;
    },
    clear(handle) {
      if (pending === handle) pending = undefined;
    },
  };
  return {
    timers,
    /** Resolves when the next event arms the debounce (take it before making the change). */
    next: () => new Promise<void>((resolve) => (waiter = resolve)),
    fire() {
      const fn = pending;
      pending = undefined;
      fn?.();
    },
  };
}

let stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops) stop();
  stops = [];
});

/** A watch whose callback reloads, as the daemon's does; counts what it reloaded. */
function watched(configPath: string) {
  const files = new ConfigFiles();
  const t = manualTimers();
  const state = { reloads: 0, config: null as Config | null, error: null as string | null };
  const load = () => {
    try {
      state.config = files.load((readFile) => loadConfig(configPath, {}, 'all', readFile));
      state.error = null;
    } catch (err) {
      state.error = (err as Error).message;
    }
  };
  load();
  stops.push(
    files.watch(
      () => {
        state.reloads++;
        load();
      },
      { timers: t.timers },
    ),
  );
  /** Makes a change, waits for its events to arm the debounce, fires it. */
  const change = async (make: () => void) => {
    const armed = t.next();
    make();
    await armed;
    t.fire();
  };
  return { state, change };
}

const secretOf = (c: Config | null) => c?.api.keys.default?.keySecret;
const excluded = (c: Config | null) => {
  const window = c?.policies.weekday?.windows[0];
  return window && 'exclude' in window ? window.exclude : undefined;
};

describe('config watch', () => {
  it('follows Kubernetes ConfigMap and Secret updates (the ..data swap): config, calendar and secret file', async () => {
    const configMap = join(root, 'k8s', 'config');
    const secret = join(root, 'k8s', 'secret');
    mkdirSync(configMap, { recursive: true });
    mkdirSync(secret, { recursive: true });
    const secretFile = join(secret, 'key-secret');
    writeVolume(secret, { 'key-secret': 'first-secret\n' });
    writeVolume(configMap, { 'pipescaler.yaml': yaml(secretFile), 'holidays.ics': ical('2027-01-01') });
    const { state, change } = watched(join(configMap, 'pipescaler.yaml'));
    expect(state.error).toBeNull();
    expect(secretOf(state.config)).toBe('first-secret');
    expect(excluded(state.config)).toEqual(['2027-01-01']);

    await change(() =>
      writeVolume(configMap, { 'pipescaler.yaml': yaml(secretFile, 3), 'holidays.ics': ical('2027-01-01') }),
    );
    expect(state.reloads).toBe(1);
    expect(state.config?.policies.weekday?.baseline.replicas).toEqual({ value: 3 });

    // The calendar alone, in a second swap: the watch followed the first one.
    await change(() =>
      writeVolume(configMap, { 'pipescaler.yaml': yaml(secretFile, 3), 'holidays.ics': ical('2027-12-24') }),
    );
    expect(state.reloads).toBe(2);
    expect(excluded(state.config)).toEqual(['2027-12-24']);

    await change(() => writeVolume(secret, { 'key-secret': 'rotated-secret\n' }));
    expect(state.reloads).toBe(3);
    expect(secretOf(state.config)).toBe('rotated-secret');

    // The kubelet swaps only on a change, but a resync that rewrites the same content is no reload.
    await change(() => writeVolume(secret, { 'key-secret': 'rotated-secret\n' }));
    expect(state.reloads).toBe(3);
  });

  it("follows an editor's save through a rename, and a plain write, of the config and its secret file", async () => {
    const dir = join(root, 'editor');
    mkdirSync(dir);
    const path = join(dir, 'pipescaler.yaml');
    const secretFile = join(dir, 'key-secret');
    writeFileSync(secretFile, 'first-secret\n');
    writeFileSync(join(dir, 'holidays.ics'), ical('2027-01-01'));
    writeFileSync(path, yaml('key-secret'));
    const { state, change } = watched(path);
    expect(state.error).toBeNull();

    await change(() => {
      writeFileSync(join(dir, '.pipescaler.yaml.swp'), yaml('key-secret', 4));
      renameSync(join(dir, '.pipescaler.yaml.swp'), path);
    });
    expect(state.reloads).toBe(1);
    expect(state.config?.policies.weekday?.baseline.replicas).toEqual({ value: 4 });

    // The watch survived the rename: the new file, written in place.
    await change(() => writeFileSync(path, yaml('key-secret', 5)));
    expect(state.reloads).toBe(2);
    expect(state.config?.policies.weekday?.baseline.replicas).toEqual({ value: 5 });

    await change(() => {
      writeFileSync(`${secretFile}.tmp`, 'rotated-secret\n');
      renameSync(`${secretFile}.tmp`, secretFile);
    });
    expect(state.reloads).toBe(3);
    expect(secretOf(state.config)).toBe('rotated-secret');

    // A file the config does not name changes nothing.
    await change(() => writeFileSync(join(dir, 'notes.txt'), 'unrelated'));
    expect(state.reloads).toBe(3);
  });

  it('reloads when a secret file the config names but that was missing appears', async () => {
    const dir = join(root, 'missing');
    mkdirSync(dir);
    writeFileSync(join(dir, 'holidays.ics'), ical('2027-01-01'));
    writeFileSync(join(dir, 'pipescaler.yaml'), yaml('key-secret'));
    const { state, change } = watched(join(dir, 'pipescaler.yaml'));
    expect(state.error).toMatch(/keySecretFile: cannot read .*key-secret.* \(ENOENT\)/);

    await change(() => writeFileSync(join(dir, 'key-secret'), 'late-secret\n'));
    expect(state.reloads).toBe(1);
    expect(state.error).toBeNull();
    expect(secretOf(state.config)).toBe('late-secret');
  });
});
