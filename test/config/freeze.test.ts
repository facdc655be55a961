// A policy's freezes and behavior.onDrift / behavior.overrides in the config (src/config/freeze.ts):
// parsed into the policy's shapes, and each mistake named with its line and path.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { parseConfig } from '../../src/config/load.js';
import { BASE } from './config-fixture.js';

// BASE ends at line 18 (the window's set); these lines follow it inside policies.weekday.
const WITH = (extra: string) => `${BASE}${extra}`;
const parse = (text: string) => parseConfig(text, { file: 'conf/pipescaler.yaml', env: {} });

function issues(text: string): { line: number; path: string; message: string }[] {
  try {
    parse(text);
  } catch (err) {
    if (err instanceof ConfigError)
      return err.issues.map((i) => ({ line: i.line ?? 0, path: i.path, message: i.message }));
    throw err;
  }
  throw new Error('the config was accepted');
}

describe('freezes and onDrift in the config', () => {
  it('parses recurring and one-off freezes (scope all by default), onDrift and overrides', () => {
    const config = parse(
      WITH(`    freezes:
      - name: release
        days: [mon, tue]
        start: "09:00"
        end: "11:00"
        timezone: Europe/Berlin
        scope: scaleDown
      - from: 2026-12-20T00:00:00+01:00
        to: 2027-01-04T00:00:00+01:00
    behavior:
      onDrift: { hold: 2h }
      overrides: scaleUpOnly
`),
    );
    const p = config.policies.weekday!;
    expect(p.freezes).toEqual([
      {
        scope: 'scaleDown',
        window: {
          kind: 'recurring',
          name: 'release',
          priority: 0,
          target: {},
          days: ['mon', 'tue'],
          start: { hour: 9, minute: 0 },
          end: { hour: 11, minute: 0 },
          timezone: 'Europe/Berlin',
          exclude: [],
        },
      },
      {
        scope: 'all',
        window: {
          kind: 'oneOff',
          name: 'freeze-2',
          priority: 0,
          target: {},
          from: Date.parse('2026-12-19T23:00:00Z'),
          to: Date.parse('2027-01-03T23:00:00Z'),
        },
      },
    ]);
    expect(p.behavior.onDrift).toEqual({ kind: 'hold', durationMs: 7_200_000 });
    expect(p.behavior.overrides).toBe('scaleUpOnly');
    expect(parse(WITH('    behavior: { onDrift: adoptAsFloor }\n')).policies.weekday!.behavior.onDrift).toEqual({
      kind: 'adoptAsFloor',
    });
    expect(parse(BASE).policies.weekday!.behavior.onDrift).toBeUndefined();
  });

  it('names each mistake with its line', () => {
    expect(
      issues(
        WITH(`    freezes:
      - start: "09:00"
        end: "11:00"
        scope: scaledown
      - from: 2026-12-20T00:00:00+01:00
    behavior:
      onDrift: { hold: soon }
      overrides: upOnly
`),
      ),
    ).toEqual([
      // (its missing timezone is said once its scope is right: zod checks a freeze's times after its keys)
      {
        line: 22,
        path: 'policies.weekday.freezes[0].scope',
        message: 'must be scaleDown (no scale-downs) or all (no changes); did you mean "scaleDown"?',
      },
      { line: 23, path: 'policies.weekday.freezes[1].to', message: 'a one-off freeze needs to (it has from)' },
      {
        line: 25,
        path: 'policies.weekday.behavior.onDrift.hold',
        message: 'must be a duration such as 30s, 5m, 1h30m or 2h (units ms, s, m, h, d)',
      },
      { line: 26, path: 'policies.weekday.behavior.overrides', message: 'must be any or scaleUpOnly' },
    ]);
  });
});
