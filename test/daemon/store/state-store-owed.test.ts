// The audit line a change's 200 owes, in the pipe's hash (state-scripts.ts ANSWER_SCRIPT and
// OWED_SCRIPT): stored by the script that records the answer, with the landed mark read in the same
// round trip; taken by one turn only; deleted only as its holder stored or took it.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import { owedLine, takenAt } from '../../../src/daemon/lifecycle/owed-line.js';
import type { OwedDecision } from '../../../src/daemon/model/record.js';
import { cleanupPrefix, REDIS_URL, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('state-store-owed');
let redis: Redis;
let store: StateStore;

beforeAll(() => {
  redis = new Redis(REDIS_URL);
  store = new StateStore(redis, prefix);
});

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  await redis.quit();
});

const T0 = 1_764_341_292_200;
const intent = (id: string) => ({ sent: { replicas: 10 }, at: T0 - 400, code: 'in_flight', id, until: T0 + 9_600 });
const LINE: OwedDecision = {
  kind: 'applied',
  direction: 'up',
  reason: 'window',
  windows: ['peak'],
  before: { replicas: 1 },
  after: { replicas: 1 },
  reasons: [{ code: 'window', field: 'replicas', message: 'peak sets replicas 10' }],
  requestId: 'req-1',
  idempotencyKey: '00ac5a7f',
};
const answer = { unsettled: null, applied: { replicas: 1 }, lastReadAt: T0 };

describe('StateStore.recordAnswer', () => {
  it('stores the answer and the line it owes while the record names the intent', async () => {
    const pipe = 'owed-recorded';
    await store.write(pipe, { ref: 'o/s/p', unsettled: intent('a') });
    const owed = owedLine('a', LINE, T0, 10_000);
    expect(await store.recordAnswer(pipe, 'a', answer, owed)).toBe('recorded');
    const snap = await store.snapshot(pipe);
    expect(snap.rec).toMatchObject({ unsettled: null, applied: { replicas: 1 }, lastReadAt: T0 });
    expect(snap.owed).toEqual([owed]);
    // deleted as stored: the record owes nothing
    expect(await store.clearOwed(pipe, owed)).toBe(true);
    expect((await store.snapshot(pipe)).owed).toEqual([]);
    expect(await store.clearOwed(pipe, owed)).toBe(false);
  });

  it("refused: nothing when a read reported the change landed late; else the owed line alone, the read's record kept", async () => {
    const pipe = 'owed-refused';
    await store.write(pipe, { ref: 'o/s/p', unsettled: null, lastReadAt: T0 - 100 });
    const owed = owedLine('b', LINE, T0, 10_000);
    await redis.set(store.keys.landed('b'), '1', 'PX', 60_000);
    expect(await store.recordAnswer(pipe, 'b', answer, owed)).toBe('landed');
    expect((await store.snapshot(pipe)).owed).toEqual([]);
    await redis.del(store.keys.landed('b'));
    expect(await store.recordAnswer(pipe, 'b', answer, owed)).toBe('owed');
    const snap = await store.snapshot(pipe);
    expect(snap.rec.lastReadAt).toBe(T0 - 100);
    expect(snap.owed).toEqual([owed]);
    // no record (forgotten, or Redis emptied with the marker unchecked): nothing
    expect(await store.recordAnswer('owed-none', 'b', answer, owed)).toBe('refused');
    expect(await redis.exists(store.keys.pipe('owed-none'))).toBe(0);
  });

  it('is taken by one turn only, and then deleted only by it', async () => {
    const pipe = 'owed-taken';
    await store.write(pipe, { ref: 'o/s/p', unsettled: intent('c') });
    const owed = owedLine('c', LINE, T0, 10_000);
    expect(await store.recordAnswer(pipe, 'c', answer, owed)).toBe('recorded');
    // two turns (two replicas) read it due at once: one takes it
    const first = takenAt(owed, owed.dueAt + 1, 10_000);
    const second = takenAt(owed, owed.dueAt + 2, 10_000);
    expect(await store.takeOwed(pipe, owed, first)).toBe(true);
    expect(await store.takeOwed(pipe, owed, second)).toBe(false);
    // its sender, alive after all, cannot delete it from under the turn that took it
    expect(await store.clearOwed(pipe, owed)).toBe(false);
    expect((await store.snapshot(pipe)).owed).toEqual([first]);
    expect(await store.clearOwed(pipe, first)).toBe(true);
    expect((await store.snapshot(pipe)).owed).toEqual([]);
  });

  it('keeps one line per change: a second change answered before the first line was written owes its own', async () => {
    const pipe = 'owed-two';
    await store.write(pipe, { ref: 'o/s/p', unsettled: intent('d') });
    const d = owedLine('d', LINE, T0, 10_000);
    expect(await store.recordAnswer(pipe, 'd', answer, d)).toBe('recorded');
    await store.write(pipe, { unsettled: intent('e') });
    const e = owedLine('e', { ...LINE, idempotencyKey: 'next' }, T0 + 5_000, 10_000);
    expect(await store.recordAnswer(pipe, 'e', answer, e)).toBe('recorded');
    const owed = (await store.snapshot(pipe)).owed;
    expect(owed.map((o) => o.line.idempotencyKey).sort()).toEqual(['00ac5a7f', 'next']);
    // one that does not parse is no line
    await redis.hset(store.keys.pipe(pipe), 'owed:x', '{"id":"x"}');
    expect((await store.snapshot(pipe)).owed).toHaveLength(2);
  });
});
