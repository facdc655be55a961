// `status` of a realistic fleet (long pipe names, two keys, overrides, pauses, changes on their way):
// the narrow table fits 100 columns and --wide 160, and what an operator must not misread (an
// override, a pause, a change on its way and its state) stays whole.
import { describe, expect, it } from 'vitest';
import { formatStatusText } from '../../src/cli/status-output.js';
import type { PipeStatus } from '../../src/daemon/index.js';
import type { ReplicaBeat } from '../../src/daemon/store/heartbeat.js';

const NOW = Date.parse('2026-11-23T10:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
const PEAK = { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 4 };
const BASE = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 };

function row(pipe: string, over: Partial<PipeStatus> = {}): PipeStatus {
  return {
    pipe,
    policy: 'weekday-business-hours-extended',
    key: 'default',
    kind: 'stream',
    state: 'Running',
    applied: PEAK,
    platform: { values: PEAK, state: 'Running', at: NOW - 9 * SEC },
    desired: PEAK,
    windows: ['business-hours-extended'],
    lastDecision: {
      at: NOW - 12 * SEC,
      action: 'none',
      direction: 'none',
      windows: ['business-hours-extended'],
      desired: PEAK,
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

const override = (over: Partial<NonNullable<PipeStatus['override']>>): NonNullable<PipeStatus['override']> => ({
  id: 'o1',
  pipe: 'x',
  values: { replicas: 8 },
  setAt: NOW - 5 * MIN,
  until: NOW + 2 * 3_600_000,
  reason: 'incident 4711: consumer lag on the eu-west cluster, see the incident channel',
  source: 'operator',
  mode: 'set',
  ...over,
});

const B = Date.parse('2026-11-23T09:00:00Z');
const due = { boundary: B, windows: ['business-hours-extended'], target: { replicas: 6 }, deadline: B + 600_000 };

export const FLEET: readonly PipeStatus[] = [
  row('orders-events-eu-central-1', {
    desired: BASE,
    change: {
      state: 'outcome_unknown',
      target: BASE,
      since: NOW - 15 * SEC,
      sentAt: NOW - 15 * SEC,
      unconfirmedAt: null,
      resends: 0,
      code: 'API_TIMEOUT',
    },
    lastVerdict: { ...due, verdict: 'met', at: B + 30 * SEC, lateMs: 0, confirmedAt: B - MIN },
  }),
  row('orders-events-eu-west-1', {
    desired: { ...PEAK, replicas: 8 },
    override: override({}),
    change: {
      state: 'confirming',
      target: { replicas: 8 },
      since: NOW - 45 * SEC,
      sentAt: NOW - 45 * SEC,
      unconfirmedAt: null,
      resends: 0,
    },
  }),
  row('clickstream-enrichment-backfill', {
    key: 'batch-1',
    pool: 'batch',
    state: 'Stopped',
    platform: {
      values: { replicas: 1, replicaCpuMillicores: 125, replicaMemoryGb: 0.5 },
      state: 'Stopped',
      at: NOW - 4 * MIN,
    },
    reason: 'pipe_state',
    paused: { reason: 'migration to the new cluster, see TICKET-1234', scope: 'all', until: NOW + 90 * MIN },
  }),
  row('payments-ledger-replay', {
    override: override({ values: { replicas: 7 }, source: 'manual', reason: 'manual', until: NOW + 119 * MIN }),
    platform: { values: { ...PEAK, replicas: 7 }, state: 'Running', at: NOW - 20 * SEC },
    drifts: 1,
  }),
  row('payments-ledger-replay-eu', {
    override: override({ values: { replicas: 3 }, source: 'manual', mode: 'floor', reason: 'manual' }),
  }),
  row('nightly-s3-archive-export', {
    kind: 'database',
    key: 'batch-2',
    pool: 'batch',
    platform: { values: { concurrency: 2 }, state: 'Running', at: NOW - 2 * MIN },
    desired: { concurrency: 4 },
    reason: 'cooldown',
    windows: [],
  }),
  row('archive-events', { desired: null, reason: 'service_not_running' }),
  row('legacy-events-replay-us-east-2', {
    change: {
      state: 'unconfirmed',
      target: { replicas: 8 },
      since: NOW - 2 * MIN,
      sentAt: NOW - 12 * MIN,
      unconfirmedAt: NOW - 2 * MIN,
      resends: 1,
    },
    verdictDue: { boundary: B, windows: ['business-hours-extended'] },
  }),
  row('billing-events', {
    lastError: { at: NOW, code: 'API_BAD_REQUEST', message: 'BAD_REQUEST: replicas must be between 1 and 10' },
  }),
  row('search-indexer-shadow', {
    change: {
      state: 'sending',
      target: { replicas: 4 },
      since: NOW - 1 * SEC,
      sentAt: NOW - 1 * SEC,
      unconfirmedAt: null,
      resends: 0,
    },
  }),
  row('fraud-signals', { parked: { at: NOW, code: 'API_FORBIDDEN', message: 'x' } }),
  row('new-pipe', {
    platform: { values: {}, state: null, at: null },
    lastDecision: null,
    ageSeconds: null,
    desired: null,
  }),
];

const beat: ReplicaBeat = {
  id: 'replica-1',
  host: 'pipescaler-7d9f8c6b5-x2x9z',
  pid: 41,
  version: '1.2.3',
  startedAt: NOW - 3_600_000,
  at: NOW - 3_000,
  pipes: 12,
  dryRun: false,
};
const KEY_LINE =
  'key default: 9 pipes, reconcile every 10 min (10 per 10 s, reads at most 25 %); a waiting scale-down is sent within 13.3 s, a boundary moving every pipe starts its scale-ups 71.1 s ahead (leadTime auto)';

const text = (wide: boolean, width = 100): string =>
  formatStatusText(FLEET, [beat, { ...beat, id: 'replica-2' }], [KEY_LINE], { wide, width, now: NOW });

const lines = (t: string): string[] => t.trimEnd().split('\n');
/** The table's row of a pipe (a narrow table may have cut its name in the middle). */
const rowOf = (t: string, pipe: string): string => {
  const found = lines(t).find((l) => {
    const name = l.split(/\s{2,}/)[0] ?? '';
    if (name === pipe) return true;
    const [head = '', tail = ''] = name.split('…');
    return name.includes('…') && pipe.startsWith(head) && pipe.endsWith(tail);
  });
  if (found === undefined) throw new Error(`no row for ${pipe}`);
  return found;
};

describe('status of a realistic fleet', () => {
  it('narrow: every line within 100 columns; overrides, pauses and changes on their way whole', () => {
    const t = text(false);
    for (const l of lines(t)) expect(l.length, l).toBeLessThanOrEqual(100);
    expect(lines(t)[2]).toMatch(/^PIPE\s+PLATFORM\s+READ\s+CHANGE\s+STATUS$/);
    // a name cut in the middle still tells the pipes apart
    const names = lines(t)
      .slice(3, 3 + FLEET.length)
      .map((l) => l.split(/\s{2,}/)[0]);
    expect(new Set(names).size).toBe(FLEET.length);
    for (const n of names) if (n!.includes('…')) expect(n!.length).toBeGreaterThanOrEqual(12);
    const cells: Record<string, RegExp> = {
      'orders-events-eu-central-1': /\s6x1000m\/4GB\s+9s\s+2x500m\/2GB outcome unknown 15s\s+ok$/,
      'orders-events-eu-west-1': /\s6x1000m\/4GB\s+9s\s+8x1000m\/4GB confirming 45s\s+override 8 repl\b/,
      'clickstream-enrichment-backfill': /\sStopped\s+4m\s+6x1000m\/4GB wanted\s+paused \(all pipes\)/,
      'payments-ledger-replay': /\s7x1000m\/4GB\s+20s\s+6x1000m\/4GB wanted\s+held by hand 7 repl\b/,
      'payments-ledger-replay-eu': /\s=\s+floor by hand >= 3 repl\b/,
      'nightly-s3-archive-export': /\sconc 2\s+2m\s+conc 4 wanted\s+cooldown$/,
      'archive-events': /\s-\s+service_not_running$/,
      'legacy-events-replay-us-east-2': /\s8x1000m\/4GB unconfirmed 2m\s+ok$/,
      'billing-events': /\s=\s+error API_BAD_REQUEST$/,
      'search-indexer-shadow': /\s4x1000m\/4GB sending 1s\s+ok$/,
      'fraud-signals': /\s=\s+parked API_FORBIDDEN$/,
      'new-pipe': /^new-pipe\s+-\s+-\s+-\s+ok$/,
    };
    for (const [pipe, cell] of Object.entries(cells)) expect(rowOf(t, pipe), pipe).toMatch(cell);
  });

  it('narrow, wider: the whole names, then the key, the window, the decision and the verdict where they fit whole', () => {
    const t = text(false, 200);
    for (const l of lines(t)) expect(l.length, l).toBeLessThanOrEqual(200);
    expect(lines(t)[2]).toMatch(/^PIPE\s+KEY\s+PLATFORM\s+READ\s+CHANGE\s+WINDOW\s+DECIDED\s+VERDICT\s+STATUS$/);
    expect(t).toMatch(/^orders-events-eu-west-1\s.*\soverride 8 repl \(2h left\): incident 4711: consumer…$/m);
    expect(t).toMatch(/^clickstream-enrichment-backfill\s+batch-1 \(pool batch\)\s+Stopped\s/m);
    expect(text(false, 250)).toMatch(
      /\spaused \(all pipes\), 90m left: migration to the new cluster, see TICKET-1234$/m,
    );
    // a column that would be cut is left out, never cut
    const mid = text(false, 150);
    for (const l of lines(mid)) expect(l.length, l).toBeLessThanOrEqual(150);
    expect(lines(mid)[2]).toMatch(/^PIPE\s+KEY\s+PLATFORM\s+READ\s+CHANGE\s+DECIDED\s+VERDICT\s+STATUS$/);
    for (const s of FLEET) expect(mid).toMatch(new RegExp(`^${s.pipe}\\s`, 'm'));
  });

  it('--wide: every line within 160 columns, every name whole, the instants and texts on the pipe lines', () => {
    const t = text(true);
    for (const l of lines(t)) expect(l.length, l).toBeLessThanOrEqual(160);
    expect(lines(t)[4]).toMatch(/^PIPE\s+KEY\s+PLATFORM\s+READ\s+CHANGE\s+VERDICT\s+STATUS$/);
    for (const s of FLEET) expect(t).toMatch(new RegExp(`^${s.pipe}\\s`, 'm'));
    expect(t).toContain(
      '    change: replicas=2 replicaCpuMillicores=500 replicaMemoryGb=2 outcome unknown since 2026-11-23T09:59:45.000Z (API_TIMEOUT), sent 2026-11-23T09:59:45.000Z',
    );
    expect(t).toContain(
      '    platform: replicas=6 replicaCpuMillicores=1000 replicaMemoryGb=4 (stream, Running), read 2026-11-23T09:59:51.000Z',
    );
    expect(t).toContain('    change: replicas=8 confirming, sent 2026-11-23T09:59:15.000Z');
    expect(t).toContain(
      '    change: replicas=8 unconfirmed since 2026-11-23T09:58:00.000Z, sent 2026-11-23T09:48:00.000Z, sent again',
    );
    expect(t).toContain(
      '    status: override replicas=8 until 2026-11-23T12:00:00.000Z: incident 4711: consumer lag on the eu-west cluster, see the incident channel',
    );
    expect(t).toContain(
      '    status: paused (all pipes) until 2026-11-23T11:30:00.000Z: migration to the new cluster, see TICKET-1234',
    );
    expect(t).toContain('    status: floor (by hand) >= replicas=3 until 2026-11-23T12:00:00.000Z: manual');
    expect(t).toContain('    status: error API_BAD_REQUEST: replicas must be between 1 and 10');
    expect(t).toContain('    platform: - (stream, Running), never read');
  });
});
