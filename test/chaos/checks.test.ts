// The chaos run's checks (bench/chaos/checks/) over hand-made records: the observer's PATCHes,
// the replicas' audit lines and the history, each check passing and failing.
import { describe, expect, it } from 'vitest';
import {
  auditRecords,
  changes200,
  checkFailures,
  historyVsAnswers,
  keyRequests,
  ownDrift,
  placeLimited,
  realLimited,
  refusedRequest,
  recordedOnce,
  verdictsVsAnswers,
  type AuditRecord,
  type ChaosChecks,
  type RestartEvent,
} from '../../bench/chaos/checks/index.js';
import { keyIdOf, shownScaling, type SentPatch, type SentRequest } from '../../bench/chaos/observer.js';
import type { LimitedRequest } from '../../src/cloud/index.js';
import type { HistoryEntry } from '../../src/history/index.js';

const T = Date.UTC(2026, 10, 28, 5, 0, 0);
const PIPES = [
  { name: 'p1', pipeId: 'AAAA-1' },
  { name: 'p2', pipeId: 'aaaa-2' },
];

function patch(o: Partial<SentPatch> & { at: number }): SentPatch {
  return {
    pipeId: 'aaaa-1',
    keyId: 'k',
    body: {},
    idempotencyKey: undefined,
    status: 200,
    answeredAt: o.at + 300,
    ...o,
  };
}

const change = (at: number, key: string, replicas: number, status: SentPatch['status'] = 200, pipeId = 'aaaa-1') =>
  patch({ at, pipeId, body: { replicas }, idempotencyKey: key, status, shown: { replicas } });
const read = (at: number, replicas: number, pipeId = 'aaaa-1') => patch({ at, pipeId, shown: { replicas } });

const applied = (pipe: string, key: string, time: number, extra: Partial<AuditRecord> = {}): AuditRecord =>
  ({ kind: 'applied', replica: 'a', time, pipe, idempotencyKey: key, ...extra }) as AuditRecord;
const landed = (pipe: string, key: string, time: number): AuditRecord => ({
  kind: 'landed_late',
  replica: 'b',
  time,
  pipe,
  idempotencyKey: key,
});

const unknown = (pipe: string, key: string, time: number): AuditRecord => ({
  kind: 'outcome_unknown',
  replica: 'b',
  time,
  pipe,
  idempotencyKey: key,
});

function entry(outcome: string, count = 1): HistoryEntry {
  return { pipe: 'p1', outcome, reason: 'window', first: T, last: T, count };
}

describe('auditRecords', () => {
  it('reads applied, landed_late, verdict and drift lines, and skips the rest', () => {
    const lines = [
      'not json',
      JSON.stringify({ level: 30, time: '2026-11-28T05:00:01.000Z', msg: 'tick' }),
      JSON.stringify({
        level: 30,
        time: '2026-11-28T05:00:01.000Z',
        audit: true,
        pipe: 'p1',
        result: 'applied',
        after: { replicas: 10 },
        idempotencyKey: 'k1',
        msg: 'scaling applied',
      }),
      JSON.stringify({
        level: 30,
        time: '2026-11-28T05:00:02.000Z',
        audit: true,
        pipe: 'p1',
        result: 'applied',
        idempotencyKey: 'k2',
        outcomeReported: 'landed_late',
        msg: 'scaling applied',
      }),
      JSON.stringify({
        level: 40,
        time: '2026-11-28T05:00:03.000Z',
        audit: true,
        pipe: 'p1',
        result: 'landed_late',
        idempotencyKey: 'k2',
        after: { replicas: 1 },
        msg: 'scaling landed late',
      }),
      JSON.stringify({
        level: 40,
        time: '2026-11-28T05:00:04.000Z',
        audit: true,
        pipe: 'p2',
        verdict: 'missed',
        boundary: '2026-11-28T05:00:00.000Z',
        target: { replicas: 10 },
        reason: 'not_confirmed',
        msg: 'window verdict missed',
      }),
      JSON.stringify({
        level: 40,
        time: '2026-11-28T05:00:05.000Z',
        pipe: 'p2',
        expected: { replicas: 1 },
        actual: { replicas: 10 },
        msg: 'pipe scaling drifted from what was applied',
      }),
      JSON.stringify({ level: 30, time: '2026-11-28T05:00:06.000Z', audit: true, pipe: 'p2', result: 'skipped' }),
    ];
    expect(auditRecords(lines, 'a')).toEqual([
      { kind: 'applied', replica: 'a', time: T + 1_000, pipe: 'p1', idempotencyKey: 'k1', after: { replicas: 10 } },
      {
        kind: 'applied',
        replica: 'a',
        time: T + 2_000,
        pipe: 'p1',
        idempotencyKey: 'k2',
        after: {},
        outcomeReported: 'landed_late',
      },
      { kind: 'landed_late', replica: 'a', time: T + 3_000, pipe: 'p1', idempotencyKey: 'k2', after: { replicas: 1 } },
      {
        kind: 'verdict',
        replica: 'a',
        time: T + 4_000,
        pipe: 'p2',
        verdict: 'missed',
        boundary: T,
        target: { replicas: 10 },
        reason: 'not_confirmed',
      },
      {
        kind: 'drift',
        replica: 'a',
        time: T + 5_000,
        pipe: 'p2',
        expected: { replicas: 1 },
        actual: { replicas: 10 },
      },
    ]);
  });
});

describe('the observer', () => {
  it("reads a scaling answer's values as the client does: quantities, and no 0/null of a settling change", () => {
    const body = (scaling: Record<string, unknown>) =>
      JSON.stringify({ status: 200, requestId: 'r1', result: { id: 'x', scaling } });
    expect(shownScaling(body({ replicas: 3, replicaCpuMillicores: '500m', replicaMemoryGb: '1536Mi' }))).toEqual({
      shown: { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 1.5 },
      requestId: 'r1',
    });
    expect(shownScaling(body({ replicas: 3, replicaCpuMillicores: 0, replicaMemoryGb: null }))?.shown).toEqual({
      replicas: 3,
    });
    expect(shownScaling(body({ concurrency: 0 }))?.shown).toEqual({ concurrency: 0 });
    expect(shownScaling('{"error":"TOO_MANY_REQUESTS"}')).toBeNull();
    expect(shownScaling('not json')).toBeNull();
  });

  it('takes the key id from the Basic Authorization header', () => {
    expect(keyIdOf(`Basic ${Buffer.from('key-1:secret').toString('base64')}`)).toBe('key-1');
    expect(keyIdOf(undefined)).toBeUndefined();
    expect(keyIdOf('Bearer x')).toBeUndefined();
  });
});

describe('1. real 429s per key', () => {
  it('names the keys, counting a key with none as 0', () => {
    expect(realLimited({ id2: 3 }, { id1: 'default', id2: 'k2' })).toEqual({
      total: 3,
      perKey: { default: 0, k2: 3 },
      examples: [],
    });
    expect(realLimited({}, { id1: 'default' })).toEqual({ total: 0, perKey: { default: 0 }, examples: [] });
  });

  it("places each 429 the cloud kept in its key's window: the request, its replica, the key's requests by replica", () => {
    const scaling = '/v1/organizations/o/services/s/pipes/p1/scaling';
    const req = (at: number, replica: string, status: SentRequest['status'], o: Partial<SentRequest> = {}) => ({
      at,
      replica,
      keyId: 'id2',
      method: 'PATCH',
      path: scaling,
      status,
      ...o,
    });
    const requests: SentRequest[] = [
      req(T - 10, 'c', 200), // before the window
      req(T, 'a', 200),
      req(T + 100, 'b', 503),
      req(T + 200, 'a#2', 200, { method: 'GET', path: '/v1/organizations/o/services' }),
      req(T + 250, 'b', 200, { keyId: 'id1' }), // another key
      req(T + 300, 'a#2', 429),
      req(T + 310, 'b', 429), // the refused one: same key, method and path, the last before the cloud's instant
      req(T + 400, 'c', 200), // after it
    ];
    const refused: LimitedRequest = {
      keyId: 'id2',
      at: T + 311,
      windowStart: T,
      method: 'PATCH',
      path: scaling,
      requestId: 'rq-1',
    };
    expect(refusedRequest(refused, requests)?.replica).toBe('b');
    expect(keyRequests(requests, 'id2', T, T + 311)).toHaveLength(5);
    const c = realLimited({ id2: 1 }, { id1: 'default', id2: 'k2' }, [refused], requests);
    expect(c.examples).toEqual([
      'k2 at 05:00:00.311: PATCH …/pipes/p1/scaling (request rq-1) by b; window from 05:00:00.000: 5 requests of ' +
        'the key reached the observer in it (by replica: a 1, b 2, a#2 2; answered: 200 2, 503 1, 429 2)',
    ]);
    // without the observer's record: the replica unknown
    expect(placeLimited(refused, {}, [])).toContain('(request rq-1) by ?; window from 05:00:00.000: 0 requests');
  });
});

describe('2. every change answered 200 recorded once', () => {
  it('counts one line per Idempotency-Key: applied, or landed_late; a late 200 after landed_late is not a second', () => {
    const patches = [
      change(T, 'k1', 10),
      change(T + 1_000, 'k2', 1, 500),
      change(T + 2_000, 'k2', 1), // the retry of k2 answered
      change(T + 3_000, 'k3', 10), // its replica was killed: settled by a read
      change(T + 4_000, 'k4', 1, 'reset'),
      read(T + 5_000, 1),
    ];
    const audit = [
      applied('p1', 'k1', T + 400),
      applied('p1', 'k2', T + 2_400),
      landed('p1', 'k3', T + 20_000),
      applied('p1', 'k3', T + 21_000, { outcomeReported: 'landed_late' }),
      landed('p1', 'k4', T + 30_000), // no 200: not a change of this check
    ];
    const c = recordedOnce(patches, audit, PIPES);
    expect(c).toMatchObject({
      answered: 3,
      once: 3,
      missingCount: 0,
      twiceCount: 0,
      landedLate: 1,
      without200: 1,
    });
  });

  it("counts an outcome_unknown line as the change's record only when no line of its outcome names the key", () => {
    const patches = [change(T, 'k1', 10), change(T + 1_000, 'k2', 10)];
    const audit = [
      unknown('p1', 'k1', T + 20_000), // its sender killed; the read could not tell whether it landed
      unknown('p1', 'k2', T + 20_000),
      applied('p1', 'k2', T + 21_000), // k2's late 200 came after all: its line is the record
    ];
    expect(recordedOnce(patches, audit, PIPES)).toMatchObject({
      answered: 2,
      once: 2,
      missingCount: 0,
      twiceCount: 0,
      outcomeUnknown: 1,
    });
  });

  it('finds a 200 with no line, and one counted twice', () => {
    const patches = [change(T, 'k1', 10), change(T + 1_000, 'k2', 1)];
    const c = recordedOnce(patches, [applied('p1', 'k2', T + 1_400), landed('p1', 'k2', T + 9_000)], PIPES);
    expect(c).toMatchObject({ answered: 2, once: 0, missingCount: 1, twiceCount: 1 });
    expect(c.missing[0]).toMatch(/^p1 \{"replicas":10\} key k1 sent 05:00:00.000 answered 05:00:00.300$/);
    expect(c.twice[0]).toMatch(/key k2 .*: applied by a at 05:00:01.400, landed_late by b at 05:00:09.000$/);
  });

  it('sets apart a 200 that reached no replica (its sender killed) and whose intent an empty Redis restart took', () => {
    const kill = { replica: 'a', at: T + 800 };
    const wipe: RestartEvent = { kind: 'empty', downAt: T + 12_000, upAt: T + 13_000 };
    const patches = [
      patch({ ...change(T, 'k1', 10), replica: 'a' }), // answered at +300, well before the kill: its line is owed
      patch({ ...change(T + 100, 'k2', 10), replica: 'a', answeredAt: T + 900 }), // answered to no process
      patch({ ...change(T + 200, 'k3', 10), replica: 'b', answeredAt: T + 900 }), // b was alive
      patch({ ...change(T + 300, 'k4', 10, 200, 'aaaa-2'), replica: 'a', answeredAt: T + 1_000 }),
    ];
    const c = recordedOnce(patches, [landed('p2', 'k4', T + 11_000)], PIPES, { kill, restarts: [wipe] });
    expect(c).toMatchObject({ answered: 4, once: 1, missingCount: 2, unreceived: 1 });
    expect(c.missing.map((m) => /key (\S+)/.exec(m)?.[1])).toEqual(['k1', 'k3']);
    expect(c.unreceivedExamples[0]).toMatch(/^p1 \{"replicas":10\} key k2 sent 05:00:00.100 answered 05:00:00.900/);
    // with its data kept, the intent stays and a read settles it: a missing line is missing
    expect(recordedOnce(patches, [], PIPES, { kill, restarts: [{ ...wipe, kind: 'keep' }] })).toMatchObject({
      missingCount: 4,
      unreceived: 0,
    });
    // a wipe long after the answer: a read should have settled it before
    const late: RestartEvent = { kind: 'empty', downAt: T + 120_000, upAt: T + 121_000 };
    expect(recordedOnce(patches, [], PIPES, { kill, restarts: [late] })).toMatchObject({
      missingCount: 4,
      unreceived: 0,
    });
  });

  it('sets apart a 200 handed to its sender just before the SIGKILL, still on its way to its record', () => {
    // a fresh-clone run (empty restart, seed 6): objects-30 answered at 22.294, replica a killed at 22.300
    const kill = { replica: 'a', at: T + 6 };
    const wipe: RestartEvent = { kind: 'empty', downAt: T + 12_000, upAt: T + 13_000 };
    const patches = [
      patch({ ...change(T - 400, 'k1', 10), replica: 'a', answeredAt: T }), // 6 ms before the kill
      patch({ ...change(T - 900, 'k2', 10), replica: 'a', answeredAt: T - 500 }), // 506 ms before: owed
    ];
    const c = recordedOnce(patches, [], PIPES, { kill, restarts: [wipe] });
    expect(c).toMatchObject({ answered: 2, missingCount: 1, unreceived: 1 });
    expect(c.missing[0]).toMatch(/key k2 /);
    // with its data kept a read settles it: its line is owed
    expect(recordedOnce(patches, [], PIPES, { kill, restarts: [{ ...wipe, kind: 'keep' }] })).toMatchObject({
      missingCount: 2,
      unreceived: 0,
    });
  });

  it('takes the first 200 of a key once, oldest answer first', () => {
    expect(
      changes200([change(T + 5, 'b', 1), change(T, 'a', 2), change(T + 9, 'a', 2)]).map((p) => p.idempotencyKey),
    ).toEqual(['a', 'b']);
  });
});

describe("3. history's change entries vs the 200s", () => {
  const wipe: RestartEvent = { kind: 'empty', downAt: T + 60_000, upAt: T + 62_000 };

  it('compares each pipe since the last empty restart; a 200 around it counts either way', () => {
    const patches = [
      change(T, 'k1', 10), // before the wipe: its entry went with it
      change(T + 58_000, 'k2', 1), // within the grace: either
      change(T + 70_000, 'k3', 10),
      change(T + 80_000, 'k4', 1),
      change(T + 90_000, 'k5', 10, 200, 'aaaa-2'),
    ];
    const history = new Map<string, HistoryEntry[]>([
      ['p1', [entry('applied'), entry('verdict'), entry('landed_late')]],
      ['p2', [entry('applied'), entry('drift_found')]],
    ]);
    const keep: RestartEvent = { kind: 'keep', downAt: T + 100_000, upAt: T + 101_000 };
    const c = historyVsAnswers(patches, history, PIPES, [wipe, keep]);
    expect(c).toMatchObject({ since: T + 62_000, pipes: 2, answered: 3, around: 1, entries: 3, differ: 0 });
    // with k2 as well
    expect(
      historyVsAnswers(
        patches,
        new Map([
          ['p1', [entry('applied', 3)]],
          ['p2', [entry('applied')]],
        ]),
        PIPES,
        [wipe],
      ).differ,
    ).toBe(0);
  });

  it('counts the pipes whose entries are fewer or more than their 200s', () => {
    const patches = [change(T, 'k1', 10), change(T + 10_000, 'k2', 1), change(T, 'k3', 10, 200, 'aaaa-2')];
    const c = historyVsAnswers(
      patches,
      new Map([
        ['p1', [entry('applied')]],
        ['p2', [entry('applied', 2)]],
      ]),
      PIPES,
      [],
    );
    expect(c).toMatchObject({ since: null, answered: 3, entries: 3, differ: 2 });
    expect(c.examples).toEqual([
      'p1: 1 change entries, 2 changes answered 200',
      'p2: 2 change entries, 1 changes answered 200',
    ]);
  });
});

describe('4. verdicts vs the answers', () => {
  const verdict = (v: string, boundary: number, target: number, extra: Partial<AuditRecord> = {}): AuditRecord =>
    ({
      kind: 'verdict',
      replica: 'a',
      time: boundary + 20_000,
      pipe: 'p1',
      verdict: v,
      boundary,
      target: { replicas: target },
      ...extra,
    }) as AuditRecord;

  it('holds a missed whose target the last answer before the boundary showed, a met none showed, and two verdicts of a start', () => {
    const B = T + 10_000;
    const patches = [read(T, 10), read(T + 30_000, 1)];
    const audit = [
      verdict('missed', B, 1, { reason: 'not_confirmed' }), // 10 >= 1 was shown at T
      verdict('met', B + 20_000, 10), // the last answer before showed 10: supported
      verdict('met', B + 40_000, 10), // the last answer before (T + 30 s) showed 1
      verdict('late', B + 40_000, 10),
      verdict('missed', B + 60_000, 10, { reason: 'superseded' }), // shown 1: a fair miss
      verdict('excluded', B + 60_000, 1, { reason: 'state_lost' }),
    ];
    const c = verdictsVsAnswers(patches, audit, PIPES, []);
    expect(c).toMatchObject({
      given: { missed: 2, met: 2, late: 1, excluded: 1 },
      missedShown: 1,
      metUnshown: 1,
      twice: 2,
      afterWipe: 0,
    });
    expect(c.examples[0]).toBe(
      'p1 start 05:00:10.000 target {"replicas":1} (by a): missed (not_confirmed), yet the answer at 05:00:00.300 showed {"replicas":10}',
    );
  });

  it('does not hold a missed against an answer a change on its way (the propagation) made stale', () => {
    const B = T + 10_000;
    // the change to 1 answered at T + 5.3 s shows the old 10; it takes effect 3 s later
    const patches = [read(T, 10), change(T + 5_000, 'k1', 1)];
    patches[1] = { ...patches[1]!, shown: { replicas: 10 } };
    const missed = [verdict('missed', B, 10, { reason: 'superseded' })];
    expect(verdictsVsAnswers(patches, missed, PIPES, [], { propagationMs: 3_000 }).missedShown).toBe(0);
    // without a propagation the change's own answer shows what is in force
    expect(verdictsVsAnswers(patches, missed, PIPES, []).missedShown).toBe(1);
  });

  it('holds a met against our own change down its answer could not show yet, in force by the boundary', () => {
    // the fleet run's stream pipe: 10 read at B - 29 s; the scale-down to 1 answered 200 at B - 13 s
    // still showing 10, in force 3 s later; the met at B (wanting 10) stood on the read before it
    const B = T + 60_000;
    const down = patch({ at: B - 14_000, answeredAt: B - 13_000, body: { replicas: 1 }, shown: { replicas: 10 } });
    const patches = [read(B - 29_000, 10), { ...down, idempotencyKey: 'k1' }];
    const c = verdictsVsAnswers(patches, [verdict('met', B, 10)], PIPES, [], { propagationMs: 3_000 });
    expect(c.metUnshown).toBe(1);
    // answered too close to the boundary to be in force by it for certain: supported
    const close = { ...down, idempotencyKey: 'k1', at: B - 3_000, answeredAt: B - 2_500 };
    const near = verdictsVsAnswers([patches[0]!, close], [verdict('met', B, 10)], PIPES, [], { propagationMs: 3_000 });
    expect(near.metUnshown).toBe(0);
  });

  it('lets an answer complete just after the boundary support a met (the cloud read it before)', () => {
    const B = T + 10_000;
    const patches = [read(T, 1), patch({ at: B - 250, answeredAt: B + 50, shown: { replicas: 10 } })];
    const c = verdictsVsAnswers(patches, [verdict('met', B, 10)], PIPES, []);
    expect(c.metUnshown).toBe(0);
  });

  it("takes a field an answer left out (a settling change's 0/null) as the answer before showed it, for a met only", () => {
    const B = T + 10_000;
    const patches = [
      patch({ at: T, shown: { replicas: 1, replicaCpuMillicores: 125 } }),
      patch({ at: T + 5_000, shown: { replicas: 1 } }),
    ];
    const target = { replicas: 1, replicaCpuMillicores: 125 };
    const c = verdictsVsAnswers(
      patches,
      [verdict('met', B, 1, { target }), verdict('missed', B, 1, { target })],
      PIPES,
      [],
    );
    expect(c.metUnshown).toBe(0);
    // a missed is held only against what an answer showed: the field it left out may have moved
    expect(c.missedShown).toBe(0);
  });

  it('does not hold a missed against an answer handed to the killed replica after its SIGKILL or just before it', () => {
    // a keep-data run (seed 7): the answer that showed the target went to replica a, SIGKILLed
    // before it could read it; the daemon's last read showed less
    const kill = { replica: 'a', at: T + 1_000 };
    const B = T + 10_000;
    const missed = [verdict('missed', B, 10, { reason: 'not_confirmed' })];
    const shownTo = (replica: string, at: number, answeredAt: number) =>
      patch({ ...read(at, 10), replica, answeredAt });
    const cases: [SentPatch, number][] = [
      [shownTo('a', T + 800, T + 1_500), 0], // answered after the kill: no process read it
      [shownTo('a', T + 500, T + 900), 0], // 100 ms before it: still on its way to the replica
      [shownTo('a', T, T + 300), 1], // 700 ms before it: read
      [shownTo('b', T + 800, T + 1_500), 1], // another replica, alive
      [shownTo('a#2', T + 5_000, T + 5_300), 1], // the restarted replica
    ];
    for (const [answer, held] of cases) {
      const patches = [patch({ ...read(T - 5_000, 1), replica: 'b' }), answer];
      expect(verdictsVsAnswers(patches, missed, PIPES, [], { kill }).missedShown).toBe(held);
      // without the kill every answer counts
      expect(verdictsVsAnswers(patches, missed, PIPES, []).missedShown).toBe(1);
    }
    // a change answered just before the kill whose applied line its sender wrote: read after all
    const recorded = patch({ ...change(T + 500, 'k1', 10), replica: 'a', answeredAt: T + 900 });
    const withLine = [patch({ ...read(T - 5_000, 1), replica: 'b' }), recorded];
    expect(verdictsVsAnswers(withLine, missed, PIPES, [], { kill }).missedShown).toBe(0);
    const line = applied('p1', 'k1', T + 950);
    expect(verdictsVsAnswers(withLine, [...missed, line], PIPES, [], { kill }).missedShown).toBe(1);
    // the last answer no process read showed less: the read one before it no longer tells
    const lower = patch({ ...read(T + 800, 1), replica: 'a', answeredAt: T + 1_500 });
    const stale = [patch({ ...read(T - 5_000, 10), replica: 'b' }), lower];
    expect(verdictsVsAnswers(stale, missed, PIPES, [], { kill }).missedShown).toBe(0);
    // a read answer that showed the target, nothing after it: held
    expect(verdictsVsAnswers(stale.slice(0, 1), missed, PIPES, [], { kill }).missedShown).toBe(1);
  });

  it('counts the verdicts of starts after the last empty restart and their contradictions', () => {
    const wipe: RestartEvent = { kind: 'empty', downAt: T, upAt: T + 2_000 };
    const c = verdictsVsAnswers(
      [read(T + 5_000, 10)],
      [verdict('missed', T + 10_000, 5), verdict('met', T + 1_000, 5)],
      PIPES,
      [wipe],
    );
    expect(c).toMatchObject({ afterWipe: 1, contradictedAfterWipe: 1, missedShown: 1, metUnshown: 1 });
  });
});

describe("5. drift of the daemon's own change", () => {
  const drift = (time: number, actual: number): AuditRecord => ({
    kind: 'drift',
    replica: 'a#2',
    time,
    pipe: 'p1',
    expected: { replicas: 1 },
    actual: { replicas: actual },
  });

  it("finds a drift whose values are the daemon's last change answered 200 before it", () => {
    const patches = [change(T, 'k1', 1), change(T + 10_000, 'k2', 10), change(T + 20_000, 'k3', 4, 503)];
    const c = ownDrift(patches, [drift(T + 15_000, 10), drift(T + 25_000, 4), drift(T + 5_000, 7)], PIPES);
    expect(c).toMatchObject({ reported: 3, own: 1 });
    expect(c.examples[0]).toMatch(/^p1 at 05:00:15.000 \(by a#2\): drift .* key k2 answered 200 at 05:00:10.300$/);
  });
});

describe('checkFailures', () => {
  const clean: ChaosChecks = {
    limited: { total: 0, perKey: { default: 0 }, examples: [] },
    recorded: {
      answered: 1,
      once: 1,
      missing: [],
      missingCount: 0,
      twice: [],
      twiceCount: 0,
      landedLate: 0,
      outcomeUnknown: 0,
      without200: 0,
      unreceived: 0,
      unreceivedExamples: [],
    },
    history: { since: null, pipes: 1, answered: 1, around: 0, entries: 1, differ: 0, examples: [] },
    verdicts: {
      given: { met: 1 },
      afterWipe: 0,
      missedShown: 0,
      metUnshown: 0,
      twice: 0,
      contradictedAfterWipe: 0,
      examples: [],
    },
    drift: { reported: 0, own: 0, examples: [] },
  };

  it('fails nothing on a clean run, and only the checks held', () => {
    expect(checkFailures(clean)).toEqual([]);
    const bad: ChaosChecks = {
      ...clean,
      limited: { total: 2, perKey: { default: 2 }, examples: [] },
      drift: { reported: 1, own: 1, examples: ['p1 at ...'] },
    };
    expect(checkFailures(bad)).toEqual([
      '429s of the real limiter: default 2',
      "drift reported of the daemon's own change: 1:\n    p1 at ...",
    ]);
    expect(checkFailures(bad, ['recorded', 'history'])).toEqual([]);
    const placed = { ...clean, limited: { total: 1, perKey: { k2: 1 }, examples: ['k2 at ...'] } };
    expect(checkFailures(placed)).toEqual(['429s of the real limiter: k2 1:\n    k2 at ...']);
  });
});
