// plan and simulate without reading the platform: --offline, pipes the fixtures do not have, a
// declared kind, and --pipe filters; through the built bin.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exampleText } from './example.js';

const BIN = 'dist/cli/main.js';
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-offline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DAY = ['--from', '2026-11-23T00:00:00Z', '--to', '2026-11-24T00:00:00Z'];

function run(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TZ: 'Europe/Berlin' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('simulate --offline', () => {
  it('reads nothing and starts every pipe of a known kind from its baseline, saying so', () => {
    const r = run(['simulate', ...DAY, '--offline', '--pipe', 'orders-events', '--pipe', 'nightly-s3']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^orders-events: 4 changes; not read: assumed a stream pipe \(from its policy's fields\) running at the baseline \(--offline\)$/m,
    );
    expect(r.stdout).toMatch(/^nightly-s3: 2 changes; not read: assumed an object-storage pipe/m);
    expect(r.stdout).not.toMatch(/^clickstream:/m);
    const json = JSON.parse(run(['simulate', ...DAY, '--offline', '--pipe', 'nightly-s3', '--json']).stdout) as {
      pipe: string;
      assumed?: boolean;
    }[];
    expect(json.length).toBe(2);
    expect(json.every((c) => c.pipe === 'nightly-s3' && c.assumed === true)).toBe(true);
  });
});

describe('a pipe the fixtures do not have', () => {
  it('is simulated from its declared kind, and plan names it assumed', () => {
    copyFileSync('config/cloud.yaml', join(dir, 'cloud.yaml'));
    const file = join(dir, 'pipescaler.yaml');
    writeFileSync(
      file,
      exampleText().replace(
        /\npipes:\n/,
        `
pipes:
  - name: new-s3
    organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b
    serviceId: a1000000-0000-4000-8000-000000000001
    pipeId: b1000000-0000-4000-8000-0000000000aa
    policy: nightly-s3
    kind: objectStorage
`,
      ),
    );
    const sim = run(['simulate', file, ...DAY, '--pipe', 'new-s3']);
    expect(sim.code).toBe(0);
    expect(sim.stdout).toMatch(
      /^new-s3: 2 changes; not read: assumed an object-storage pipe \(pipes\[\]\.kind\) running at the baseline \(pipe not found in .*cloud\.yaml \(the API would answer 404\)\)$/m,
    );
    const plan = run(['plan', file, '--pipe', 'new-s3', '--at', '2026-11-23T03:00:00+01:00']);
    expect(plan.stdout).toMatch(/note +not read: assumed an object-storage pipe/);
    expect(plan.stdout).toMatch(/send +concurrency 16 \(up\)/);
  });

  it('a kind that is not a scalable one is refused with its line', () => {
    const file = join(dir, 'bad-kind.yaml');
    writeFileSync(
      file,
      exampleText().replace('    policy: nightly-s3\n', '    policy: nightly-s3\n    kind: database\n'),
    );
    const r = run(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /:\d+:\d+ pipes\[3\]\.kind: must be one of stream, objectStorage \(a database pipe takes no scaling\)/,
    );
  });
});

describe('--pipe', () => {
  it('refuses a name the config does not have, with a suggestion', () => {
    const r = run(['plan', '--pipe', 'order-events']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: --pipe: no pipe named "order-events" in the config; did you mean "orders-events"?\n');
  });
});

describe('simulate over a long period', () => {
  it("runs a year at the daemon's 30 s tick, and refuses a step too fine for its period", () => {
    const year = run([
      'simulate',
      '--from',
      '2026-01-01T00:00:00Z',
      '--to',
      '2027-01-01T00:00:00Z',
      '--step',
      '30s',
      '--pipe',
      'orders-events',
    ]);
    expect(year.code).toBe(0);
    expect(year.stdout.split('\n')[0]).toMatch(
      /^simulate 2026-01-01T00:00:00\.000Z \.\. 2027-01-01T00:00:00\.000Z, every 30s: [\d,]+ changes/,
    );
    const fine = run(['simulate', '--from', '2026-11-01T00:00:00Z', '--to', '2026-12-01T00:00:00Z', '--step', '1s']);
    expect(fine.code).toBe(1);
    expect(fine.stderr).toBe('error: the period is too long for this step: shorten it or use a larger --step\n');
  });
});
