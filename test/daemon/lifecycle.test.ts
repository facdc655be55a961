// The pipe lifecycle as a table (docs/architecture.md#a-pipes-lifecycle), pinned without Redis or
// HTTP: given a stored record, a situation and an instant, the stage and the next step; given an
// answer, what the record becomes and what comes next. The safety invariants are checked here too.
import { describe, expect, it } from 'vitest';
import type { PipeScaling } from '../../src/api/index.js';
import { afterEndpoint, afterFailure, afterRead, afterSentChange } from '../../src/daemon/lifecycle-answers.js';
import { nextStep, stageOf, turnInstant, type Situation } from '../../src/daemon/lifecycle.js';
import { unsafeChange } from '../../src/daemon/safety.js';
import { parseRecord, refOf, type PipeRecord } from '../../src/daemon/state-store.js';
import { demoPipe, oneOff, policy } from './helpers.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const pipe = demoPipe('orders-events', 'streams');
const REF = refOf(pipe);
const STREAMS = { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const EMPTY = parseRecord({}).rec;

const sit = (over: Partial<Situation> = {}): Situation => ({
  pipe,
  policy: policy('streams', STREAMS, [oneOff('peak', T0 + 10 * MIN, T0 + 20 * MIN, { replicas: 6 })]),
  dryRun: false,
  pause: null,
  service: { state: 'running', at: T0 - MIN },
  serviceTrustMs: 30 * MIN,
  reconcileMs: 30 * MIN,
  readDueAfterMs: 30 * MIN,
  stateLost: null,
  asker: 'tick',
  ...over,
});

/** A pipe read at T0 - MIN: Running, at the baseline (its next read due 30 min later). */
const seen = (over: Partial<PipeRecord> = {}): PipeRecord => ({
  ...EMPTY,
  kind: 'stream',
  state: 'Running',
  applied: STREAMS,
  lastApplied: STREAMS,
  lastReadAt: T0 - MIN,
  ref: REF,
  ...over,
});

const error = (code: string, at = T0 - MIN) => ({ at, code, message: 'x' });

describe('nextStep: the stage and the step of every kind of record', () => {
  const IN_WINDOW = T0 + 11 * MIN;
  const cases: [string, PipeRecord, Partial<Situation>, number, string, object][] = [
    ['never seen: read first', EMPTY, {}, IN_WINDOW, 'unseen', { do: 'read', why: 'first_contact' }],
    [
      'never seen, its first read refused: wait the period out',
      { ...EMPTY, lastError: error('API_NOT_FOUND') },
      {},
      T0,
      'refused',
      { do: 'wait', reason: 'refused' },
    ],
    [
      'never seen, while Redis state is lost: still a read',
      EMPTY,
      { stateLost: 'data_lost' },
      T0,
      'unseen',
      { do: 'read', why: 'first_contact' },
    ],
    [
      "a change's outcome unknown: read to settle it, no other change",
      seen({ unsettled: { sent: { replicas: 6 }, at: T0, code: 'API_TIMEOUT' } }),
      {},
      IN_WINDOW,
      'unsettled',
      { do: 'read', why: 'settle' },
    ],
    [
      'settled by a read since: decided as usual',
      seen({ unsettled: { sent: { replicas: 6 }, at: T0, code: 'API_TIMEOUT' }, lastReadAt: T0 + MIN }),
      {},
      IN_WINDOW,
      'seen',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      'a record that names no ids: read first',
      seen({ ref: null }),
      {},
      IN_WINDOW,
      'unseen',
      { do: 'read', why: 'first_contact' },
    ],
    ['ids changed by a reload: forget', seen({ ref: 'other/ids/here' }), {}, T0, 'moved', { do: 'forget' }],
    ['parked', seen({ parked: error('API_UNAUTHORIZED') }), {}, T0, 'parked', { do: 'skip', reason: 'parked' }],
    [
      'endpoints to read',
      seen({ endpointsDue: ['ep-1', 'ep-2'] }),
      {},
      T0,
      'endpoints',
      { do: 'read_endpoint', endpointId: 'ep-1' },
    ],
    ['seen, at target', seen(), {}, T0, 'seen', { do: 'wait', reason: 'at_target' }],
    [
      'seen, the window opens: change',
      seen(),
      {},
      IN_WINDOW,
      'seen',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      "seen, the service's state unknown: list it first",
      seen(),
      { service: null },
      IN_WINDOW,
      'seen',
      { do: 'list_services', direction: 'up' },
    ],
    [
      'seen, the service idles: skip',
      seen(),
      { service: { state: 'idle', at: T0 } },
      IN_WINDOW,
      'seen',
      { do: 'skip', reason: 'service_not_running' },
    ],
    [
      'Stopped: skip, no change',
      seen({ state: 'Stopped' }),
      {},
      IN_WINDOW,
      'unscalable',
      { do: 'skip', reason: 'pipe_state' },
    ],
    [
      'Completed: skip',
      seen({ state: 'Completed' }),
      {},
      IN_WINDOW,
      'unscalable',
      { do: 'skip', reason: 'pipe_state' },
    ],
    [
      'state unknown to the client: skip',
      seen({ state: null }),
      {},
      IN_WINDOW,
      'unscalable',
      { do: 'skip', reason: 'pipe_state' },
    ],
    [
      'Stopped, reconcile due: read',
      seen({ state: 'Stopped', readDue: true }),
      {},
      IN_WINDOW,
      'unscalable',
      { do: 'read', why: 'reconcile' },
    ],
    ['paused: skip', seen(), { pause: { reason: 'incident' } }, IN_WINDOW, 'seen', { do: 'skip', reason: 'paused' }],
    ['dry run: wait', seen(), { dryRun: true }, IN_WINDOW, 'seen', { do: 'wait', reason: 'dry_run' }],
    [
      'Redis state lost: wait',
      seen(),
      { stateLost: 'data_lost' },
      IN_WINDOW,
      'seen',
      { do: 'wait', reason: 'state_lost' },
    ],
    [
      'refused within the period: wait',
      seen({ lastError: error('API_FAILED_DEPENDENCY') }),
      {},
      IN_WINDOW,
      'refused',
      { do: 'wait', reason: 'refused' },
    ],
    [
      'refused, reconcile due: read',
      seen({ lastError: error('API_BAD_REQUEST'), readDue: true }),
      {},
      IN_WINDOW,
      'refused',
      { do: 'read', why: 'reconcile' },
    ],
    [
      'refused a period ago: change again',
      seen({ lastError: error('API_NOT_FOUND', T0 - 31 * MIN), lastReadAt: T0 }),
      {},
      IN_WINDOW,
      'seen',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      'reconcile due, nothing to change: read',
      seen({ lastReadAt: T0 - 31 * MIN }),
      {},
      T0,
      'seen',
      { do: 'read', why: 'reconcile' },
    ],
    [
      'due by time at a turn, not marked by an evaluation: no read (reads go round once per tick)',
      seen({ lastReadAt: T0 - 31 * MIN }),
      { asker: 'turn' },
      T0,
      'seen',
      { do: 'wait', reason: 'at_target' },
    ],
    [
      'marked due, at a turn: read',
      seen({ readDue: true }),
      { asker: 'turn' },
      T0,
      'seen',
      { do: 'read', why: 'reconcile' },
    ],
    [
      'a change and a due read: the change (its answer is the read)',
      seen({ readDue: true }),
      {},
      IN_WINDOW,
      'seen',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      'bounds narrowed by a reload below the window: the bound, never more',
      seen(),
      { pipe: { ...pipe, bounds: { replicas: { max: 4 } } } },
      IN_WINDOW,
      'seen',
      { do: 'change', body: { replicas: 4 }, direction: 'up' },
    ],
  ];
  it.each(cases)('%s', (_name, rec, over, now, stage, step) => {
    const next = nextStep(rec, sit(over), now);
    expect(next.stage).toBe(stage);
    expect(next.step).toEqual(step);
    expect(stageOf(rec, sit(over), now)).toBe(stage);
  });

  it('a turn never decides as of an instant older than the newest decision', () => {
    expect(turnInstant(seen({ decidedAt: T0 + 5_000 }), T0)).toBe(T0 + 5_000);
    expect(turnInstant(seen({ decidedAt: T0 }), T0 + 5_000)).toBe(T0 + 5_000);
  });
});

describe('the safety invariants before a PATCH', () => {
  const body = { replicas: 6 };
  const cases: [string, PipeRecord, Partial<Situation>, object, string | null][] = [
    ['a pipe never seen', EMPTY, {}, body, 'unseen'],
    ['a pipe seen Stopped', seen({ state: 'Stopped' }), {}, body, 'pipe_state'],
    ['a pipe seen Paused', seen({ state: 'Paused' }), {}, body, 'pipe_state'],
    ['a pipe whose record is of other ids', seen({ ref: 'x/y/z' }), {}, body, 'ids_changed'],
    [
      'a pipe whose last change has an unknown outcome',
      seen({ unsettled: { sent: body, at: T0, code: 'API_TIMEOUT' } }),
      {},
      body,
      'unsettled',
    ],
    ['a paused pipe', seen(), { pause: { reason: 'r' } }, body, 'paused'],
    ['a pause that has expired', seen(), { pause: { reason: 'r', until: T0 - 1 } }, body, null],
    ['an endpoint not Ready', seen({ endpoints: { e: 'Provisioning' } }), {}, body, 'endpoint_not_ready'],
    ['an idle service', seen(), { service: { state: 'idle', at: T0 } }, body, 'service_not_running'],
    ['a field of another kind', seen(), {}, { concurrency: 4 }, 'field_of_other_kind'],
    ['over the platform range', seen(), {}, { replicas: 11 }, 'out_of_bounds'],
    ['over the pipe bound', seen(), { pipe: { ...pipe, bounds: { replicas: { max: 5 } } } }, body, 'out_of_bounds'],
    ['a newer decision is stored', seen({ decidedAt: T0 + 1 }), {}, body, 'superseded'],
    ['all well', seen(), {}, body, null],
  ];
  it.each(cases)('%s', (_name, rec, over, b, violation) => {
    expect(unsafeChange(rec, sit(over), b, T0)).toBe(violation);
  });
});

describe('what an answer makes of the record', () => {
  const running = (values: Partial<PipeScaling>, endpointIds: string[] = []) => ({
    kind: 'stream' as const,
    state: 'Running' as const,
    scaling: { concurrency: null, ...values } as PipeScaling,
    endpointIds,
  });
  const ctx = { ref: REF, continuousReads: false, dryRun: false };

  it('a first read: the pipe is seen, and decided at once', () => {
    const t = afterRead(EMPTY, running(STREAMS), T0, ctx);
    expect(t.write).toMatchObject({
      kind: 'stream',
      state: 'Running',
      applied: STREAMS,
      lastApplied: STREAMS,
      lastReadAt: T0,
      ref: REF,
    });
    expect(t.next).toEqual({ then: 'evaluate' });
    expect(t.drift).toBeNull();
  });

  it('a first read naming endpoints: they are read next', () => {
    const t = afterRead(EMPTY, running(STREAMS, ['ep-1']), T0, ctx);
    expect(t.write.endpointsDue).toEqual(['ep-1']);
    expect(t.next).toEqual({ then: 'read' });
  });

  it('a reconcile read finding other values: drift, the desire dropped, decided again', () => {
    const t = afterRead(seen(), running({ ...STREAMS, replicas: 5 }), T0, ctx);
    expect(t.drift).toEqual({ expected: STREAMS, actual: { ...STREAMS, replicas: 5 } });
    expect(t.write.desired).toBeNull();
    expect(t.next).toEqual({ then: 'evaluate' });
  });

  it('a reconcile read with a desire waiting: the change gets its turn', () => {
    const t = afterRead(seen({ desired: { ...STREAMS, replicas: 6 } }), running(STREAMS), T0, ctx);
    expect(t.next).toEqual({ then: 'change', up: true });
  });

  it('a transient null after a change is not drift', () => {
    const t = afterRead(seen(), running({ replicas: 3, replicaCpuMillicores: null, replicaMemoryGb: null }), T0, ctx);
    expect(t.drift).toBeNull();
    expect(t.write.applied).toEqual(STREAMS);
  });

  it("a change's answer: applied, stamped, and a field not sent that moved is drift", () => {
    const t = afterSentChange(
      seen(),
      running({ ...STREAMS, replicas: 6, replicaMemoryGb: 4 }),
      { replicas: 6 },
      T0,
      REF,
    );
    expect(t.write).toMatchObject({ applied: { ...STREAMS, replicas: 6, replicaMemoryGb: 4 }, lastChange: { up: T0 } });
    expect(t.drift).toEqual({ expected: { replicaCpuMillicores: 500, replicaMemoryGb: 2 }, actual: t.write.applied });
    expect(t.next).toEqual({ then: 'evaluate' });
  });

  it('a change of unknown outcome found by a read: it landed late, not drift', () => {
    const rec = seen({ unsettled: { sent: { replicas: 6 }, at: T0, code: 'API_TIMEOUT' } });
    const t = afterRead(rec, running({ ...STREAMS, replicas: 6 }), T0 + MIN, ctx);
    expect(t.drift).toBeNull();
    expect(t.landed).toEqual({ sent: { replicas: 6 }, at: T0 });
    expect(t.write).toMatchObject({
      unsettled: null,
      lastApplied: { ...STREAMS, replicas: 6 },
      lastChange: { up: T0 },
    });
  });

  it('not there yet: still unsettled for a while, and found later it is still no drift', () => {
    const rec = seen({ unsettled: { sent: { replicas: 6 }, at: T0, code: 'API_TIMEOUT' } });
    const first = afterRead(rec, running(STREAMS), T0 + MIN, ctx);
    expect(first.drift).toBeNull();
    expect(first.write.unsettled).toBeUndefined();
    const later = afterRead({ ...rec, lastReadAt: T0 + MIN }, running({ ...STREAMS, replicas: 6 }), T0 + 5 * MIN, ctx);
    expect(later.drift).toBeNull();
    expect(later.landed).toBeDefined();
    // Past the time a request may still land, the values are someone else's: drift.
    const stale = afterRead({ ...rec, lastReadAt: T0 + MIN }, running(STREAMS), T0 + 16 * MIN, ctx);
    expect(stale.write.unsettled).toBeNull();
  });

  it("an endpoint's status: the next one, then a decision", () => {
    const rec = seen({ endpointsDue: ['a', 'b'] });
    expect(afterEndpoint(rec, 'a', 'Ready')).toMatchObject({ write: { endpointsDue: ['b'] }, next: { then: 'read' } });
    expect(afterEndpoint(seen({ endpointsDue: ['b'] }), 'b', 'Ready').next).toEqual({ then: 'evaluate' });
  });

  it('failures: a refusal holds the pipe, 401/403 in a row park it', () => {
    expect(afterFailure(error('API_NOT_FOUND'), 0, 3)).toMatchObject({ refused: true, parked: false });
    expect(afterFailure(error('API_UNAUTHORIZED'), 2, 3)).toMatchObject({ parked: false });
    expect(afterFailure(error('API_UNAUTHORIZED'), 3, 3)).toMatchObject({
      parked: true,
      write: { parked: error('API_UNAUTHORIZED') },
    });
  });
});
