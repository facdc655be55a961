// `pipescaler history` and `pipescaler notify test`, the built CLI against the real Redis and a
// real HTTP receiver: a table within 100 columns, one JSON array, a clear line for each mistake,
// and no secret anywhere. Needs `npm run build` first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { HistoryStore, type Outcome } from '../../src/history/index.js';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignature } from '../../src/notify/index.js';
import { REDIS_URL, cleanupPrefix, runCli, uniquePrefix } from '../daemon/helpers.js';
import { startReceiver } from '../notify/receiver.js';

const prefix = uniquePrefix('cli-history');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const env = { PIPESCALER_REDIS_URL: REDIS_URL, PIPESCALER_REDIS_PREFIX: prefix };
const dir = mkdtempSync(join(tmpdir(), 'pipescaler-history-'));
const limits = { retentionMs: 42 * 86_400_000, maxEntries: 2_000 };
const HOUR = 3_600_000;

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

async function seed(): Promise<void> {
  const store = new HistoryStore(redis, prefix);
  const now = Date.now();
  const outcomes: Outcome[] = [
    {
      pipe: 'orders-events',
      outcome: 'applied',
      at: now - 50 * HOUR,
      reason: 'window',
      before: { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 },
      after: { replicas: 4, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
      windows: ['business-hours'],
      key: 'default',
      requestId: '6f1c2a4e-0d4b-4c8e-9f3a-2b7d1e5c9a01',
    },
    {
      pipe: 'orders-events',
      outcome: 'skipped',
      at: now - 3 * HOUR,
      reason: 'cooldown',
      windows: ['business-hours'],
      message: 'scaleUp cooldown: the last change was 20 s ago, the next may go at 08:01:00 (cooldown 60s)',
    },
    { pipe: 'nightly-s3', outcome: 'failed', at: now - 2 * HOUR, reason: 'API_FAILED_DEPENDENCY' },
    {
      pipe: 'orders-events',
      outcome: 'applied',
      at: now - 30 * 86_400_000,
      reason: 'baseline',
      after: { replicas: 2 },
    },
  ];
  for (const o of outcomes) await store.append(o, limits);
  await store.append({ ...outcomes[2]!, at: Date.now() - HOUR }, limits);
}

describe('pipescaler history', () => {
  it('shows one pipe or every pipe as a table within 100 columns, or as one JSON array', async () => {
    await seed();
    const one = await runCli(env, ['history', 'orders-events']);
    expect(one.code, one.stderr).toBe(0);
    const lines = one.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^LAST \(UTC\)\s+PIPE\s+OUTCOME\s+REASON\s+N\s+BEFORE -> AFTER\s+WINDOWS$/);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(100);
    // the 30-day-old change is before --since 7d; the skip says why under its row
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(
        /^\d\d-\d\d \d\d:\d\d:\d\d {2}orders-events {2}skipped {2}cooldown\s+1\s+-\s+business-hours$/,
      ),
      '    why: scaleUp cooldown: the last change was 20 s ago, the next may go at 08:01:00 (cooldown 60s)',
      expect.stringMatching(/orders-events {2}applied {2}window\s+1\s+2x500m\/2GB -> 4x1000m\/4GB\s+business-hours$/),
    ]);

    const all = await runCli(env, ['history', '--all', '--since', '60d', '--outcome', 'applied,failed', '--json']);
    expect(all.code, all.stderr).toBe(0);
    const entries = JSON.parse(all.stdout) as { pipe: string; outcome: string; count: number; first: string }[];
    expect(entries.map((e) => [e.pipe, e.outcome, e.count])).toEqual([
      ['nightly-s3', 'failed', 2],
      ['orders-events', 'applied', 1],
      ['orders-events', 'applied', 1],
    ]);
    expect(entries[0]!.first).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('says what is wrong with a flag or a pipe, in one line, exit 1', async () => {
    const cases: [string[], RegExp][] = [
      [['history', 'orders-event'], /no pipe "orders-event" in .*; did you mean "orders-events"\?/],
      [['history'], /name a pipe, or --all/],
      [['history', 'orders-events', '--since', 'yesterday'], /--since: "yesterday" is neither a duration/],
      [['history', '--all', '--outcome', 'aplied'], /--outcome: "aplied" is not an outcome/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(env, args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

describe('pipescaler notify test', () => {
  it('sends one signed test event to each sink and says what it answered, never the secret or the Slack URL', async () => {
    const hook = await startReceiver();
    const slack = await startReceiver();
    slack.answer = () => 500;
    const path = join(dir, 'notify.yaml');
    writeFileSync(
      path,
      `pipes:
  - name: orders-events
    organizationId: 5d3f8a2e-1c4b-4e6f-9a7b-2c1d0e9f8a7b
    serviceId: a1000000-0000-4000-8000-000000000001
    pipeId: b1000000-0000-4000-8000-000000000001
    policy: p
policies:
  p: { baseline: { replicas: 2 } }
notify:
  sinks:
    ops:
      type: webhook
      url: ${hook.url}
      secret: \${PS_HOOK_SECRET}
      allowPrivateNetwork: true   # the test's receiver listens on 127.0.0.1
    team:
      type: slack
      url: \${PS_SLACK_URL}
      allowPrivateNetwork: true
`,
    );
    const secrets = { PS_HOOK_SECRET: 'hook-secret-4711', PS_SLACK_URL: `${slack.url}/T0/B0/slack-token-4711` };
    const r = await runCli(secrets, ['notify', 'test'], path);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ops \(webhook\): HTTP 200 in \d+ ms, event [0-9a-f-]{36}$/m);
    expect(r.stdout).toMatch(/^team \(slack\): failed: answered HTTP 500$/m);
    expect(r.stderr).toMatch(/1 sink did not accept the test event/);
    for (const s of Object.values(secrets)) expect(`${r.stdout}${r.stderr}`).not.toContain(s);
    const [got] = hook.received;
    expect(JSON.parse(got!.body)).toMatchObject({ type: 'test', pipe: 'orders-events', severity: 'info' });
    const ts = String(got!.headers[TIMESTAMP_HEADER]);
    expect(verifySignature(secrets.PS_HOOK_SECRET, ts, got!.body, String(got!.headers[SIGNATURE_HEADER]))).toBe(true);
    expect(JSON.parse(slack.received[0]!.body)).toEqual({
      text: ':large_blue_circle: pipescaler: orders-events test (test) (pipescaler notify test)',
    });
    const one = await runCli(secrets, ['notify', 'test', 'opz'], path);
    expect(one.stderr).toMatch(/no sink "opz" in .*; did you mean "ops"\?/);
    await hook.stop();
    await slack.stop();
  });
});
