// `pipescaler diff` through the built bin, on the shipped config and an edited copy of it, as a
// pull request's CI would run it: exit 0 when both decide the same, 2 when they differ, 1 on error.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exampleText } from './example.js';

const BIN = 'dist/cli/main.js';
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-diff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TZ: 'Europe/Berlin' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A copy of the shipped config (and its fixtures) with `edit` applied to its text. */
function edited(name: string, edit: (text: string) => string): string {
  copyFileSync('config/cloud.yaml', join(dir, 'cloud.yaml'));
  const file = join(dir, name);
  writeFileSync(file, edit(exampleText()));
  return file;
}

const PERIOD = ['--from', '2026-11-23T00:00:00Z', '--to', '2026-11-24T00:00:00Z'];

describe('pipescaler diff', () => {
  it('exits 0 and says so when both configs decide the same', () => {
    const r = run(['diff', 'config/pipescaler.yaml', 'config/pipescaler.yaml', ...PERIOD]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/: the two decide the same$/);
    expect(r.stdout).toMatch(/^replica-core-hours +[\d.]+ +[\d.]+ +0\.0$/m);
  });

  it('exits 2 and shows the changes that moved and the capacity delta when a window starts earlier', () => {
    const head = edited('earlier.yaml', (t) =>
      t.replace('start: "08:00"            # quote', 'start: "07:00"            # quote'),
    );
    const r = run(['diff', 'config/pipescaler.yaml', head, ...PERIOD]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(2);
    expect(r.stdout.split('\n')[0]).toMatch(/2 pipes differ$/);
    expect(r.stdout).toMatch(/^orders-events: \d+ changes differ$/m);
    // each scale-up a minute ahead of its window (lead time auto), in both configs
    expect(r.stdout).toMatch(/~ moved: Mon 2026-11-23 07:59 \+01:00 .*replicas 2->4/);
    expect(r.stdout).toMatch(/-> Mon 2026-11-23 06:59 \+01:00/);
    // one more hour at business hours instead of 2 x 0.5 cores: orders-events 6 x 1 (+5), payments-msk
    // capped at 4 x 1 (+3)
    expect(r.stdout).toMatch(/^replica-core-hours +[\d.]+ +[\d.]+ +\+8\.0$/m);

    const json = run(['diff', 'config/pipescaler.yaml', head, ...PERIOD, '--json']);
    expect(json.code).toBe(2);
    const parsed = JSON.parse(json.stdout) as {
      differs: boolean;
      total: { delta: { replicaCoreHours: number } };
      pipes: { pipe: string; status: string }[];
    };
    expect(parsed.differs).toBe(true);
    expect(parsed.total.delta.replicaCoreHours).toBeCloseTo(8);
    expect(parsed.pipes.filter((p) => p.status === 'changed').map((p) => p.pipe)).toEqual([
      'orders-events',
      'payments-msk',
    ]);
  });

  it('reports a renamed and a removed pipe', () => {
    const head = edited('renamed.yaml', (t) =>
      t
        .replace('- name: orders-events', '- name: orders-stream')
        .replace(/ {2}# S3 object-storage pipe[^\n]*\n {2}- name: nightly-s3\n( {4}[^\n]*\n)+/, ''),
    );
    const r = run(['diff', 'config/pipescaler.yaml', head, ...PERIOD]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^orders-stream: renamed from orders-events$/m);
    expect(r.stdout).toMatch(/^nightly-s3: removed \(had \d+ changes?\)$/m);
  });

  it('exits 1 with one line and no stack on a bad argument or config', () => {
    const bad = run([
      'diff',
      'config/pipescaler.yaml',
      'config/pipescaler.yaml',
      '--from',
      'yesterday',
      '--to',
      '2026-11-24T00:00:00Z',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: --from: "yesterday" is not an ISO 8601 time/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const missing = run(['diff', 'config/pipescaler.yaml', join(dir, 'nope.yaml'), ...PERIOD]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
  });

  it("prints docs/cli.md's example as it stands, in the machine's time zone (TZ=UTC there)", () => {
    const page = readFileSync('docs/cli.md', 'utf8');
    const block =
      /```\n(\$ pipescaler diff config\/pipescaler\.yaml head\.yaml [^\n]*)\n([\s\S]*?)\n {2}\.\.\.\n```/.exec(page);
    expect(block, 'the diff example of docs/cli.md').not.toBeNull();
    const [, command, shown] = block!;
    const head = edited('head.yaml', (t) =>
      t.replace('start: "08:00"            # quote', 'start: "07:00"            # quote'),
    );
    const args = command!.replace('$ pipescaler ', '').replace('head.yaml', head).split(' ');
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, TZ: 'UTC' },
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stdout.replaceAll(head, 'head.yaml')).toContain(`${shown!}\n`);
  });
});
