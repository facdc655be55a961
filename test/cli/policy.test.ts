// validate, plan and simulate through the built bin (`npm run build` first), as an operator runs them.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleText } from './example.js';
import { startCloud, type EmbeddedCloud } from '../../src/cloud/index.js';

const BIN = 'dist/cli/main.js';

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TZ: 'Europe/Berlin', ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function noStack(text: string): void {
  expect(text).not.toMatch(/\n\s+at /);
}

describe('pipescaler validate', () => {
  it('says ok and lists each pipe with its policy, key and windows', () => {
    const r = run(['validate']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('ok: config/pipescaler.yaml: 10 pipes, 4 policies, api embedded');
    // the pipes, each key's budget, then the metric queries (no Prometheus answers here: not checked)
    expect(lines).toHaveLength(14);
    expect(lines[11]).toMatch(/^key default: 10 pipes, reconcile every 10 min /);
    expect(lines[12]).toBe('metric queries:');
    expect(lines[1]).toMatch(/^ {2}orders-events +policy weekday-business-hours, key default, 1 window$/);
    expect(lines[3]).toMatch(/^ {2}clickstream +policy clickstream-launch, key default, 2 windows$/);
  });

  it('counts one pipe and one policy in the singular', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-'));
    const file = join(dir, 'one.yaml');
    writeFileSync(
      file,
      [
        'pipes:',
        '  - { name: orders, organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b, serviceId: a1000000-0000-4000-8000-000000000001,',
        '      pipeId: b1000000-0000-4000-8000-000000000001, policy: steady }',
        'policies:',
        '  steady: { baseline: { replicas: 2 } }',
        '',
      ].join('\n'),
    );
    const r = run(['validate', file]);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(`ok: ${file}: 1 pipe, 1 policy, api embedded`);
    expect(r.stdout).toMatch(/orders +policy steady, key default, 0 windows/);
  });

  it('prints every problem with its line and exits 1, without a stack or the secret', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-'));
    const file = join(dir, 'broken.yaml');
    writeFileSync(
      file,
      [
        'api:',
        '  baseUrl: https://api.example.com',
        '  keyId: k',
        '  keySecret: literal-secret-value',
        'pipes:',
        '  - name: orders',
        '    organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b',
        '    serviceId: a1000000-0000-4000-8000-000000000001',
        '    pipeId: b1000000-0000-4000-8000-000000000001',
        '    policy: nightly',
        'policies:',
        '  weekday:',
        '    windows:',
        '      - { days: [mon], start: "08:00", end: "20:00", timezone: Europe/Berln, set: { replicas: 6 } }',
        '',
      ].join('\n'),
    );
    const r = run(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    noStack(r.stderr);
    expect(r.stderr).not.toContain('literal-secret-value');
    expect(r.stderr.trim().split('\n')).toEqual([
      `error: ${file} is not valid (3 problems):`,
      `${file}:4:14 api.keySecret: a secret must not be written in the config file: use keySecret: \${ENV_VAR} or keySecretFile: /path/to/file`,
      `${file}:10:13 pipes[0].policy: unknown policy "nightly"; known: weekday`,
      `${file}:14:64 policies.weekday.windows[0].timezone: unknown time zone "Europe/Berln"; did you mean "Europe/Berlin"?`,
    ]);
  });

  it("with a key pool: each pipe's key from the pool, and per key its pipes, reconcile period and lead", () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-'));
    const file = join(dir, 'pool.yaml');
    const pipes = Array.from(
      { length: 1_200 },
      (_, i) =>
        `  - { name: p-${i}, organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b, ` +
        `serviceId: a1000000-0000-4000-8000-000000000001, pipeId: b1000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}, policy: two, key: batch }`,
    );
    writeFileSync(
      file,
      [
        'api:',
        '  keys:',
        '    batch-1:',
        '      keyId: ${B1_ID}',
        '      keySecret: ${B1_SECRET}',
        '      pool: batch',
        '    batch-2:',
        '      keyId: ${B2_ID}',
        '      keySecret: ${B2_SECRET}',
        '      pool: batch',
        'pipes:',
        ...pipes,
        'policies:',
        '  two: { baseline: { replicas: 2 } }',
        '',
      ].join('\n'),
    );
    const r = run(['validate', file], { B1_ID: 'b1', B1_SECRET: 'secret-one', B2_ID: 'b2', B2_SECRET: 'secret-two' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^ {2}p-0 +policy two, key batch-[12] \(pool batch\), 0 windows$/);
    const perKey = lines.filter((l) => l.startsWith('key '));
    expect(perKey[0]).toBe('key default: no pipes (10 per 10 s)');
    // 1,200 pipes on one key: every 80 min; spread over two keys, about 40 min each
    const counts = perKey
      .slice(1)
      .map((l) =>
        Number(
          /^key batch-[12] \(pool batch, 2 keys\): ([\d,]+) pipes, reconcile every ([\d.]+) min within its budget/
            .exec(l)?.[1]
            ?.replace(',', ''),
        ),
      );
    expect(counts[0]! + counts[1]!).toBe(1_200);
    expect(Math.abs(counts[0]! - 600)).toBeLessThan(70);
    expect(perKey[1]).toMatch(
      /a waiting scale-down is sent within [\d.]+ min, a boundary moving every pipe starts its scale-ups [\d.]+ min ahead \(leadTime auto\)$/,
    );
    expect(r.stdout).not.toMatch(/secret-(one|two)/);
  });

  it('a missing file is one line and exit 1', () => {
    const r = run(['validate', 'config/missing.yaml']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'error: config/missing.yaml is not valid (1 problem):\nconfig/missing.yaml:1:1 cannot read the config file (ENOENT)',
    );
  });
});

describe('pipescaler plan', () => {
  const r = run(['plan', '--at', '2026-11-23T09:00:00+01:00']);
  const section = (pipe: string): string => r.stdout.split('\n\n').find((s) => s.startsWith(`${pipe}  `)) ?? '';

  it('shows per pipe the windows, the target, what would be sent and why', () => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('plan at Mon 2026-11-23 09:00 +01:00 (2026-11-23T08:00Z)');
    const orders = section('orders-events');
    expect(orders).toContain('windows  business-hours (Europe/Berlin, mon,tue,wed,thu,fri 08:00-20:00)');
    expect(orders).toContain('target   replicas 6, cpu 1000m, memory 4GB');
    expect(orders).toContain('send     replicas 4, cpu 1000m, memory 4GB (up)');
    expect(orders).toContain('max_step: replicas scale-up 2 -> 6 limited to 4: scale-up maxStep 2');
    expect(section('payments-msk')).toContain('pipe_bound: replicas 6 -> 4: pipe bound max 4');
  });

  it('says why each left-alone pipe is skipped', () => {
    expect(section('audit-stream')).toMatch(
      /send +nothing: skipped\n.*endpoint_not_ready: reverse private endpoint not Ready: e1000000-0000-4000-8000-000000000002 is Provisioning/,
    );
    expect(section('backfill-gcs')).toContain('pipe_state: pipe is Completed');
    expect(section('legacy-events')).toContain('pipe_state: pipe is Stopped');
    expect(section('users-cdc')).toContain('kind: database pipes are scaled service-wide');
    // its service is idle: the pipe reads fine, and it is skipped as the daemon skips it (a change is a 424)
    expect(section('archive-events')).toContain(
      'note     service archive is idle: not scaled until it runs (a change would be answered 424)',
    );
    expect(section('archive-events')).toContain('send     nothing: skipped');
    expect(section('archive-events')).toContain(
      'why      service_not_running: service is idle: the platform refuses scaling changes (424) until it runs again',
    );
  });

  it('--json: one object per pipe with the decision and its reasons', () => {
    const j = run(['plan', '--at', '2026-11-27T12:00:00Z', '--json']);
    expect(j.code).toBe(0);
    const entries = JSON.parse(j.stdout) as {
      pipe: string;
      action: string;
      windows: string[];
      changes: object;
      reasons: { code: string }[];
    }[];
    expect(entries.map((e) => e.pipe)).toHaveLength(10);
    const click = entries.find((e) => e.pipe === 'clickstream')!;
    expect(click).toMatchObject({
      action: 'change',
      windows: ['black-friday'],
      changes: { replicas: 8, replicaCpuMillicores: 2000, replicaMemoryGb: 4 },
    });
    expect(entries.find((e) => e.pipe === 'legacy-events')!.reasons.map((r) => r.code)).toEqual(['pipe_state']);
  });

  it('refuses a bad --at with one line', () => {
    const bad = run(['plan', '--at', 'tomorrow']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('error: --at: "tomorrow" is not an ISO 8601 time (e.g. 2026-11-23T09:00:00+01:00)');
  });
});

describe('pipescaler simulate', () => {
  it('--json: one object per change with pipe, UTC time and the fields sent', () => {
    const r = run(['simulate', '--from', '2026-11-23T00:00:00Z', '--to', '2026-11-30T00:00:00Z', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const changes = JSON.parse(r.stdout) as { pipe: string; at: string; scaling: Record<string, number> }[];
    expect(changes).toHaveLength(55);
    expect(changes[0]).toMatchObject({
      pipe: 'clickstream',
      at: '2026-11-23T00:00:00.000Z',
      scaling: { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
    });
    expect(
      changes
        .filter((c) => c.pipe === 'orders-events')
        .map((c) => c.at)
        .slice(0, 4),
    ).toEqual([
      // lead time auto: the first step goes the minute before the window opens, the second as it opens
      '2026-11-23T06:59:00.000Z',
      '2026-11-23T07:00:00.000Z',
      '2026-11-23T19:10:00.000Z',
      '2026-11-23T19:15:00.000Z',
    ]);
  });

  it('text: the timeline per pipe in local and UTC time, and the number of API calls', () => {
    const r = run([
      'simulate',
      '--from',
      '2026-11-23T00:00:00+01:00',
      '--to',
      '2026-11-24T00:00:00+01:00',
      '--step',
      '30s',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'simulate 2026-11-22T23:00:00.000Z .. 2026-11-23T23:00:00.000Z, every 30s: 12 changes = 12 scaling API calls',
    );
    expect(r.stdout).toContain(
      '  Mon 2026-11-23 07:59 +01:00 (2026-11-23T06:59Z)  up    replicas 2->4, cpu 500m->1000m, memory 2GB->4GB  [baseline, ahead of business-hours at 07:00:00Z]',
    );
    expect(r.stdout).toContain(
      '  Mon 2026-11-23 08:00 +01:00 (2026-11-23T07:00Z)  up    replicas 4->6  [business-hours]',
    );
    expect(r.stdout).toContain('backfill-gcs: 0 changes (pipe_state: pipe is Completed');
    expect(r.stdout).toContain(
      'archive-events: 0 changes (service_not_running: service is idle: the platform refuses scaling changes (424) until it runs again)',
    );
  });

  it("says when the changes would exceed a key's rate limit", () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-rate-'));
    const file = join(dir, 'pipescaler.yaml');
    writeFileSync(
      file,
      exampleText().replace('rateLimit: { requests: 10, per: 10s }', 'rateLimit: { requests: 1, per: 10s }'),
    );
    const r = run(['simulate', file, '--from', '2026-11-23T07:00:00Z', '--to', '2026-11-23T07:02:00Z']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[2]).toBe(
      'key default: up to 4 calls within 10s, above its limit of 1: the daemon queues the rest (scale-ups first), so some land later than shown',
    );
  });

  it('refuses a bad step or an empty period', () => {
    const step = run(['simulate', '--from', '2026-11-23T00:00:00Z', '--to', '2026-11-24T00:00:00Z', '--step', 'often']);
    expect(step.code).toBe(1);
    expect(step.stderr.trim()).toBe('error: --step: "often" is not a duration above 0 (e.g. 30s, 1m)');
    const empty = run(['simulate', '--from', '2026-11-24T00:00:00Z', '--to', '2026-11-23T00:00:00Z']);
    expect(empty.code).toBe(1);
    expect(empty.stderr.trim()).toBe('error: --to must be after --from');
    noStack(step.stderr + empty.stderr);
  });
});

describe('plan against a platform URL reads each pipe with an empty scaling PATCH', () => {
  let cloud: EmbeddedCloud;
  let file: string;
  beforeAll(async () => {
    cloud = await startCloud({ fixtures: 'config/cloud.yaml', rateLimit: false });
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-url-'));
    file = join(dir, 'pipescaler.yaml');
    const shipped = exampleText()
      // one pipe the platform does not know
      .replace('pipeId: b1000000-0000-4000-8000-000000000009', 'pipeId: b1000000-0000-4000-8000-0000000000ff');
    writeFileSync(file, shipped);
  });
  afterAll(async () => cloud.close());

  it('shows the same decisions as the fixtures, and a pipe it cannot read as unknown (exit 2, naming it)', async () => {
    // async: the cloud answers from this process while the bin runs
    const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
      execFile(
        process.execPath,
        [BIN, 'plan', file, '--at', '2026-11-23T09:00:00+01:00'],
        {
          env: {
            ...process.env,
            TZ: 'Europe/Berlin',
            PIPESCALER_API_URL: cloud.url,
            PIPESCALER_KEY_ID: 'pipescaler-demo-key',
            PIPESCALER_KEY_SECRET: 'demo-secret-change-me',
          },
        },
        (err, out, errOut) => resolve({ stdout: out, stderr: errOut, code: err ? (err.code as number) : 0 }),
      );
    });
    // before reading, what a read costs; after, the pipes it could not read (exit 2)
    expect(stderr).toMatch(
      /^reading 10 pipes from http:\/\/127\.0\.0\.1:\d+: each read is an empty scaling PATCH \(the platform has no GET for a pipe;.*--offline reads nothing\n/,
    );
    expect(stderr).toMatch(/\nerror: could not read 1 of 10 pipes: archive-events \(API_NOT_FOUND\)\n$/);
    expect(code).toBe(2);
    const section = (pipe: string): string => stdout.split('\n\n').find((s) => s.startsWith(`${pipe}  `)) ?? '';
    expect(section('orders-events')).toContain('send     replicas 4, cpu 1000m, memory 4GB (up)');
    expect(section('payments-msk')).toContain('endpoint e1000000-0000-4000-8000-000000000001 Ready');
    expect(section('audit-stream')).toContain('endpoint_not_ready');
    expect(section('backfill-gcs')).toContain('pipe is Completed');
    // not read, so assumed from its policy's fields, with the reason it was not read
    expect(section('archive-events')).toMatch(
      /note +not read: assumed a stream pipe \(from its policy's fields\) running at the baseline \(cannot read the pipe: API_NOT_FOUND/,
    );
    expect(stdout).not.toContain('demo-secret-change-me');
    // one read per pipe, one per endpoint of a Kafka pipe, and nothing scaled
    const requests = cloud.stats().requests;
    expect(requests.scalePipe).toEqual({ 200: 9, 404: 1 });
    expect(requests.getReversePrivateEndpoint).toEqual({ 200: 2 });
  });
});

describe('plan without the platform, simulate into a closed pipe', () => {
  it('plan exits non-zero when it could not read the pipes it was asked about (API unreachable)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipescaler-cli-down-'));
    const file = join(dir, 'pipescaler.yaml');
    writeFileSync(file, exampleText());
    // a port nothing listens on: every read is ECONNREFUSED
    const srv = await startCloud({ fixtures: 'config/cloud.yaml', rateLimit: false });
    const url = srv.url;
    await srv.close();
    const r = run(['plan', file, '--at', '2026-11-23T09:00:00+01:00'], {
      PIPESCALER_API_URL: url,
      PIPESCALER_KEY_ID: 'pipescaler-demo-key',
      PIPESCALER_KEY_SECRET: 'demo-secret-change-me',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\nerror: could not read 10 of 10 pipes: orders-events \(API_NETWORK\)/);
    noStack(r.stderr);
  });

  it('simulate | head -1 ends quietly with status 0 (EPIPE)', () => {
    const r = spawnSync(
      'bash',
      [
        '-o',
        'pipefail',
        '-c',
        `"${process.execPath}" ${BIN} simulate --from 2026-11-01T00:00:00Z --to 2027-01-01T00:00:00Z --step 5m --json | head -1`,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, TZ: 'Europe/Berlin' },
        timeout: 120_000,
      },
    );
    expect(r.stdout).toBe('[\n');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 150_000);
});
