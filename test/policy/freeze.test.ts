// Freeze windows (src/policy/freeze.ts) through decide(): a frozen move is held at the applied
// value with a `freeze` reason, and goes out at the first instant after the freeze ends. Recurring
// freezes start and end at their local wall times across both DST changes of five zones (a
// southern-hemisphere one, and two whose offsets have half hours), as windows do.
import { DateTime, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/policy/decide.js';
import type { Freeze } from '../../src/policy/types.js';
import { pipeTimeline } from '../../src/policy/simulate.js';
import { at, oneOff, policy, recurring, view } from './build.js';

const MIN = 60_000;

const freeze = (scope: Freeze['scope'], window: Freeze['window']): Freeze => ({ scope, window });

describe('a freeze holds moves', () => {
  const release = freeze(
    'scaleDown',
    oneOff({ name: 'release', from: '2026-11-24T09:00Z', to: '2026-11-24T11:00Z', target: {} }),
  );
  const p = policy({ baseline: { replicas: { value: 2 } }, freezes: [release] });

  it('scaleDown: a scale-down is held at the applied value, saying until when; a scale-up goes', () => {
    const d = decide(p, at('2026-11-24T10:00Z'), view({ applied: { replicas: 6 } }));
    expect(d).toMatchObject({ action: 'none', desired: { replicas: 6 }, changes: {} });
    expect(d.freeze).toEqual({ freezes: ['release'], held: { replicas: 2 }, until: at('2026-11-24T11:00Z') });
    expect(d.reasons.find((r) => r.code === 'freeze')?.message).toBe(
      'replicas scale-down 6 -> 2 held until 2026-11-24T11:00:00.000Z: freeze release (one-off 2026-11-24T09:00:00.000Z to 2026-11-24T11:00:00.000Z), no scale-downs',
    );
    const up = decide(p, at('2026-11-24T10:00Z'), view({ applied: { replicas: 1 } }));
    expect(up).toMatchObject({ action: 'change', changes: { replicas: 2 } });
    expect(up.freeze).toBeUndefined();
  });

  it('all: a scale-up is held too; the end is exclusive', () => {
    const all = policy({ baseline: { replicas: { value: 2 } }, freezes: [{ ...release, scope: 'all' }] });
    expect(decide(all, at('2026-11-24T10:59Z'), view({ applied: { replicas: 1 } })).action).toBe('none');
    expect(decide(all, at('2026-11-24T11:00Z'), view({ applied: { replicas: 1 } })).changes).toEqual({ replicas: 2 });
  });

  it('an override passes a freeze (the operator decided), a field never read is not held', () => {
    const override = {
      id: 'o',
      values: { replicas: 1 },
      setAt: at('2026-11-24T08:00Z'),
      until: at('2026-11-24T12:00Z'),
      reason: 'cost incident',
      source: 'operator' as const,
      mode: 'set' as const,
    };
    expect(decide(p, at('2026-11-24T10:00Z'), view({ applied: { replicas: 6 }, override })).changes).toEqual({
      replicas: 1,
    });
    expect(decide(p, at('2026-11-24T10:00Z'), view({ applied: {} })).changes).toMatchObject({ replicas: 2 });
  });

  it('simulate: the held scale-down goes out at the freeze end, not at the next window boundary', () => {
    const changes = pipeTimeline(
      p,
      view({ applied: { replicas: 6 } }),
      at('2026-11-24T09:30Z'),
      at('2026-11-24T13:00Z'),
      30_000,
    );
    expect(changes.map((c) => [new Date(c.at).toISOString(), c.scaling])).toEqual([
      ['2026-11-24T11:00:00.000Z', { replicas: 2 }],
    ]);
  });
});

/** The local days of 2026 on which `zone` changes its offset (DST starts or ends). */
function transitions(zoneName: string): DateTime[] {
  const zone = IANAZone.create(zoneName);
  const out: DateTime[] = [];
  for (let d = DateTime.fromISO('2026-01-01', { zone: zoneName }); d.year === 2026; d = d.plus({ days: 1 })) {
    if (zone.offset(d.toMillis()) !== zone.offset(d.plus({ days: 1 }).toMillis())) out.push(d);
  }
  return out;
}

describe('recurring freezes across DST, as windows', () => {
  const zones = ['Europe/Berlin', 'America/New_York', 'America/St_Johns', 'Australia/Adelaide', 'Pacific/Auckland'];

  it.each(zones)(
    '%s: both changes of 2026; a freeze 22:00-06:00 over the night of the change holds from 22:00 to 06:00 local',
    (zoneName) => {
      const days = transitions(zoneName);
      expect(days).toHaveLength(2);
      const night = freeze(
        'scaleDown',
        recurring({ name: 'night', start: '22:00', end: '06:00', timezone: zoneName, target: {} }),
      );
      const day = freeze(
        'all',
        recurring({ name: 'release', start: '09:00', end: '11:00', timezone: zoneName, target: {} }),
      );
      const p = policy({ baseline: { replicas: { value: 2 } }, freezes: [night, day] });
      const down = (t: number) => decide(p, t, view({ applied: { replicas: 6 } }));
      const up = (t: number) => decide(p, t, view({ applied: { replicas: 1 } }));
      for (const change of days) {
        // the night before the change (the change happens in it, at about 02:00-03:00 local)
        const eve = change.minus({ days: 1 });
        const local = (d: DateTime, h: number, m = 0) =>
          DateTime.fromObject(
            { year: d.year, month: d.month, day: d.day, hour: h, minute: m },
            { zone: zoneName },
          ).toMillis();
        expect(down(local(eve, 21, 59)).action, `${zoneName} ${eve.toISODate()} 21:59`).toBe('change');
        expect(down(local(eve, 22)).action, '22:00').toBe('none');
        expect(down(local(change, 5, 59)).action, '05:59').toBe('none');
        expect(down(local(change, 5, 59)).freeze?.until).toBe(local(change, 6));
        expect(down(local(change, 6)).action, '06:00').toBe('change');
        // scope all the same morning, after the change: 09:00-11:00 local, a scale-up held too
        expect(up(local(change, 8, 59)).action, '08:59').toBe('change');
        expect(up(local(change, 9)).action, '09:00').toBe('none');
        expect(up(local(change, 10, 59)).freeze?.until).toBe(local(change, 11));
        expect(up(local(change, 11)).action, '11:00').toBe('change');
        // the clocks changed that night: 8 wall-clock hours were 7 or 9 real ones
        expect([7, 9]).toContain((local(change, 6) - local(eve, 22)) / 3_600_000);
      }
    },
  );

  it('a freeze starting in the spring-forward gap starts at the first instant after it (Berlin 02:30 on 2026-03-29)', () => {
    const gap = freeze(
      'scaleDown',
      recurring({ name: 'gap', start: '02:30', end: '04:00', timezone: 'Europe/Berlin', target: {} }),
    );
    const p = policy({ baseline: { replicas: { value: 2 } }, freezes: [gap] });
    expect(decide(p, at('2026-03-29T00:59:59Z'), view({ applied: { replicas: 6 } })).action).toBe('change');
    expect(decide(p, at('2026-03-29T01:00Z'), view({ applied: { replicas: 6 } })).action).toBe('none');
    expect(decide(p, at('2026-03-29T02:00Z'), view({ applied: { replicas: 6 } })).action).toBe('change');
  });

  it('simulate across a fall-back night: the scale-down held from 22:00 goes out at 06:00 local (Adelaide, 2026-04-05)', () => {
    const night = freeze(
      'scaleDown',
      recurring({ name: 'night', start: '22:00', end: '06:00', timezone: 'Australia/Adelaide', target: {} }),
    );
    const p = policy({ baseline: { replicas: { value: 2 } }, freezes: [night] });
    const from = DateTime.fromISO('2026-04-04T23:00', { zone: 'Australia/Adelaide' }).toMillis();
    const changes = pipeTimeline(p, view({ applied: { replicas: 6 } }), from, from + 12 * 60 * MIN, 60_000);
    expect(changes.map((c) => DateTime.fromMillis(c.at, { zone: 'Australia/Adelaide' }).toISO())).toEqual([
      '2026-04-05T06:00:00.000+09:30',
    ]);
  });
});
