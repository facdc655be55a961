// The pipe lifecycle as a table (docs/architecture.md#a-pipes-lifecycle), pinned without Redis or
// HTTP: given a stored record, a situation and an instant, the stage and the next step; given an
// answer, what the record becomes and what comes next. The safety invariants are checked here too.
import { describe, expect, it } from 'vitest';
import type { PipeScaling } from '../../../src/api/index.js';
import { afterCallFailure } from '../../../src/daemon/lifecycle/backoff.js';
import { afterEndpoint, afterFailure, afterRead, afterSentChange } from '../../../src/daemon/lifecycle/answers.js';
import { nextStep, stageOf, turnInstant } from '../../../src/daemon/lifecycle/next-step.js';
import { unsafeChange } from '../../../src/daemon/lifecycle/safety.js';
import { parseRecord, refOf, type PipeRecord, type Confirming } from '../../../src/daemon/model/record.js';
import { actuationSample, nextDueAt } from '../../../src/daemon/lifecycle/confirmation.js';
import { demoPipe, oneOff, policy } from '../helpers.js';
import { type Situation } from '../../../src/daemon/lifecycle/steps.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const MIN = 60_000;
const pipe = demoPipe('orders-events', 'streams');
const REF = refOf(pipe);
const STREAMS = { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const EMPTY = parseRecord({}).rec;
/** Confirmation reads from 1 min after a change, unconfirmed 10 min after it. */
const TIMING = { expectedMs: MIN, limitMs: 10 * MIN, firstReadMs: 15_000 };

/** A change's intent (unsettled.ts), stored as it goes out at T0 with a request time of 5 s. */
const INTENT = {
  sent: { replicas: 6 },
  at: T0,
  code: 'in_flight',
  id: 'b6d1c0de-0000-4000-8000-000000000001',
  key: 'b6d1c0de-0000-4000-8000-000000000002',
  attempt: 1,
  until: T0 + 5_000,
};

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

const PEAK = { ...STREAMS, replicas: 6 };
/** The window's change, answered 200 at T0 + 10 min and not in force yet. */
const onItsWay = (over: Partial<Confirming> = {}): Confirming => ({
  target: { replicas: 6 },
  sentAt: T0 + 10 * MIN,
  lastSentAt: T0 + 10 * MIN,
  dueAt: T0 + 11 * MIN,
  reads: 0,
  resends: 0,
  notYet: [STREAMS],
  unconfirmedAt: null,
  ...over,
});
/** A pipe whose window change was answered 200 at T0 + 10 min, the platform still at the baseline. */
const sent = (over: Partial<Confirming> = {}, rec: Partial<PipeRecord> = {}): PipeRecord =>
  seen({
    confirming: onItsWay(over),
    lastApplied: PEAK,
    lastReadAt: T0 + 10 * MIN,
    lastChange: { up: T0 + 10 * MIN },
    desired: PEAK,
    ...rec,
  });

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
      "a change's intent stored and its request on its way: its answer is the sender's, nothing meanwhile",
      seen({ unsettled: INTENT }),
      {},
      INTENT.at + 1_000,
      'unsettled',
      { do: 'wait', reason: 'sending' },
    ],
    [
      "a change's intent whose request's time ran out with no answer recorded (the sender gone or stalled): read to settle it",
      seen({ unsettled: INTENT }),
      {},
      INTENT.until,
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
      'a change on its way, its confirmation read not due: wait, never sent again',
      sent({ dueAt: T0 + 12 * MIN }),
      {},
      IN_WINDOW,
      'confirming',
      { do: 'wait', reason: 'confirming' },
    ],
    [
      'its confirmation read due: read (from the read share, ahead of reconcile reads)',
      sent(),
      {},
      IN_WINDOW,
      'confirming',
      { do: 'read', why: 'confirm' },
    ],
    [
      'its confirmation read due at a turn too (not marked by an evaluation)',
      sent(),
      { asker: 'turn' },
      IN_WINDOW,
      'confirming',
      { do: 'read', why: 'confirm' },
    ],
    [
      'a reconcile read due, no confirmation read: the reconcile read',
      sent({ dueAt: T0 + 12 * MIN }, { readDue: true }),
      {},
      IN_WINDOW,
      'confirming',
      { do: 'read', why: 'reconcile' },
    ],
    [
      'a new target while confirming: sent at once, before the due confirmation read',
      sent({}, { lastChange: { up: T0 - 60 * MIN } }),
      {},
      T0 + 21 * MIN,
      'confirming',
      { do: 'change', body: { replicas: 3 }, direction: 'down' },
    ],
    [
      'the limit passed with the target not in force: sent once more',
      sent({ dueAt: null, reads: 5, unconfirmedAt: T0 + 20 * MIN - 1 }),
      {},
      T0 + 20 * MIN - 1,
      'confirming',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      'unconfirmed, paused meanwhile: no re-send',
      sent({ dueAt: null, unconfirmedAt: T0 + 11 * MIN }),
      { pause: { reason: 'incident' } },
      IN_WINDOW,
      'confirming',
      { do: 'skip', reason: 'paused' },
    ],
    [
      'unconfirmed, its re-send spent: wait, never sent a third time',
      sent({ dueAt: null, resends: 1, unconfirmedAt: T0 + 11 * MIN }),
      {},
      IN_WINDOW,
      'confirming',
      { do: 'wait', reason: 'unconfirmed' },
    ],
    [
      'unconfirmed, its re-send spent, a reload since: sent once more',
      sent({ dueAt: null, resends: 1, lastSentAt: T0 + 10 * MIN, unconfirmedAt: T0 + 11 * MIN }),
      { reloadedAt: T0 + 10 * MIN + 1 },
      IN_WINDOW,
      'confirming',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      'unconfirmed, its re-send spent, reconcile due: read',
      sent({ dueAt: null, resends: 1, unconfirmedAt: T0 + 11 * MIN }, { readDue: true }),
      {},
      IN_WINDOW,
      'confirming',
      { do: 'read', why: 'reconcile' },
    ],
    [
      'calls failing, the next attempt not due: wait (backoff), decided all the same',
      seen({ failures: 3, retryAt: IN_WINDOW + 4_000 }),
      {},
      IN_WINDOW,
      'seen',
      { do: 'wait', reason: 'backoff' },
    ],
    [
      'calls failing, the next attempt due: change',
      seen({ failures: 3, retryAt: IN_WINDOW }),
      {},
      IN_WINDOW,
      'seen',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      'calls failing, the retry the backoff scheduled: it goes ahead',
      seen({ failures: 3, retryAt: IN_WINDOW + 4_000 }),
      { asker: 'turn', retry: true },
      IN_WINDOW,
      'seen',
      { do: 'change', body: { replicas: 6 }, direction: 'up' },
    ],
    [
      'calls failing, a new turn before the next attempt: wait (backoff)',
      seen({ failures: 3, retryAt: IN_WINDOW + 4_000 }),
      { asker: 'turn' },
      IN_WINDOW,
      'seen',
      { do: 'wait', reason: 'backoff' },
    ],
    [
      'calls failing, a reconcile read due: wait (backoff)',
      seen({ failures: 1, retryAt: T0 + 1_000, lastReadAt: T0 - 31 * MIN }),
      {},
      T0,
      'seen',
      { do: 'wait', reason: 'backoff' },
    ],
    [
      'never seen, its first reads failing: wait (backoff)',
      { ...EMPTY, failures: 2, retryAt: T0 + 2_000 },
      {},
      T0,
      'unseen',
      { do: 'wait', reason: 'backoff' },
    ],
    [
      'a change unsettled, its settle reads failing: wait (backoff), still no other change',
      seen({ unsettled: { sent: { replicas: 6 }, at: T0, code: 'API_TIMEOUT' }, failures: 4, retryAt: IN_WINDOW + 1 }),
      {},
      IN_WINDOW,
      'unsettled',
      { do: 'wait', reason: 'backoff' },
    ],
    [
      'calls failing, at target: nothing to wait for',
      seen({ failures: 2, retryAt: T0 + 2_000 }),
      {},
      T0,
      'seen',
      { do: 'wait', reason: 'at_target' },
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
  const ctx = { ref: REF, continuousReads: false, dryRun: false, timing: TIMING };

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
    const t = afterSentChange(seen(), running({ ...STREAMS, replicas: 6, replicaMemoryGb: 4 }), { replicas: 6 }, T0, {
      ref: REF,
      sentAt: T0,
      timing: TIMING,
    });
    expect(t.write).toMatchObject({ applied: { ...STREAMS, replicas: 6, replicaMemoryGb: 4 }, lastChange: { up: T0 } });
    expect(t.drift).toEqual({ expected: { replicaCpuMillicores: 500, replicaMemoryGb: 2 }, actual: t.write.applied });
    expect(t.next).toEqual({ then: 'evaluate' });
  });

  it('a change of unknown outcome found by a read: it landed late, not drift', () => {
    const rec = seen({ unsettled: { sent: { replicas: 6 }, at: T0, code: 'API_TIMEOUT' } });
    const t = afterRead(rec, running({ ...STREAMS, replicas: 6 }), T0 + MIN, ctx);
    expect(t.drift).toBeNull();
    expect(t.landed).toMatchObject({ sent: { replicas: 6 }, at: T0 });
    expect(t.write).toMatchObject({
      unsettled: null,
      lastApplied: { ...STREAMS, replicas: 6 },
      lastChange: { up: T0 },
    });
  });

  it("a change's intent whose answer was never recorded (a crash, a lost lock): a read showing its values is it landed, never drift", () => {
    const rec = seen({ unsettled: INTENT });
    const t = afterRead(rec, running({ ...STREAMS, replicas: 6 }), T0 + MIN, ctx);
    expect(t.drift).toBeNull();
    expect(t.landed).toMatchObject({ sent: { replicas: 6 }, at: T0 });
    expect(t.write).toMatchObject({ unsettled: null, lastApplied: { ...STREAMS, replicas: 6 } });
    // not in force yet: on its way (confirming from its send), the old values no drift either
    const early = afterRead(rec, running(STREAMS), T0 + 10_000, ctx);
    expect(early.drift).toBeNull();
    expect(early.write.confirming).toMatchObject({ target: { replicas: 6 }, sentAt: T0, outcomeUnknown: true });
    expect(stageOf({ ...rec, ...early.write }, sit(), T0 + 10_000)).toBe('confirming');
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

  describe('every change is confirmed', () => {
    const SENT_AT = T0 + 10 * MIN;
    const send = { ref: REF, sentAt: SENT_AT, timing: TIMING };
    const before = seen({ desired: PEAK, lastReadAt: T0 + 9 * MIN });

    it("a change's answer still showing the old values: confirming, its confirming read due at the expected propagation (a scale-up: no probe), no drift, nothing sent again", () => {
      const t = afterSentChange(before, running(STREAMS), { replicas: 6 }, SENT_AT + 200, send);
      expect(t.write).toMatchObject({
        applied: STREAMS,
        lastApplied: PEAK,
        lastChange: { up: SENT_AT + 200 },
        confirming: onItsWay({ dueAt: SENT_AT + MIN }),
      });
      expect(t.drift).toBeNull();
      expect(t.next).toEqual({ then: 'nothing' });
      expect(t.confirmation).toBeUndefined();
      // decided again meanwhile: at target, so nothing is sent
      const rec = { ...before, ...t.write };
      expect(nextStep(rec, sit(), SENT_AT + 30_000).step).toEqual({ do: 'wait', reason: 'confirming' });
    });

    it("a change's answer showing values nobody read yet (changed by hand before it): those too are not yet, never drift, nothing sent again", () => {
      // the pipe was changed by hand to 8 after our last read; our change to 6 replaces it and
      // takes effect later, so its answer and the reads until then show 8
      const byHand = { ...STREAMS, replicas: 8 };
      const t = afterSentChange(before, running(byHand), { replicas: 6 }, SENT_AT + 200, send);
      expect(t.drift).toBeNull();
      expect(t.write.confirming?.notYet).toEqual(expect.arrayContaining([STREAMS, byHand]));
      const rec = { ...before, ...t.write };
      const read = afterRead(rec, running(byHand), SENT_AT + 30_000, ctx);
      expect(read.drift).toBeNull();
      expect(read.next).toEqual({ then: 'nothing' });
      expect(nextStep({ ...rec, ...read.write }, sit(), SENT_AT + 31_000).step).toEqual({
        do: 'wait',
        reason: 'confirming',
      });
    });

    it("a change's answer showing its target in force: confirmed at once (its actuation the answer's latency)", () => {
      const t = afterSentChange(before, running(PEAK), { replicas: 6 }, SENT_AT + 200, send);
      expect(t.write).toMatchObject({
        applied: PEAK,
        confirming: null,
        confirmed: { values: PEAK, at: SENT_AT + 200 },
      });
      expect(t.confirmation).toEqual({
        is: 'confirmed',
        values: { replicas: 6 },
        sentAt: SENT_AT,
        at: SENT_AT + 200,
        dueAt: null,
        wasUnconfirmed: false,
        pastLimit: false,
        outcomeUnknown: false,
      });
    });

    it("the live API's transient 0/null in a change's answer is not the target in force, nor the old values", () => {
      const t = afterSentChange(
        before,
        running({ replicas: 3, replicaCpuMillicores: null, replicaMemoryGb: null }),
        { replicaCpuMillicores: 750 },
        SENT_AT,
        send,
      );
      expect(t.write.applied).toEqual(STREAMS);
      expect(t.write.confirming).toMatchObject({ target: { replicaCpuMillicores: 750 } });
    });

    it('a read during propagation (old values, or the transient 0/null): not yet, never drift, no change; the next read backs off', () => {
      const rec = sent();
      for (const shown of [STREAMS, { replicas: 3, replicaCpuMillicores: null, replicaMemoryGb: null }]) {
        const t = afterRead(rec, running(shown), T0 + 11 * MIN, ctx);
        expect(t.drift).toBeNull();
        expect(t.next).toEqual({ then: 'nothing' });
        expect(t.write.applied).toEqual(STREAMS);
        expect(t.write.desired).toBeUndefined();
        // the read's instant is the lower end of the change's actuation sample
        expect(t.write.confirming).toEqual(
          onItsWay({ reads: 1, notShownAt: T0 + 11 * MIN, dueAt: T0 + 11 * MIN + 9_000 }),
        );
        expect(t.confirmation).toBeUndefined();
      }
      // the send's reads go at 1 min, then each 15 % of the time since the send after the one
      // before (69 s, 79.35 s, ... 279.15 s, 321.023 s): a late read stands for those it passed
      const later = afterRead(sent({ reads: 3 }), running(STREAMS), T0 + 15 * MIN, ctx);
      expect(later.write.confirming?.dueAt).toBe(T0 + 15 * MIN + 21_023);
      // the last read at the limit, never past it
      const last = afterRead(sent({ reads: 5 }), running(STREAMS), T0 + 19 * MIN + 50_000, ctx);
      expect(last.write.confirming?.dueAt).toBe(T0 + 20 * MIN);
    });

    it('a read showing the target in force: confirmed, actuation from the first send; the record keeps the first instant', () => {
      const t = afterRead(sent(), running(PEAK), T0 + 13 * MIN, ctx);
      expect(t.drift).toBeNull();
      expect(t.write).toMatchObject({
        applied: PEAK,
        confirming: null,
        confirmed: { values: PEAK, at: T0 + 13 * MIN },
      });
      expect(t.write.desired).toBeUndefined();
      // with the instant its read was due: a read much later measured the queue (actuationSample)
      expect(t.confirmation).toMatchObject({
        is: 'confirmed',
        sentAt: SENT_AT,
        at: T0 + 13 * MIN,
        dueAt: T0 + 11 * MIN,
      });
      const rec = { ...sent(), ...t.write };
      const again = afterRead(rec, running(PEAK), T0 + 40 * MIN, ctx);
      expect(again.write.confirmed).toMatchObject({ values: PEAK, at: T0 + 13 * MIN, seen: T0 + 40 * MIN });
      expect(again.confirmation).toBeUndefined();
    });

    it('the target shown in a state that takes no scaling: not yet', () => {
      const t = afterRead(sent(), { ...running(PEAK), state: 'Stopped' }, T0 + 13 * MIN, ctx);
      expect(t.write.confirming).not.toBeNull();
      expect(t.confirmation).toBeUndefined();
    });

    it('a sent field at a value neither old nor target: changed by hand meanwhile, drift', () => {
      const t = afterRead(sent(), running({ ...STREAMS, replicas: 9 }), T0 + 11 * MIN, ctx);
      expect(t.drift).toEqual({ expected: PEAK, actual: { ...STREAMS, replicas: 9 } });
      expect(t.write.confirming).toBeNull();
    });

    it('the limit passed: unconfirmed once, sent once more; after the re-send, no third send', () => {
      const t = afterRead(sent({ reads: 6, dueAt: T0 + 20 * MIN }), running(STREAMS), T0 + 20 * MIN, ctx);
      expect(t.confirmation).toEqual({ is: 'unconfirmed', target: { replicas: 6 }, sentAt: SENT_AT, resends: 0 });
      expect(t.write.confirming).toMatchObject({ dueAt: null, unconfirmedAt: T0 + 20 * MIN });
      expect(t.next).toEqual({ then: 'change', up: true });
      expect(t.drift).toBeNull();
      // the re-send keeps the first send, and its confirmation reads start again
      const rec = { ...sent(), ...t.write };
      const resent = afterSentChange(rec, running(STREAMS), { replicas: 6 }, T0 + 21 * MIN, {
        ...send,
        sentAt: T0 + 21 * MIN,
      });
      expect(resent.write.confirming).toMatchObject({
        sentAt: SENT_AT,
        lastSentAt: T0 + 21 * MIN,
        resends: 1,
        unconfirmedAt: T0 + 20 * MIN,
        dueAt: T0 + 22 * MIN,
      });
      expect(resent.confirmation).toBeUndefined();
      const rec2 = { ...rec, ...resent.write };
      const end = afterRead(
        { ...rec2, confirming: { ...rec2.confirming!, dueAt: T0 + 31 * MIN } },
        running(STREAMS),
        T0 + 31 * MIN,
        ctx,
      );
      expect(end.confirmation).toBeUndefined();
      expect(end.next).toEqual({ then: 'nothing' });
      expect(end.write.confirming).toMatchObject({ dueAt: null, resends: 1 });
      // seen at last, by a reconcile read: confirmed late, the unconfirmed state clears
      const late = afterRead({ ...rec2, ...end.write }, running(PEAK), T0 + 60 * MIN, ctx);
      // its read was due at the limit at the latest (the last send's)
      expect(late.confirmation).toMatchObject({
        is: 'confirmed',
        sentAt: SENT_AT,
        wasUnconfirmed: true,
        pastLimit: true,
        dueAt: T0 + 31 * MIN,
      });
    });

    it('an unconfirmed change replaced by a new target: the state clears', () => {
      const rec = sent({ dueAt: null, resends: 1, unconfirmedAt: T0 + 20 * MIN });
      const t = afterSentChange(rec, running(STREAMS), { replicas: 4 }, T0 + 30 * MIN, {
        ...send,
        sentAt: T0 + 30 * MIN,
      });
      expect(t.confirmation).toEqual({ is: 'dropped', target: { replicas: 6 }, reason: 'new_target' });
      expect(t.write.confirming).toMatchObject({
        target: { replicas: 4 },
        sentAt: T0 + 30 * MIN,
        resends: 0,
        unconfirmedAt: null,
        notYet: [STREAMS, { replicas: 6 }, STREAMS],
      });
      // the new target in force at its own answer: no propagation measured, no sample
      const atOnce = afterSentChange(rec, running({ ...STREAMS, replicas: 4 }), { replicas: 4 }, T0 + 30 * MIN + 150, {
        ...send,
        sentAt: T0 + 30 * MIN,
      });
      expect(atOnce.confirmation).toMatchObject({ is: 'confirmed', wasUnconfirmed: true, pastLimit: false });
      expect(actuationSample(atOnce.confirmation as Parameters<typeof actuationSample>[0])).toEqual({
        skipped: 'in_force_at_answer',
      });
    });

    it('a change of unknown outcome (taken, timed out, cut) that its settle read does not show: confirming from its send, its confirmation reads on the schedule of its send, not sent again', () => {
      const rec = seen({
        desired: PEAK,
        unsettled: { sent: { replicas: 6 }, at: SENT_AT, code: 'API_INVALID_RESPONSE', taken: true },
        lastReadAt: SENT_AT - MIN,
      });
      const t = afterRead(rec, running(STREAMS), SENT_AT + 20_000, ctx);
      expect(t.drift).toBeNull();
      expect(t.next).toEqual({ then: 'nothing' });
      expect(t.write.confirming).toMatchObject({
        target: { replicas: 6 },
        sentAt: SENT_AT,
        dueAt: SENT_AT + MIN,
        outcomeUnknown: true,
      });
      const after = { ...rec, ...t.write };
      expect(nextStep(after, sit(), SENT_AT + 30_000).step).toEqual({ do: 'wait', reason: 'confirming' });
      // in force later: landed late and confirmed, from its send
      const later = afterRead(after, running(PEAK), SENT_AT + 2 * MIN, ctx);
      expect(later.landed).toEqual({ sent: { replicas: 6 }, at: SENT_AT });
      expect(later.confirmation).toMatchObject({ is: 'confirmed', sentAt: SENT_AT, at: SENT_AT + 2 * MIN });
      // when the platform took it, if it did, is not known: no actuation sample
      expect(later.confirmation).toMatchObject({ outcomeUnknown: true });
      expect(later.drift).toBeNull();
      // past its limit at the settle read: decided as usual (sent again)
      const old = afterRead(rec, running(STREAMS), SENT_AT + 11 * MIN, ctx);
      expect(old.write.confirming).toBeUndefined();
      // one that timed out: the platform may carry it out after its client gave up, then propagate
      const timedOut = { ...rec, unsettled: { sent: { replicas: 6 }, at: SENT_AT, code: 'API_TIMEOUT' } };
      const waiting = afterRead(timedOut, running(STREAMS), SENT_AT + 20_000, ctx);
      expect(waiting.write.confirming).toMatchObject({ target: { replicas: 6 }, sentAt: SENT_AT, notYet: [STREAMS] });
      expect(waiting.next).toEqual({ then: 'nothing' });
      // its settle read late (past the expected propagation): the next of its send's confirmation reads
      const late = afterRead(timedOut, running(STREAMS), SENT_AT + 2 * MIN, ctx);
      expect(late.write.confirming).toMatchObject({
        dueAt: nextDueAt(
          { lastSentAt: SENT_AT, target: { replicas: 6 }, notYet: [STREAMS] },
          SENT_AT + 2 * MIN,
          TIMING,
        ),
      });
      // a read showing someone else's value for it: changed by hand, before the change went out
      // (which replaces it: its answer would have shown it) or after, no answer says which: the
      // hand's drift is reported, and the change is on its way all the same, that value "not yet":
      // not sent again before its limit (the model, seed 11, path 287)
      const byHand = { ...STREAMS, replicas: 4 };
      const other = afterRead(timedOut, running(byHand), SENT_AT + 20_000, ctx);
      expect(other.drift).toEqual({ expected: STREAMS, actual: byHand });
      expect(other.write.confirming).toMatchObject({ target: { replicas: 6 }, sentAt: SENT_AT, outcomeUnknown: true });
      expect(other.write.confirming?.notYet).toEqual([STREAMS, byHand]);
      const decided = { ...timedOut, ...other.write, desired: PEAK };
      expect(nextStep(decided, sit(), SENT_AT + 21_000).step).toEqual({ do: 'wait', reason: 'confirming' });
      // read again while it propagates: the hand's value is no drift twice; then it lands
      const still = afterRead(decided, running(byHand), SENT_AT + MIN, ctx);
      expect(still.drift).toBeNull();
      expect(still.write.confirming).toMatchObject({ target: { replicas: 6 } });
      expect(afterRead({ ...decided, ...still.write }, running(PEAK), SENT_AT + 2 * MIN, ctx).landed).toEqual({
        sent: { replicas: 6 },
        at: SENT_AT,
      });
      // past its limit with the hand's value still there: unconfirmed, sent once more
      const limit = afterRead({ ...decided, ...still.write }, running(byHand), SENT_AT + 11 * MIN, ctx);
      expect(limit.confirmation).toMatchObject({ is: 'unconfirmed', target: { replicas: 6 } });
      // a second change on its way behind an earlier one: the earlier target is "not yet"
      const behind = afterRead(
        {
          ...timedOut,
          desired: { ...PEAK, replicas: 8 },
          confirming: t.write.confirming ?? null,
          unsettled: { sent: { replicas: 8 }, at: SENT_AT + MIN, code: 'API_TIMEOUT' },
        },
        running(STREAMS),
        SENT_AT + MIN + 5_000,
        ctx,
      );
      expect(behind.write.confirming).toMatchObject({ target: { replicas: 8 }, sentAt: SENT_AT + MIN });
      expect(behind.write.confirming?.notYet).toEqual(expect.arrayContaining([STREAMS, { replicas: 6 }]));
      expect(behind.next).toEqual({ then: 'nothing' });
    });

    it('a read settles the change unsettled before it even within the same millisecond (a clock that has not moved)', () => {
      // the change was cut 1 ms "after" the read before it (turn.ts stamps it so), at the same instant
      const rec = seen({
        lastReadAt: SENT_AT,
        unsettled: { sent: { replicas: 6 }, at: SENT_AT + 1, code: 'API_NETWORK' },
      });
      expect(stageOf(rec, sit(), SENT_AT)).toBe('unsettled');
      const t = afterRead(rec, running(STREAMS), SENT_AT, ctx);
      expect(t.write.lastReadAt).toBe(SENT_AT + 1);
      expect(stageOf({ ...rec, ...t.write }, sit(), SENT_AT)).not.toBe('unsettled');
    });

    it('a change taken while an earlier one was still being confirmed: the earlier makes way (confirmed if the read shows it), the taken one is confirming, not sent again', () => {
      // the scale-up to 6 (sent at SENT_AT) is in force by now; the scale-down to 3 sent at +4 min
      // was taken, its answer unreadable; the settle read shows 6: the down is on its way
      const DOWN_AT = SENT_AT + 4 * MIN;
      const rec = sent(
        {},
        {
          desired: STREAMS,
          unsettled: { sent: { replicas: 3 }, at: DOWN_AT, code: 'API_INVALID_RESPONSE', taken: true },
        },
      );
      const t = afterRead(rec, running(PEAK), DOWN_AT + 10_000, ctx);
      expect(t.confirmation).toMatchObject({ is: 'confirmed', sentAt: SENT_AT });
      expect(t.drift).toBeNull();
      expect(t.next).toEqual({ then: 'nothing' });
      expect(t.write.confirming).toMatchObject({ target: { replicas: 3 }, sentAt: DOWN_AT, lastSentAt: DOWN_AT });
      expect(t.write.confirming?.notYet[0]).toEqual(PEAK);
      // the earlier one not in force either: the read shows 3, the values in force before the down
      // was sent; it settles the down (no drift), but nothing says it landed late
      const both = afterRead(rec, running(STREAMS), DOWN_AT + 10_000, ctx);
      expect(both.landed).toBeUndefined();
      expect(both.drift).toBeNull();
      expect(both.write.unsettled).toBeNull();
    });

    it('a change of unknown outcome whose values a read shows for another reason is settled, never reported landed late', () => {
      // the window's scale-up to 6 was answered 200 and is on its way; the desire went back to 3 and
      // the change to 3 timed out: a read showing 3 shows the values in force before it was sent
      const DOWN_AT = SENT_AT + 4 * MIN;
      const back = sent(
        {},
        { desired: STREAMS, unsettled: { sent: { replicas: 3 }, at: DOWN_AT, code: 'API_TIMEOUT' } },
      );
      const kept = afterRead(back, running(STREAMS), DOWN_AT + 30_000, ctx);
      expect(kept.landed).toBeUndefined();
      expect(kept.drift).toBeNull();
      expect(kept.write).toMatchObject({ unsettled: null, lastApplied: STREAMS });
      // the same with its sender stalled (its intent still in_flight): no landed mark, so its 200,
      // should it come, is its one outcome
      const stalled = { ...back, unsettled: { ...INTENT, sent: { replicas: 3 }, at: DOWN_AT, until: DOWN_AT + 5_000 } };
      expect(afterRead(stalled, running(STREAMS), DOWN_AT + 30_000, ctx).landed).toBeUndefined();
      // a re-send of the target past its limit, cut: a read showing the target may show the first
      // send in force (answered 200, its outcome): confirmed, not landed late
      const AGAIN_AT = SENT_AT + 11 * MIN;
      const resent = sent(
        { dueAt: null, reads: 3, unconfirmedAt: SENT_AT + 10 * MIN },
        { lastReadAt: SENT_AT + 10 * MIN, unsettled: { sent: { replicas: 6 }, at: AGAIN_AT, code: 'API_NETWORK' } },
      );
      const first = afterRead(resent, running(PEAK), AGAIN_AT + 10_000, ctx);
      expect(first.landed).toBeUndefined();
      expect(first.confirmation).toMatchObject({ is: 'confirmed', sentAt: SENT_AT });
      expect(first.write.unsettled).toBeNull();
      // its settle read not showing it: on its way (from the first send); a later read that shows it
      // is no landing late of the re-send either
      const waiting = afterRead(resent, running(STREAMS), AGAIN_AT + 10_000, ctx);
      expect(waiting.write.confirming).toMatchObject({ target: { replicas: 6 }, sentAt: SENT_AT });
      const later = afterRead({ ...resent, ...waiting.write }, running(PEAK), AGAIN_AT + 2 * MIN, ctx);
      expect(later.landed).toBeUndefined();
      expect(later.confirmation).toMatchObject({ is: 'confirmed', sentAt: SENT_AT });
      expect(later.drift).toBeNull();
      // a change of unknown outcome alone, its values new: landed late, reported once
      const alone = afterRead(seen({ unsettled: { ...INTENT } }), running(PEAK), T0 + MIN, ctx);
      expect(alone.landed).toMatchObject({ sent: { replicas: 6 }, id: INTENT.id });
      expect(alone.write.unsettled).toBeNull();
    });

    it('a scale-down shown in force keeps the instant of the confirmation that held more: the pipe was at least at it since', () => {
      // the baseline (3) confirmed 20 min before; a window down to the platform's floor (1) starts
      // at T0 and its change, sent right after, is in force at its answer
      const FLOOR = { ...STREAMS, replicas: 1 };
      const rec = seen({ desired: FLOOR, confirmed: { values: STREAMS, at: T0 - 20 * MIN } });
      const t = afterSentChange(rec, running(FLOOR), { replicas: 1 }, T0 + 600, {
        ref: REF,
        sentAt: T0 + 500,
        timing: TIMING,
      });
      // the pipe held at least 1 since: the floor, down from 3, is its lowest since then
      expect(t.write.confirmed).toMatchObject({ values: FLOOR, at: T0 - 20 * MIN, lowest: { replicas: 1 } });
      // what it held before the floor is kept, up to the last answer that showed it: for a start
      // judged after the confirmation moved on (policy/confirmation.ts confirmationAfterAnswer)
      expect(t.write.confirmed?.earlier).toEqual([{ held: STREAMS, at: T0 - 20 * MIN, until: T0 - 20 * MIN }]);
      // the same shown by a read
      expect(afterRead(rec, running(FLOOR), T0 + 30_000, ctx).write.confirmed).toMatchObject({
        values: FLOOR,
        at: T0 - 20 * MIN,
        lowest: { replicas: 1 },
      });
      // the change back up to 3, answered while the pipe still showed 1, then a read showing 3 in
      // force: confirmed from that read, not from the confirmation of 3 before the pipe went down
      const back = seen({ desired: STREAMS, confirmed: { values: STREAMS, at: T0 - 20 * MIN } });
      const answered = afterSentChange(back, running(FLOOR), { replicas: 3 }, T0 + 600, {
        ref: REF,
        sentAt: T0 + 500,
        timing: TIMING,
      });
      expect(answered.write.confirmed).toMatchObject({ values: STREAMS, at: T0 - 20 * MIN, lowest: { replicas: 1 } });
      const again = afterRead({ ...back, ...answered.write }, running(STREAMS), T0 + 30_000, ctx).write.confirmed;
      expect(again).toMatchObject({ values: STREAMS, at: T0 + 30_000 });
      expect(again?.lowest).toBeUndefined();
      // a scale-up is confirmed from the read that shows it
      const up = seen({ desired: PEAK, confirmed: { values: FLOOR, at: T0 - 20 * MIN } });
      expect(afterRead(up, running(PEAK), T0 + 30_000, ctx).write.confirmed).toMatchObject({
        values: PEAK,
        at: T0 + 30_000,
      });
    });

    it('a read showing the desired target (no change on its way): the last confirmation', () => {
      const t = afterRead(seen({ desired: STREAMS }), running(STREAMS), T0, ctx);
      expect(t.write.confirmed).toEqual({ values: STREAMS, at: T0, seen: T0 });
    });

    it('a read showing other values in force than the desired target: those are confirmed, what the pipe holds', () => {
      // the next start's target decided already (PEAK, its change not sent yet) when a read shows
      // STREAMS in force: a start that asks at most STREAMS is met by this read; PEAK's is not
      expect(afterRead(seen({ desired: PEAK }), running(STREAMS), T0, ctx).write.confirmed).toEqual({
        values: STREAMS,
        at: T0,
        seen: T0,
      });
    });
  });

  it("calls failing in a row: the first retry a key's window after, each next twice as long (stretched by up to half, never cut), never past the reconcile period", () => {
    const WINDOW = 10_000; // the key's budget window: 10 requests per 10 s
    const shortest = () => 0; // the jitter adds up to half: 0 draws the shortest wait
    const delays = [1, 2, 3, 4, 5, 6, 8, 40, 500].map(
      (n) => afterCallFailure(n, T0, 10 * MIN, WINDOW, shortest).delayMs,
    );
    expect(delays).toEqual([10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000, 600_000]);
    const longest = afterCallFailure(1, T0, 10 * MIN, WINDOW, () => 0.999).delayMs;
    expect(longest).toBeGreaterThan(14_900);
    expect(longest).toBeLessThan(15_000);
    expect(afterCallFailure(3, T0, 10 * MIN, WINDOW, shortest).write).toEqual({ failures: 3, retryAt: T0 + 40_000 });
    // a short reconcile period caps it, the first retry too
    expect(afterCallFailure(9, T0, 30_000, WINDOW, shortest).delayMs).toBe(30_000);
    expect(afterCallFailure(1, T0, 5_000, WINDOW, shortest).delayMs).toBe(5_000);
  });

  it('any answer ends the backoff: a read, a change, an endpoint', () => {
    const failing = seen({ failures: 5, retryAt: T0 + MIN });
    const ended = { failures: 0, retryAt: null };
    expect(afterRead(failing, running(STREAMS), T0, ctx).write).toMatchObject(ended);
    expect(
      afterSentChange(failing, running({ ...STREAMS, replicas: 6 }), { replicas: 6 }, T0, {
        ref: REF,
        sentAt: T0,
        timing: TIMING,
      }).write,
    ).toMatchObject(ended);
    expect(afterEndpoint({ ...failing, endpointsDue: ['a'] }, 'a', 'Ready').write).toMatchObject(ended);
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
