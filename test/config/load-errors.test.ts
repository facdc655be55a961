// Broken configs, one table row each: the loader must name every problem with its line, path and
// a message that says what to do, and must never echo a secret.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { BASE, breakBase, ORG, PIPE, SERVICE } from './config-fixture.js';

interface Expected {
  readonly line: number;
  readonly column?: number;
  readonly path: string;
  /** A part of the message (the whole message is checked to contain it). */
  readonly message: string;
}
interface Case {
  readonly name: string;
  readonly text: string;
  readonly env?: Record<string, string>;
  readonly issues: readonly Expected[];
  readonly files?: Record<string, string>;
}

const WINDOW_TIMES = `        days: [mon, tue, wed, thu, fri]
        start: "08:00"
        end: "20:00"
        timezone: Europe/Berlin
`;
const secondPipe = (name: string, pipeId: string, extra = '') => `    policy: weekday
  - name: ${name}
    organizationId: ${ORG}
    serviceId: ${SERVICE}
    pipeId: ${pipeId}
    policy: weekday
${extra}`;
const PIPE2 = 'b1000000-0000-4000-8000-000000000002';

const cases: Case[] = [
  {
    name: 'unknown top-level key, with did-you-mean',
    text: `${BASE}dryrun: true\n`,
    issues: [{ line: 19, column: 1, path: 'dryrun', message: 'unknown key "dryrun"; did you mean "dryRun"?' }],
  },
  {
    name: 'unknown key in a window points at the key',
    text: breakBase('timezone: Europe', 'tmezone: Europe'),
    issues: [
      {
        line: 17,
        column: 9,
        path: 'policies.weekday.windows[0].tmezone',
        message: 'unknown key "tmezone"; did you mean "timezone"?',
      },
    ],
  },
  {
    name: 'unknown time zone',
    text: breakBase('Europe/Berlin', 'Europe/Berln'),
    issues: [
      {
        line: 17,
        column: 19,
        path: 'policies.weekday.windows[0].timezone',
        message: 'unknown time zone "Europe/Berln"; did you mean "Europe/Berlin"?',
      },
    ],
  },
  {
    name: 'malformed start time',
    text: breakBase('start: "08:00"', 'start: 8am'),
    issues: [
      {
        line: 15,
        column: 16,
        path: 'policies.weekday.windows[0].start',
        message: '"8am" is not a time: write "HH:MM"',
      },
    ],
  },
  {
    name: 'end time out of range',
    text: breakBase('end: "20:00"', 'end: "24:30"'),
    issues: [{ line: 16, path: 'policies.weekday.windows[0].end', message: 'from 00:00 to 23:59' }],
  },
  {
    name: 'empty window: end equals start',
    text: breakBase('end: "20:00"', 'end: "08:00"'),
    issues: [{ line: 16, path: 'policies.weekday.windows[0].end', message: 'the window is empty: end equals start' }],
  },
  {
    name: 'empty window: duration 0',
    text: breakBase('end: "20:00"', 'duration: 0s'),
    issues: [{ line: 16, path: 'policies.weekday.windows[0].duration', message: 'the window is empty: duration is 0' }],
  },
  {
    name: 'bad duration',
    text: breakBase('end: "20:00"', 'duration: 12 hours'),
    issues: [
      {
        line: 16,
        path: 'policies.weekday.windows[0].duration',
        message: 'must be a duration such as 30s, 5m, 1h30m or 2h',
      },
    ],
  },
  {
    name: 'end and duration together',
    text: breakBase('end: "20:00"', 'end: "20:00"\n        duration: 2h'),
    issues: [{ line: 17, path: 'policies.weekday.windows[0].duration', message: 'give end or duration, not both' }],
  },
  {
    name: 'recurring window without end or duration',
    text: breakBase('        end: "20:00"\n', ''),
    issues: [{ line: 13, path: 'policies.weekday.windows[0].end', message: 'needs end ("HH:MM") or duration' }],
  },
  {
    name: 'one-off window with from not before to',
    text: breakBase(WINDOW_TIMES, '        from: 2026-11-27T00:00:00-05:00\n        to: 2026-11-26T23:00:00-05:00\n'),
    issues: [
      {
        line: 15,
        path: 'policies.weekday.windows[0].to',
        message: 'the window is empty: to (2026-11-27T04:00:00.000Z) is not after from (2026-11-27T05:00:00.000Z)',
      },
    ],
  },
  {
    name: 'one-off window without offset',
    text: breakBase(WINDOW_TIMES, '        from: 2026-11-27T00:00:00\n        to: 2026-11-30T00:00:00-05:00\n'),
    issues: [{ line: 14, column: 15, path: 'policies.weekday.windows[0].from', message: 'needs a time and an offset' }],
  },
  {
    name: 'one-off window mixed with recurring keys',
    text: breakBase(
      '        start: "08:00"\n        end: "20:00"\n',
      '        from: 2026-11-27T00:00:00Z\n        to: 2026-11-28T00:00:00Z\n',
    ),
    issues: [
      { line: 14, path: 'policies.weekday.windows[0].days', message: '"days" belongs to recurring windows' },
      { line: 17, path: 'policies.weekday.windows[0].timezone', message: '"timezone" belongs to recurring windows' },
    ],
  },
  {
    name: 'unknown policy reference names the known ones',
    text: breakBase('policy: weekday', 'policy: weekdays'),
    issues: [
      {
        line: 8,
        column: 13,
        path: 'pipes[0].policy',
        message: 'unknown policy "weekdays" (did you mean "weekday"?); known: weekday',
      },
    ],
  },
  {
    name: 'duplicate pipe names',
    text: breakBase('    policy: weekday\n', secondPipe('orders', PIPE2)),
    issues: [{ line: 9, path: 'pipes[1].name', message: 'duplicate pipe name "orders" (also pipes[0])' }],
  },
  {
    name: 'the same pipe twice',
    text: breakBase('    policy: weekday\n', secondPipe('orders-again', PIPE)),
    issues: [{ line: 12, path: 'pipes[1].pipeId', message: 'already configured as pipes[0]' }],
  },
  {
    name: 'unknown key reference',
    text: breakBase('    policy: weekday\n', '    policy: weekday\n    key: other-org\n'),
    issues: [{ line: 9, path: 'pipes[0].key', message: 'unknown API key "other-org"; known: default (api.keys)' }],
  },
  {
    name: 'pipe name not lower-case',
    text: breakBase('name: orders', 'name: Orders_Events'),
    issues: [
      {
        line: 4,
        column: 11,
        path: 'pipes[0].name',
        message: 'pipe name "Orders_Events" must be lower-case letters, digits and "-"',
      },
    ],
  },
  {
    name: 'invalid uuid',
    text: breakBase(`pipeId: ${PIPE}`, 'pipeId: b1000000-0000-4000-8000'),
    issues: [{ line: 7, column: 13, path: 'pipes[0].pipeId', message: '"b1000000-0000-4000-8000" is not a uuid' }],
  },
  {
    name: 'missing required pipe field',
    text: breakBase(`    pipeId: ${PIPE}\n`, ''),
    issues: [{ line: 4, column: 5, path: 'pipes[0].pipeId', message: 'is required' }],
  },
  {
    name: 'replicas above the platform range',
    text: breakBase('set: { replicas: 6 }', 'set: { replicas: 12 }'),
    issues: [
      {
        line: 18,
        column: 26,
        path: 'policies.weekday.windows[0].set.replicas',
        message: 'replicas must be between 1 and 10',
      },
    ],
  },
  {
    name: 'concurrency above the platform range in a baseline',
    text: breakBase('baseline: { replicas: 2 }', 'baseline: { concurrency: 40 }'),
    issues: [
      { line: 11, path: 'policies.weekday.baseline.concurrency', message: 'concurrency must be between 0 and 34' },
    ],
  },
  {
    name: 'replicas not an integer',
    text: breakBase('set: { replicas: 6 }', 'set: { replicas: 2.5 }'),
    issues: [{ line: 18, path: 'policies.weekday.windows[0].set.replicas', message: 'replicas must be an integer' }],
  },
  {
    name: 'memory below the platform range',
    text: breakBase('set: { replicas: 6 }', 'set: { replicaMemoryGb: 0.25 }'),
    issues: [
      {
        line: 18,
        path: 'policies.weekday.windows[0].set.replicaMemoryGb',
        message: 'replicaMemoryGb must be between 0.5 and 8',
      },
    ],
  },
  {
    name: "a range in a window's set points at bounds",
    text: breakBase('set: { replicas: 6 }', 'set: { replicas: { min: 3, max: 10 } }'),
    issues: [
      {
        line: 18,
        path: 'policies.weekday.windows[0].set.replicas',
        message: 'set takes a fixed replicas; for a range write bounds: { replicas: { min: ..., max: ... } }',
      },
    ],
  },
  {
    name: 'min above max in window bounds',
    text: breakBase('set: { replicas: 6 }', 'bounds: { replicas: { min: 8, max: 4 } }'),
    issues: [{ line: 18, path: 'policies.weekday.windows[0].bounds.replicas.min', message: 'min 8 is above max 4' }],
  },
  {
    name: 'min above max in pipe bounds',
    text: breakBase(
      '    policy: weekday\n',
      '    policy: weekday\n    bounds: { replicaCpuMillicores: { min: 1000, max: 500 } }\n',
    ),
    issues: [{ line: 9, path: 'pipes[0].bounds.replicaCpuMillicores.min', message: 'min 1000 is above max 500' }],
  },
  {
    name: 'unknown scaling field',
    text: breakBase('set: { replicas: 6 }', 'set: { replica: 6 }'),
    issues: [
      {
        line: 18,
        column: 16,
        path: 'policies.weekday.windows[0].set.replica',
        message: 'unknown key "replica"; did you mean "replicas"?',
      },
    ],
  },
  {
    name: 'window without set or bounds',
    text: breakBase('        set: { replicas: 6 }\n', ''),
    issues: [
      {
        line: 13,
        path: 'policies.weekday.windows[0].set',
        message: 'a window needs set (fixed values) or bounds (min/max)',
      },
    ],
  },
  {
    name: 'bad day points at the day',
    text: breakBase('[mon, tue, wed, thu, fri]', '[mon, tues, wed]'),
    issues: [
      {
        line: 14,
        column: 21,
        path: 'policies.weekday.windows[0].days[1]',
        message: 'unknown day "tues"; did you mean "tue"?',
      },
    ],
  },
  {
    name: 'bad exclusion date',
    text: `${BASE}    exclude: [2026-12-24, 2026-13-01]\n`,
    issues: [
      { line: 19, path: 'policies.weekday.exclude[1]', message: '"2026-13-01" is not a date: write YYYY-MM-DD' },
    ],
  },
  {
    name: 'a calendar file that is missing',
    text: `${BASE}    exclude: [2026-12-24, { calendar: holidays/de.ics }]\n`,
    issues: [
      {
        line: 19,
        path: 'policies.weekday.exclude[1].calendar',
        message: 'calendar holidays/de.ics: cannot read it (ENOENT)',
      },
    ],
  },
  {
    name: 'a calendar with a timed event',
    text: `${BASE}    exclude: [{ calendar: h.ics }]\n`,
    files: {
      'conf/h.ics':
        'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:1\r\nDTSTART:20271225T100000Z\r\nSUMMARY:Party\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
    },
    issues: [
      {
        line: 19,
        path: 'policies.weekday.exclude[0].calendar',
        message: 'calendar h.ics: the event "Party" (2027-12-25T10:00:00Z) is not an all-day event',
      },
    ],
  },
  {
    name: 'a calendar that is not iCalendar',
    text: `${BASE}    exclude: [{ calendar: h.ics }]\n`,
    files: { 'conf/h.ics': 'hello' },
    issues: [
      { line: 19, path: 'policies.weekday.exclude[0].calendar', message: 'calendar h.ics: not an iCalendar file' },
    ],
  },
  {
    name: 'bad cron',
    text: `${BASE}evaluate:\n  cron: "61 * * * *"\n`,
    issues: [
      {
        line: 20,
        column: 9,
        path: 'evaluate.cron',
        message: 'invalid cron expression "61 * * * *": 61 is a invalid expression for minute',
      },
    ],
  },
  {
    name: 'an expected actuation above its cap',
    text: `${BASE}evaluate:\n  actuation:\n    expected: 20m\n`,
    issues: [{ line: 21, path: 'evaluate.actuation.expected', message: 'must be at most max (10m)' }],
  },
  {
    name: 'an actuation cap over 24h, no samples, a misspelt member',
    text: `${BASE}evaluate:\n  actuation:\n    max: 2d\n    minSamples: 0\n    expect: 1m\n`,
    issues: [
      { line: 21, path: 'evaluate.actuation.max', message: 'must be at most 24h' },
      { line: 22, path: 'evaluate.actuation.minSamples', message: 'must be at least 1' },
      { line: 23, path: 'evaluate.actuation.expect', message: 'unknown key "expect"' },
    ],
  },
  {
    name: 'a first confirmation read of 0s',
    text: `${BASE}evaluate:\n  actuation:\n    firstRead: 0s\n`,
    issues: [{ line: 21, path: 'evaluate.actuation.firstRead', message: 'must be longer than 0s' }],
  },
  {
    name: 'a first confirmation read past the limit',
    text: `${BASE}evaluate:\n  actuation:\n    max: 1m\n    firstRead: 2m\n`,
    issues: [
      {
        line: 22,
        path: 'evaluate.actuation.firstRead',
        message: 'must be at most max (1m): a change is unconfirmed by then',
      },
    ],
  },
  {
    name: 'more actuation samples than a pipe keeps',
    text: `${BASE}evaluate:\n  actuation:\n    minSamples: 51\n`,
    issues: [
      {
        line: 21,
        path: 'evaluate.actuation.minSamples',
        message: "must be at most 50 (a pipe's last 50 actuations are kept)",
      },
    ],
  },
  {
    name: 'bad log level',
    text: `${BASE}telemetry:\n  logLevel: warning\n`,
    issues: [
      {
        line: 20,
        path: 'telemetry.logLevel',
        message: 'must be one of fatal, error, warn, info, debug, trace, silent',
      },
    ],
  },
  {
    name: 'zero rate-limit period',
    text: breakBase('  baseUrl: embedded\n', '  baseUrl: embedded\n  rateLimit: { requests: 10, per: 0s }\n'),
    issues: [{ line: 3, path: 'api.rateLimit.per', message: 'must be longer than 0s' }],
  },
  {
    name: 'negative maxStep',
    text: `${BASE}    behavior:\n      scaleUp: { maxStep: { replicas: -1 } }\n`,
    issues: [
      {
        line: 20,
        path: 'policies.weekday.behavior.scaleUp.maxStep.replicas',
        message: 'maxStep of replicas must be a number above 0',
      },
    ],
  },
  {
    name: 'a lead time that is neither auto nor a duration',
    text: `${BASE}    behavior:\n      scaleUp: { leadTime: soon }\n`,
    issues: [
      {
        line: 20,
        path: 'policies.weekday.behavior.scaleUp.leadTime',
        message: 'must be auto or a duration such as 0, 90s, 5m or 1h (units ms, s, m, h, d)',
      },
    ],
  },
  {
    name: 'a lead time beyond a day',
    text: `${BASE}    behavior:\n      scaleUp: { leadTime: 2d }\n`,
    issues: [{ line: 20, path: 'policies.weekday.behavior.scaleUp.leadTime', message: 'must be at most 24h' }],
  },
  {
    name: 'a lead time on scale-downs',
    text: `${BASE}    behavior:\n      scaleDown: { leadTime: 5m }\n`,
    issues: [{ line: 20, path: 'policies.weekday.behavior.scaleDown.leadTime', message: 'unknown key "leadTime"' }],
  },
  {
    name: 'a list where a mapping belongs',
    text: breakBase('baseline: { replicas: 2 }', 'baseline: [2]'),
    issues: [{ line: 11, path: 'policies.weekday.baseline', message: 'expected a mapping, got a list' }],
  },
  {
    name: 'unset environment variable names it and its line',
    text: breakBase('baseline: { replicas: 2 }', 'baseline:\n      replicas: ${BASE_REPLICAS}'),
    issues: [
      {
        line: 12,
        column: 17,
        path: 'policies.weekday.baseline.replicas',
        message: 'environment variable ${BASE_REPLICAS} not set',
      },
    ],
  },
  {
    name: 'a quoted interpolation stays text, and the message says so',
    text: breakBase('baseline: { replicas: 2 }', 'baseline: { replicas: "${BASE_REPLICAS}" }'),
    env: { BASE_REPLICAS: '4' },
    issues: [{ line: 11, path: 'policies.weekday.baseline.replicas', message: 'a quoted value stays text' }],
  },
  {
    name: 'URL base without a key',
    text: breakBase('baseUrl: embedded', 'baseUrl: https://api.example.com'),
    issues: [{ line: 2, path: 'api', message: 'baseUrl is not embedded: give keyId' }],
  },
  {
    name: 'a literal secret is refused without echoing it',
    text: breakBase(
      'baseUrl: embedded',
      'baseUrl: https://api.example.com\n  keyId: my-key\n  keySecret: hunter2-literal',
    ),
    issues: [
      {
        line: 4,
        column: 14,
        path: 'api.keySecret',
        message: 'a secret must not be written in the config file: use keySecret: ${ENV_VAR} or keySecretFile',
      },
    ],
  },
  {
    name: 'a password in redis.url is refused',
    text: `${BASE}redis:\n  url: redis://:s3cret-pw@db:6379\n`,
    issues: [{ line: 20, path: 'redis.url', message: 'a password must not be written in the config file' }],
  },
  {
    name: 'an unreadable keySecretFile',
    text: breakBase(
      'baseUrl: embedded',
      'baseUrl: https://api.example.com\n  keyId: my-key\n  keySecretFile: secrets/missing',
    ),
    issues: [{ line: 4, path: 'api.keySecretFile', message: 'cannot read "conf/secrets/missing" (ENOENT)' }],
  },
  {
    name: '"default" is reserved among api.keys',
    text: breakBase('baseUrl: embedded', 'baseUrl: embedded\n  keys:\n    default: { keyId: k, keySecretFile: s }'),
    files: { 'conf/s': 'x' },
    issues: [
      { line: 4, column: 5, path: 'api.keys.default', message: '"default" is the key of api.keyId/api.keySecret' },
    ],
  },
  {
    name: 'an API key name that cannot name a queue',
    text: breakBase('baseUrl: embedded', 'baseUrl: embedded\n  keys:\n    Other_Org: { keyId: k, keySecretFile: s }'),
    files: { 'conf/s': 'x' },
    issues: [
      {
        line: 4,
        column: 5,
        path: 'api.keys.Other_Org',
        message:
          'key name "Other_Org" must be lower-case letters, digits and "-" (1 to 63, not starting or ending with "-")',
      },
    ],
  },
  {
    name: 'YAML syntax error with its line',
    text: breakBase('set: { replicas: 6 }', 'set: { replicas: 6'),
    issues: [{ line: 19, path: '', message: 'YAML syntax:' }],
  },
  {
    name: 'duplicate YAML key',
    text: breakBase('end: "20:00"', 'start: "20:00"'),
    issues: [{ line: 16, path: '', message: 'YAML syntax: Map keys must be unique' }],
  },
  {
    name: 'several errors at once, in file order',
    text: breakBase(
      'Europe/Berlin',
      'Europe/Berln',
      breakBase('policy: weekday', 'policy: nope', breakBase('set: { replicas: 6 }', 'set: { replicas: 0 }')),
    ),
    issues: [
      { line: 8, path: 'pipes[0].policy', message: 'unknown policy "nope"' },
      { line: 17, path: 'policies.weekday.windows[0].timezone', message: 'unknown time zone' },
      { line: 18, path: 'policies.weekday.windows[0].set.replicas', message: 'replicas must be between 1 and 10' },
    ],
  },
  {
    name: 'several errors across sections',
    text: `${breakBase('name: orders', 'name: ORDERS', breakBase(`serviceId: ${SERVICE}`, 'serviceId: nope'))}evaluate:\n  reconcile: soon\n  concurrency: 0\ndryRun: maybe\n`,
    issues: [
      { line: 4, path: 'pipes[0].name', message: 'must be lower-case' },
      { line: 6, path: 'pipes[0].serviceId', message: '"nope" is not a uuid' },
      { line: 20, path: 'evaluate.reconcile', message: 'must be a duration' },
      { line: 21, path: 'evaluate.concurrency', message: 'must be at least 1' },
      { line: 22, path: 'dryRun', message: 'must be true or false' },
    ],
  },
];

describe('loadConfig rejects broken configs with every issue and its line', () => {
  it('has at least 25 cases', () => expect(cases.length).toBeGreaterThanOrEqual(25));

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    let error: unknown;
    try {
      parseConfig(c.text, {
        file: 'conf/pipescaler.yaml',
        env: c.env ?? {},
        readFile: (p) => {
          const content = c.files?.[p];
          if (content === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
          return content;
        },
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const e = error as ConfigError;
    expect(e.code).toBe('CONFIG_INVALID');
    const got = e.issues.map((i) => ({ line: i.line, column: i.column, path: i.path, message: i.message }));
    expect(got, e.message).toHaveLength(c.issues.length);
    c.issues.forEach((want, n) => {
      const issue = got[n]!;
      expect(issue.line, e.message).toBe(want.line);
      if (want.column !== undefined) expect(issue.column, e.message).toBe(want.column);
      expect(issue.path).toBe(want.path);
      expect(issue.message).toContain(want.message);
      // the message carries each issue as file:line:col path: message
      const prefix = `conf/pipescaler.yaml:${issue.line}:${issue.column} `;
      expect(e.message).toContain(prefix + (issue.path ? `${issue.path}: ` : '') + issue.message);
    });
    for (const secret of ['hunter2-literal', 's3cret-pw']) expect(e.message).not.toContain(secret);
  });
});
