// The history: and notify: sections: defaults, sinks with their secrets from the environment or a
// file, and each mistake named with its line, never echoing a secret.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { BASE } from './config-fixture.js';

// BASE is 18 lines: the sections below start at line 19.
const parse = (text: string, env: Record<string, string> = {}, files: Record<string, string> = {}) =>
  parseConfig(`${BASE}${text}`, {
    file: '/etc/pipescaler/pipescaler.yaml',
    env,
    readFile: (p) => {
      const f = files[p];
      if (f === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
      return f;
    },
  });

function issues(fn: () => unknown): { line: number; path: string; message: string }[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map((i) => ({ line: i.line, path: i.path, message: i.message }));
    throw err;
  }
  throw new Error('no error');
}

describe('history and notify config', () => {
  it('defaults: six weeks, 2,000 entries per pipe, no sinks', () => {
    const c = parse('');
    expect(c.history).toEqual({ retentionMs: 42 * 86_400_000, maxEntries: 2_000 });
    expect(c.notify).toEqual({ coalesceMs: 60_000, sinks: [] });
  });

  it('reads every kind of sink with its filters and secrets', () => {
    const c = parse(
      `history: { retention: 14d, maxEntries: 500 }
notify:
  coalesce: 30s
  sinks:
    ops:
      type: webhook
      url: https://hooks.example.com/pipescaler
      secret: \${HOOK_SECRET}
      events: [failed, parked, drift_found]
      pipes: ["orders-*"]
      severity: warning
      timeout: 5s
      attempts: 5
      backoff: 1s
    team:
      type: slack
      urlFile: slack-url
    bus:
      type: cloudevents
      url: http://bus.example.com/events
`,
      { HOOK_SECRET: 's3cret-hmac' },
      { '/etc/pipescaler/slack-url': 'https://hooks.slack.com/services/T0/B0/xyz\n' },
    );
    expect(c.history).toEqual({ retentionMs: 14 * 86_400_000, maxEntries: 500 });
    expect(c.notify?.coalesceMs).toBe(30_000);
    expect(c.notify?.sinks).toEqual([
      {
        name: 'ops',
        type: 'webhook',
        url: 'https://hooks.example.com/pipescaler',
        secret: 's3cret-hmac',
        events: ['failed', 'parked', 'drift_found'],
        pipes: ['orders-*'],
        severity: 'warning',
        timeoutMs: 5_000,
        attempts: 5,
        backoffMs: 1_000,
      },
      expect.objectContaining({ name: 'team', type: 'slack', url: 'https://hooks.slack.com/services/T0/B0/xyz' }),
      expect.objectContaining({ name: 'bus', type: 'cloudevents', events: null, severity: 'info', attempts: 12 }),
    ]);
  });

  it('names each mistake with its line, and no secret', () => {
    const found = issues(() =>
      parse(
        `history: { retention: forever, maxEntries: 3 }
notify:
  sinks:
    ops:
      type: webhok
      url: https://hooks.example.com/x
      events: [aplied]
    team:
      type: slack
      url: https://hooks.slack.com/services/T0/B0/literal-secret
    hook:
      type: webhook
      url: https://hooks.example.com/y
`,
      ),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ line: 19, path: 'history.retention', message: expect.stringContaining('duration') }),
        expect.objectContaining({ line: 19, path: 'history.maxEntries', message: 'must be at least 10' }),
        expect.objectContaining({
          line: 23,
          path: 'notify.sinks.ops.type',
          message: expect.stringContaining('webhook'),
        }),
        expect.objectContaining({ line: 25, message: expect.stringContaining('did you mean "applied"') }),
        expect.objectContaining({
          line: 28,
          path: 'notify.sinks.team.url',
          message: expect.stringContaining('must not be written in the config file'),
        }),
        expect.objectContaining({ path: 'notify.sinks.hook', message: expect.stringContaining('needs secret') }),
      ]),
    );
    expect(JSON.stringify(found)).not.toContain('literal-secret');
  });
});

describe('a sink inside the machine or its private network', () => {
  const sink = (url: string, extra = '') =>
    `notify:\n  sinks:\n    ops:\n      type: cloudevents\n      url: ${url}\n${extra}`;

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'a link-local address (169.254.169.254)'],
    ['http://10.0.0.1/', 'a private address (10.0.0.1)'],
    ['http://172.20.1.1/', 'a private address (172.20.1.1)'],
    ['http://192.168.1.10:8080/hook', 'a private address (192.168.1.10)'],
    ['http://127.0.0.1:6379/', 'a loopback address (127.0.0.1)'],
    ['http://2130706433:6379/', 'a loopback address (127.0.0.1)'],
    ['http://localhost:6379/', 'a loopback address (localhost)'],
    ['http://[::1]:6379/', 'a loopback address (::1)'],
    ['http://[::ffff:127.0.0.1]/', 'a loopback address (::ffff:7f00:1)'],
    ['http://[fe80::1]/', 'a link-local address (fe80::1)'],
    ['http://[fd00::1]/', 'a private (unique local) address (fd00::1)'],
    ['http://0.0.0.0/', 'an unspecified address (0.0.0.0)'],
  ])('%s is refused, naming the field and its line', (url, what) => {
    expect(issues(() => parse(sink(url)))).toEqual([
      {
        line: 23,
        path: 'notify.sinks.ops.url',
        message: `points at ${what}: a sink inside this machine or its private network needs allowPrivateNetwork: true`,
      },
    ]);
  });

  it('a sink that says it means it is taken; a public address or a host name is', () => {
    const c = parse(sink('http://127.0.0.1:8080/hook', '      allowPrivateNetwork: true\n'));
    expect(c.notify?.sinks[0]?.url).toBe('http://127.0.0.1:8080/hook');
    for (const url of [
      'https://hooks.example.com/x',
      'http://receiver:8080/hook',
      'http://8.8.8.8/',
      'http://172.32.0.1/',
    ])
      expect(parse(sink(url)).notify?.sinks[0]?.url).toBe(url);
  });

  it('a Slack URL from the environment is checked too, and only its host is named', () => {
    const text = 'notify:\n  sinks:\n    team:\n      type: slack\n      url: ${SLACK_URL}\n';
    const found = issues(() => parse(text, { SLACK_URL: 'http://10.1.2.3/services/T0/B0/token-4711' }));
    expect(found).toEqual([
      expect.objectContaining({
        path: 'notify.sinks.team.url',
        message: expect.stringMatching(/a private address \(10\.1\.2\.3\)/),
      }),
    ]);
    expect(JSON.stringify(found)).not.toContain('token-4711');
  });

  it('allowPrivateNetwork takes only true or false', () => {
    expect(issues(() => parse(sink('http://127.0.0.1/', '      allowPrivateNetwork: "yes"\n')))).toContainEqual(
      expect.objectContaining({ path: 'notify.sinks.ops.allowPrivateNetwork', message: 'must be true or false' }),
    );
  });
});
