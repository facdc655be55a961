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
