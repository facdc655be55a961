// What status says of a pipe, from its record alone (no Redis): what the platform last showed and
// when, and the newest change sent with its state. A target is never shown as the pipe's values;
// a change whose answer was lost is "outcome unknown" from then, whatever older change was confirming.
import { describe, expect, it } from 'vitest';
import { accountOf } from '../../../src/daemon/views/pipe-account.js';
import { parseRecord, type PipeRecord } from '../../../src/daemon/model/record.js';
import type { Confirming } from '../../../src/daemon/model/record.js';

const T0 = Date.parse('2026-11-23T10:00:00Z');
const SEC = 1_000;
const EMPTY = parseRecord({}).rec;
const BASE = { replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 2 };
const PEAK = { ...BASE, replicas: 6 };

/** A pipe last read at T0 at the peak. */
const rec = (over: Partial<PipeRecord> = {}): PipeRecord => ({
  ...EMPTY,
  kind: 'stream',
  state: 'Running',
  applied: PEAK,
  lastApplied: PEAK,
  lastReadAt: T0,
  ...over,
});

const confirming = (over: Partial<Confirming> = {}): Confirming => ({
  target: { replicas: 6 },
  sentAt: T0 - 30 * SEC,
  lastSentAt: T0 - 30 * SEC,
  dueAt: T0 + 30 * SEC,
  reads: 1,
  resends: 0,
  notYet: [BASE],
  unconfirmedAt: null,
  ...over,
});

describe('accountOf: a record as status tells it', () => {
  it('never read: no values, no instant, nothing on its way', () => {
    expect(accountOf(EMPTY, T0)).toEqual({ platform: { values: {}, state: null, at: null }, change: null });
  });

  it('the platform: the values and state of the last read or answer, with its instant', () => {
    expect(accountOf(rec(), T0 + 10 * SEC)).toEqual({
      platform: { values: PEAK, state: 'Running', at: T0 },
      change: null,
    });
  });

  it('a change answered 200 and not yet read in force: confirming since its first send', () => {
    const r = rec({ applied: BASE, confirming: confirming({ sentAt: T0 - 90 * SEC, resends: 0 }) });
    expect(accountOf(r, T0)).toEqual({
      platform: { values: BASE, state: 'Running', at: T0 },
      change: {
        state: 'confirming',
        target: { replicas: 6 },
        since: T0 - 90 * SEC,
        sentAt: T0 - 90 * SEC,
        unconfirmedAt: null,
        resends: 0,
      },
    });
  });

  it('past its limit: unconfirmed since then, with its re-sends', () => {
    const c = confirming({ unconfirmedAt: T0 - 5 * SEC, resends: 1, dueAt: null });
    expect(accountOf(rec({ applied: BASE, confirming: c }), T0).change).toMatchObject({
      state: 'unconfirmed',
      since: T0 - 5 * SEC,
      unconfirmedAt: T0 - 5 * SEC,
      resends: 1,
    });
  });

  it('a change whose answer timed out: outcome unknown since then, the values still the last read', () => {
    const r = rec({ unsettled: { sent: { replicas: 2 }, at: T0 + 20 * SEC, code: 'API_TIMEOUT' } });
    expect(accountOf(r, T0 + 30 * SEC)).toEqual({
      platform: { values: PEAK, state: 'Running', at: T0 },
      change: {
        state: 'outcome_unknown',
        target: { replicas: 2 },
        since: T0 + 20 * SEC,
        sentAt: T0 + 20 * SEC,
        unconfirmedAt: null,
        resends: 0,
        code: 'API_TIMEOUT',
      },
    });
  });

  it('it is the newest change: an older one still confirming is not shown as on its way', () => {
    // the window's scale-up was confirming when the scale-down after it timed out
    const r = rec({
      applied: BASE,
      confirming: confirming(),
      unsettled: { sent: { replicas: 2 }, at: T0 + 20 * SEC, code: 'API_TIMEOUT' },
    });
    expect(accountOf(r, T0 + 30 * SEC).change).toMatchObject({
      state: 'outcome_unknown',
      target: { replicas: 2 },
      since: T0 + 20 * SEC,
    });
    // it sent other fields than the older one: the pipe is expected at both
    const cpu = rec({
      applied: BASE,
      confirming: confirming({ target: { replicaCpuMillicores: 1000 } }),
      unsettled: { sent: { replicas: 2 }, at: T0 + 20 * SEC, code: 'API_TIMEOUT' },
    });
    expect(accountOf(cpu, T0 + 30 * SEC).change?.target).toEqual({ replicaCpuMillicores: 1000, replicas: 2 });
  });

  it('its settle read did not show it: still outcome unknown, confirmed like a change on its way', () => {
    // answers.ts afterRead adopts it as the change being confirmed (onItsWay)
    const r = rec({
      applied: PEAK,
      lastReadAt: T0 + 25 * SEC,
      unsettled: { sent: { replicas: 2 }, at: T0 + 20 * SEC, code: 'API_TIMEOUT' },
      confirming: confirming({
        target: { replicas: 2 },
        sentAt: T0 + 20 * SEC,
        lastSentAt: T0 + 20 * SEC,
        notYet: [PEAK],
        outcomeUnknown: true,
      }),
    });
    expect(accountOf(r, T0 + 30 * SEC)).toEqual({
      platform: { values: PEAK, state: 'Running', at: T0 + 25 * SEC },
      change: {
        state: 'outcome_unknown',
        target: { replicas: 2 },
        since: T0 + 20 * SEC,
        sentAt: T0 + 20 * SEC,
        unconfirmedAt: null,
        resends: 0,
        code: 'API_TIMEOUT',
      },
    });
    // past its limit it is unconfirmed like any other
    const late = { ...r, confirming: { ...r.confirming!, unconfirmedAt: T0 + 11 * 60 * SEC } };
    expect(accountOf(late, T0 + 12 * 60 * SEC).change).toMatchObject({
      state: 'unconfirmed',
      since: T0 + 11 * 60 * SEC,
    });
  });

  it('a 2xx whose answer could not be read: taken, confirming', () => {
    const r = rec({ unsettled: { sent: { replicas: 2 }, at: T0 + 20 * SEC, code: 'API_BAD_RESPONSE', taken: true } });
    expect(accountOf(r, T0 + 30 * SEC).change).toMatchObject({ state: 'confirming', since: T0 + 20 * SEC });
  });

  it('a change whose request is out (its intent stored): sending until its time runs out, then outcome unknown', () => {
    const intent = { sent: { replicas: 2 }, at: T0 + 20 * SEC, code: 'in_flight', until: T0 + 22 * SEC };
    const r = rec({ unsettled: intent });
    expect(accountOf(r, T0 + 21 * SEC).change).toMatchObject({
      state: 'sending',
      target: { replicas: 2 },
      since: T0 + 20 * SEC,
    });
    expect(accountOf(r, T0 + 23 * SEC).change).toMatchObject({ state: 'outcome_unknown', since: T0 + 22 * SEC });
    expect(accountOf(r, T0 + 23 * SEC).change).not.toHaveProperty('code');
  });
});
