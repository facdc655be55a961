// The owed audit line's rule (lifecycle/owed-line.ts): its holder writes it only while its write's
// reply came within api.timeout of the instant it took it, and another turn takes it only
// OWED_MARGIN_MS after that, so a live holder and a turn never both write it; a turn that takes it
// holds it the same way. Pure.
import { describe, expect, it } from 'vitest';
import {
  holderMayWrite,
  OWED_MARGIN_MS,
  owedDecision,
  owedDue,
  owedEvent,
  owedLine,
  takenAt,
} from '../../../src/daemon/lifecycle/owed-line.js';
import type { DaemonEvents } from '../../../src/daemon/model/events.js';

const T0 = Date.parse('2026-11-28T14:48:12.200Z');
const TIMEOUT = 10_000;
const ID = 'c8ca5f83-0000-4000-8000-000000000001';
const DECISION: DaemonEvents['decision'] = {
  pipe: 'stream-75',
  direction: 'up',
  result: 'applied',
  reason: 'window',
  windows: ['peak'],
  before: { replicas: 1 },
  after: { replicas: 1 },
  target: { replicas: 10 },
  reasons: [{ code: 'window', field: 'replicas', message: 'peak sets replicas 10' }],
  requestId: 'c8ca5f83-0000-4000-8000-000000000002',
  idempotencyKey: '00ac5a7f-0000-4000-8000-000000000003',
};

describe('an owed audit line', () => {
  const owed = owedLine(ID, owedDecision(DECISION), T0, TIMEOUT);

  it('is its sender’s to write while its reply came within api.timeout of its answer', () => {
    expect(owed).toMatchObject({ id: ID, answeredAt: T0, dueAt: T0 + TIMEOUT + OWED_MARGIN_MS });
    expect(holderMayWrite(owed, T0)).toBe(true);
    expect(holderMayWrite(owed, T0 + TIMEOUT - 1)).toBe(true);
    // a sender whose reply came later (stalled, Redis slow) leaves it to a later turn
    expect(holderMayWrite(owed, T0 + TIMEOUT)).toBe(false);
  });

  it('is due to any other turn only a margin after its holder’s last instant', () => {
    expect(owedDue(owed, T0 + TIMEOUT)).toBe(false);
    expect(owedDue(owed, T0 + TIMEOUT + OWED_MARGIN_MS - 1)).toBe(false);
    expect(owedDue(owed, T0 + TIMEOUT + OWED_MARGIN_MS)).toBe(true);
    // no instant at which both its holder may write it and a turn may take it
    for (let t = T0; t <= owed.dueAt + 1_000; t += 250) expect(holderMayWrite(owed, t) && owedDue(owed, t)).toBe(false);
  });

  it('taken by a turn, is held by it the same way, and not due again before its own margin', () => {
    const at = owed.dueAt + 5_000;
    const mine = takenAt(owed, at, TIMEOUT);
    expect(mine).toMatchObject({ id: ID, answeredAt: T0, dueAt: at + TIMEOUT + OWED_MARGIN_MS, line: owed.line });
    expect(holderMayWrite(mine, at + 3)).toBe(true);
    expect(owedDue(mine, at + 3)).toBe(false);
    // a turn that took it and died before its line: it is due again to the next
    expect(owedDue(mine, mine.dueAt)).toBe(true);
  });

  it('is written as the sender’s `applied` line, by its key, with the instant of its 200', () => {
    const { pipe: _pipe, ...line } = DECISION;
    const { result: _result, ...values } = line;
    expect(owed.line).toEqual({ kind: 'applied', ...values });
    expect(owedEvent('stream-75', owed)).toEqual({ ...DECISION, answeredAt: T0 });
  });
});
