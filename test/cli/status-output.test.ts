// `status` as text: the daemons line, a table that fits 100 columns (cut in a set order), --wide
// (a row and the pipe's lines, within 160 columns).
import { describe, expect, it } from 'vitest';
import { formatAge, formatReplicas, formatStatusText } from '../../src/cli/status-output.js';
import type { PipeStatus } from '../../src/daemon/index.js';
import type { ReplicaBeat } from '../../src/daemon/store/heartbeat.js';

const NOW = Date.parse('2026-11-23T10:00:00Z');

function row(over: Partial<PipeStatus>): PipeStatus {
  return {
    pipe: 'orders-events',
    policy: 'weekday-business-hours',
    key: 'default',
    kind: 'stream',
    state: 'Running',
    applied: { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
    platform: {
      values: { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
      state: 'Running',
      at: NOW - 9_000,
    },
    desired: { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 4 },
    windows: ['business-hours'],
    lastDecision: {
      at: NOW - 12_000,
      action: 'none',
      direction: 'none',
      windows: ['business-hours'],
      desired: {},
      changes: {},
      reasons: [],
    },
    reason: null,
    ageSeconds: 12,
    nextScaleUp: null,
    lastError: null,
    override: null,
    paused: null,
    parked: null,
    drifts: 0,
    keyRefused: null,
    lastVerdict: null,
    verdictDue: null,
    change: null,
    confirmed: null,
    ...over,
  };
}

const beat = (id: string, ago: number): ReplicaBeat => ({
  id,
  host: 'node-a',
  pid: 41,
  version: '1.2.3',
  startedAt: NOW - 3_600_000,
  at: NOW - ago,
  pipes: 12,
  dryRun: false,
});

describe('status text', () => {
  it('says how old things are in their largest unit', () => {
    expect([0, 59, 119, 120, 7_199, 7_200, 172_799, 172_800].map(formatAge)).toEqual([
      '0s',
      '59s',
      '119s',
      '2m',
      '119m',
      '2h',
      '47h',
      '2d',
    ]);
  });

  it('names the live replicas, or says none is alive', () => {
    expect(formatReplicas([], NOW, false)).toEqual([
      'no daemon alive (no heartbeat in the last 30 s): nothing is scaling these pipes',
      '  start one: pipescaler run -c <config> (the demo on the embedded cloud: npm start)',
    ]);
    expect(formatReplicas([beat('b', 3_000), beat('a', 8_000)], NOW, false)).toEqual([
      'daemons: 2 replicas alive, last heartbeat 3s ago',
    ]);
    expect(formatReplicas([beat('b', 3_000)], NOW, true)[1]).toBe(
      '  node-a pid 41, version 1.2.3, up 60m, heartbeat 3s ago, 12 pipes (b)',
    );
  });

  it('fits 100 columns with long names, a skip reason and a pause: the window and the decision age as they fit', () => {
    const statuses = [
      row({}),
      row({
        pipe: 'archive-events-eu-central-1',
        desired: null,
        reason: 'service_not_running',
        windows: ['business-hours-extended'],
      }),
      row({
        pipe: 'legacy-events',
        state: 'Stopped',
        platform: { values: { replicas: 1 }, state: 'Stopped', at: NOW - 65_000 },
        reason: 'pipe_state',
        paused: { reason: 'migration to the new cluster, see TICKET-1234', scope: 'all', until: NOW + 5_400_000 },
      }),
      row({
        pipe: 'clickstream',
        desired: { replicas: 8, replicaCpuMillicores: 2000, replicaMemoryGb: 8 },
        reason: 'cooldown',
      }),
    ];
    const text = formatStatusText(
      statuses,
      [beat('b', 3_000)],
      [
        'key default: 4 pipes, reconcile every 10 min (10 per 10 s, reads at most 25 %); a waiting scale-down is sent within 13.3 s, a boundary moving every pipe starts its scale-ups 71.1 s ahead (leadTime auto)',
      ],
      { wide: false, width: 100, now: NOW },
    );
    const lines = text.trimEnd().split('\n');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(100);
    // the window does not fit whole: left to a wider terminal
    expect(lines[2]).toMatch(/^PIPE\s+PLATFORM\s+READ\s+CHANGE\s+DECIDED\s+STATUS$/);
    // reason codes, values and the pause's fact stay whole; what is cut ends in "…"
    expect(text).toMatch(/^archive-events-eu-central-1\s+6x1000m\/4GB\s+9s\s+-\s+12s\s+service_not_running$/m);
    expect(text).toMatch(/^clickstream\s+6x1000m\/4GB\s+9s\s+8x2000m\/8GB wanted\s+12s\s+cooldown$/m);
    expect(text).toMatch(/^orders-events\s+6x1000m\/4GB\s+9s\s+=\s+12s\s+ok$/m);
    expect(text).toMatch(/^legacy-events\s+Stopped\s+65s\s+6x1000m\/4GB wanted\s+12s\s+paused \(all pipes\), .*…$/m);
    // wider, the window and the whole status come back
    expect(formatStatusText(statuses, [], [], { wide: false, width: 200, now: NOW })).toMatch(
      /^legacy-events\s+Stopped\s.*\sbusiness-hours\s+12s\s+paused \(all pipes\), 90m left: migration to the new cluster, see TICKET-1234$/m,
    );
  });

  it('shows the key when the pipes use more than one', () => {
    const one = formatStatusText([row({}), row({ pipe: 'b' })], [], [], { wide: false, width: 100, now: NOW });
    expect(one).toMatch(/^PIPE\s+PLATFORM\s/m);
    const two = formatStatusText([row({}), row({ pipe: 'b', key: 'batch-1', pool: 'batch' })], [], [], {
      wide: false,
      width: 100,
      now: NOW,
    });
    expect(two).toMatch(/^PIPE\s+KEY\s+PLATFORM\s/m);
    expect(two).toMatch(/^b\s+batch-1 \(pool batch\)\s+6x1000m\/4GB\s/m);
  });

  it("--wide shows each pipe's next scale-up under leadTime auto: when it may be sent, when it is at target, from what", () => {
    const up = {
      boundary: Date.parse('2026-11-23T11:00:00Z'),
      sendFrom: Date.parse('2026-11-23T10:55:41.500Z'),
      expectedAt: Date.parse('2026-11-23T10:59:00Z'),
      actuationMs: 192_000,
      actuation: { ms: 192_000, source: 'kind' as const, samples: 45 },
    };
    const statuses = [row({ nextScaleUp: up }), row({ pipe: 'b' })];
    const wide = formatStatusText(statuses, [], [], { wide: true, width: 100, now: NOW });
    expect(wide).toContain(
      '    next scale-up: send from 2026-11-23T10:55:41Z, at target by 10:59:00Z for 11:00:00Z (3m12s actuation: the p95 of stream pipes over their last 45 changes)',
    );
    expect(wide).toMatch(/^b\s+default\s+6x1000m\/4GB\s+9s\s+=\s+-\s+ok$/m);
    // the plan reserves its confirmation reads: at target, then confirmed by its confirming read
    const confirming = { ...up, atTargetAt: Date.parse('2026-11-23T10:58:40Z') };
    expect(
      formatStatusText([row({ nextScaleUp: confirming })], [], [], { wide: true, width: 100, now: NOW }),
    ).toContain(
      'send from 2026-11-23T10:55:41Z, at target by 10:58:40Z, confirmed by 10:59:00Z for 11:00:00Z (3m12s actuation',
    );
    // the narrow table leaves it to --wide and --json
    expect(formatStatusText(statuses, [], [], { wide: false, width: 100, now: NOW })).not.toContain('10:55:41Z');
  });

  it('--wide: a row of whole columns, then the values, the instants, the pause until its instant, the error message', () => {
    const statuses = [
      row({
        paused: { reason: 'freeze', scope: 'config' },
        lastError: { at: NOW, code: 'API_TIMEOUT', message: 'scalePipe: timed out after 30000 ms' },
      }),
    ];
    const text = formatStatusText(statuses, [], [], { wide: true, width: 100, now: NOW });
    expect(text).toMatch(/^PIPE\s+KEY\s+PLATFORM\s+READ\s+CHANGE\s+VERDICT\s+STATUS$/m);
    expect(text).toMatch(/^orders-events\s+default\s+6x1000m\/4GB\s+9s\s+=\s+-\s+paused \(config\)$/m);
    expect(text).toContain(
      '    platform: replicas=6 replicaCpuMillicores=1000 replicaMemoryGb=4 (stream, Running), read 2026-11-23T09:59:51.000Z',
    );
    expect(text).toContain(
      '    decision: none 2026-11-23T09:59:48.000Z (business-hours), desired replicas=6 replicaCpuMillicores=1000 replicaMemoryGb=4; policy weekday-business-hours, key',
    );
    expect(text).toContain('\n      default, 0 drifts\n');
    expect(text).toMatch(/^ {4}status: paused \(config\): freeze$/m);
    const errored = formatStatusText(
      [row({ lastError: { at: NOW, code: 'API_TIMEOUT', message: 'scalePipe: timed out after 30000 ms' } })],
      [],
      [],
      { wide: true, width: 100, now: NOW },
    );
    expect(errored).toMatch(/^ {4}status: error API_TIMEOUT: scalePipe: timed out after 30000 ms$/m);
    const refused = formatStatusText(
      [
        row({
          lastError: { at: NOW, code: 'API_BAD_REQUEST', message: 'BAD_REQUEST: replicas must be between 1 and 10' },
        }),
      ],
      [],
      [],
      { wide: true, width: 100, now: NOW },
    );
    expect(refused).toMatch(/status: error API_BAD_REQUEST: replicas must be between 1 and 10$/m);
  });
});

describe('window verdicts in status', () => {
  const B = Date.parse('2026-11-23T09:00:00Z');
  const due = { boundary: B, windows: ['business-hours'], target: { replicas: 6 }, deadline: B + 600_000 };
  const rows = [
    row({ pipe: 'a', lastVerdict: { ...due, verdict: 'met', at: B + 30_000, lateMs: 0, confirmedAt: B - 60_000 } }),
    row({
      pipe: 'b',
      lastVerdict: { ...due, verdict: 'late', at: B + 200_000, lateMs: 180_000, confirmedAt: B + 180_000 },
    }),
    row({ pipe: 'c', lastVerdict: { ...due, verdict: 'missed', at: B + 600_000, reason: 'not_confirmed' } }),
    row({ pipe: 'd', lastVerdict: { ...due, verdict: 'excluded', at: B, reason: 'paused' } }),
    row({ pipe: 'e', verdictDue: { boundary: B, windows: ['business-hours'] } }),
    row({ pipe: 'f' }),
  ];

  it('narrow: a VERDICT column once some pipe has one (met, late by how much, missed, excluded, due)', () => {
    expect(formatStatusText([row({})], [], [], { wide: false, width: 100, now: NOW })).not.toContain('VERDICT');
    const text = formatStatusText(rows, [], [], { wide: false, width: 100, now: NOW });
    for (const l of text.trimEnd().split('\n')) expect(l.length, l).toBeLessThanOrEqual(100);
    expect(text).toMatch(/^PIPE\s+PLATFORM\s+READ\s+CHANGE\s+WINDOW\s+DECIDED\s+VERDICT\s+STATUS$/m);
    expect(text).toMatch(/^a\s.*\s12s\s+met\s/m);
    expect(text).toMatch(/^b\s.*\s12s\s+late 3m\s/m);
    expect(text).toMatch(/^c\s.*\s12s\s+missed\s/m);
    expect(text).toMatch(/^d\s.*\s12s\s+excl paused\s/m);
    expect(text).toMatch(/^e\s.*\s12s\s+due\s/m);
    expect(text).toMatch(/^f\s.*\s12s\s+-\s/m);
  });

  it('wide: the verdict in words, with the window, its start and when the pipe was confirmed', () => {
    const text = formatStatusText(rows, [], [], { wide: true, width: 100, now: NOW });
    expect(text).toContain(
      'late by 3m: business-hours at 2026-11-23T09:00:00.000Z wanted replicas 6, confirmed 2026-11-23T09:03:00.000Z',
    );
    expect(text).toContain(
      'missed: business-hours at 2026-11-23T09:00:00.000Z wanted replicas 6, not confirmed by 2026-11-23T09:10:00.000Z',
    );
    expect(text).toContain('no verdict: the pipe was paused at business-hours at 2026-11-23T09:00:00.000Z');
    expect(text).toContain('due: business-hours at 2026-11-23T09:00:00.000Z, not confirmed yet');
  });
});

describe('a change on its way', () => {
  const change = {
    state: 'confirming' as const,
    target: { replicas: 8 },
    since: NOW - 45_000,
    sentAt: NOW - 45_000,
    unconfirmedAt: null,
    resends: 0,
  };

  it('confirming: the values it brings and how long ago it was sent; an error shows beside it', () => {
    const text = formatStatusText([row({ change })], [], [], { wide: false, width: 120, now: NOW });
    expect(text).toMatch(/^orders-events\s+6x1000m\/4GB\s+9s\s+8x1000m\/4GB confirming 45s\s.*\sok$/m);
    const failing = row({ change, lastError: { at: NOW, code: 'API_TIMEOUT', message: 'x' } });
    expect(formatStatusText([failing], [], [], { wide: false, width: 120, now: NOW })).toMatch(
      /\s8x1000m\/4GB confirming 45s\s.*\serror API_TIMEOUT$/m,
    );
  });

  it('outcome unknown: the values still the last read, the change named with how long since its answer was lost', () => {
    const unknown = { ...change, state: 'outcome_unknown' as const, since: NOW - 15_000, code: 'API_TIMEOUT' };
    const rows = [row({ change: unknown })];
    expect(formatStatusText(rows, [], [], { wide: false, width: 100, now: NOW })).toMatch(
      /^orders-events\s+6x1000m\/4GB\s+9s\s+8x1000m\/4GB outcome unknown 15s\s/m,
    );
    expect(formatStatusText(rows, [], [], { wide: true, width: 100, now: NOW })).toContain(
      '    change: replicas=8 outcome unknown since 2026-11-23T09:59:45.000Z (API_TIMEOUT), sent 2026-11-23T09:59:15.000Z',
    );
  });

  it('unconfirmed: since when, with its re-send; --wide gives the instants', () => {
    const unconfirmed = {
      ...change,
      state: 'unconfirmed' as const,
      since: NOW - 2 * 60_000,
      sentAt: NOW - 12 * 60_000,
      unconfirmedAt: NOW - 2 * 60_000,
      resends: 1,
    };
    const rows = [row({ change: unconfirmed, lastError: { at: NOW, code: 'API_TIMEOUT', message: 'x' } })];
    expect(formatStatusText(rows, [], [], { wide: false, width: 140, now: NOW })).toMatch(
      /\s8x1000m\/4GB unconfirmed 2m\s.*\serror API_TIMEOUT$/m,
    );
    expect(formatStatusText(rows, [], [], { wide: true, width: 120, now: NOW })).toMatch(
      /^ {4}change: replicas=8 unconfirmed since 2026-11-23T09:58:00.000Z, sent 2026-11-23T09:48:00.000Z, sent again$/m,
    );
  });
});

describe('texts from Redis and the platform', () => {
  it('are printed without terminal control: a pause reason, an error text, a decision reason', () => {
    const hostile = '\u001b[2J\u001b[1;1Hall good\u001b]0;pwned\u0007\nforged line\u009b31m';
    const rows = [
      row({ pipe: 'a', paused: { reason: hostile, scope: 'pipe' } }),
      row({ pipe: 'b', lastError: { at: NOW, code: 'API_SERVER_ERROR', message: hostile } }),
      row({ pipe: 'c', reason: hostile }),
    ];
    for (const wide of [false, true]) {
      const text = formatStatusText(rows, [], [], { wide, width: 300, now: NOW });
      // eslint-disable-next-line no-control-regex -- what must not be there
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
      expect(text).toContain('all good');
      // the newline did not start a line of its own
      expect(text).toContain('forged line');
      expect(text).not.toMatch(/^forged line/m);
    }
  });
});
