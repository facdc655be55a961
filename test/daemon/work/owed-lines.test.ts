// The owed audit lines of a pipe written by its evaluations and turns (work/owed-lines.ts): none
// before it is due, once when due whatever number of replicas finds it at once, and the record
// owes it no more. Real Redis, the clock given.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonEmitter, type DaemonEvents } from '../../../src/daemon/model/events.js';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import { owedLine } from '../../../src/daemon/lifecycle/owed-line.js';
import { writeOwedLines } from '../../../src/daemon/work/owed-lines.js';
import { silentLogger } from '../../../src/daemon/model/logger.js';
import type { DaemonContext } from '../../../src/daemon/work/context.js';
import type { OwedDecision } from '../../../src/daemon/model/record.js';
import { cleanupPrefix, REDIS_URL, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('owed-lines');
const redis = new Redis(REDIS_URL);

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  await redis.quit();
});

const T0 = 1_764_341_292_200;
const TIMEOUT = 10_000;
const LINE: OwedDecision = {
  kind: 'applied',
  direction: 'up',
  reason: 'window',
  windows: ['peak'],
  before: { replicas: 1 },
  after: { replicas: 1 },
  target: { replicas: 10 },
  reasons: [{ code: 'window', field: 'replicas', message: 'peak sets replicas 10' }],
  requestId: 'req-1',
  idempotencyKey: '00ac5a7f',
};

/** A replica's context as writeOwedLines reads it: its store, emitter, clock and api.timeout. */
function replica(now: () => number) {
  const emitter = new DaemonEmitter();
  const lines: DaemonEvents['decision'][] = [];
  emitter.on('decision', (d) => lines.push(d));
  const ctx = {
    store: new StateStore(redis, prefix),
    emitter,
    logger: silentLogger,
    now,
    config: () => ({ api: { timeoutMs: TIMEOUT } }),
  } as unknown as DaemonContext;
  return { ctx, lines };
}

describe('writeOwedLines', () => {
  it('writes a due owed line once across replicas, with the instant of its 200, and clears it', async () => {
    const pipe = 'stream-75';
    const store = new StateStore(redis, prefix);
    const intent = { sent: { replicas: 10 }, at: T0 - 400, code: 'in_flight', id: 'i1', until: T0 + 9_600 };
    await store.write(pipe, { ref: 'o/s/p', unsettled: intent });
    const owed = owedLine('i1', LINE, T0, TIMEOUT);
    expect(await store.recordAnswer(pipe, 'i1', { unsettled: null }, owed)).toBe('recorded');

    // within its grace: its sender may still write it
    let at = T0 + TIMEOUT + 5_000;
    const early = replica(() => at);
    await writeOwedLines(early.ctx, pipe, (await store.snapshot(pipe)).owed);
    expect(early.lines).toEqual([]);

    // due: three replicas find it in their snapshots at once
    at = owed.dueAt + 1_000;
    const snap = await store.snapshot(pipe);
    const replicas = [replica(() => at), replica(() => at), replica(() => at)];
    await Promise.all(replicas.map((r) => writeOwedLines(r.ctx, pipe, snap.owed)));
    const written = replicas.flatMap((r) => r.lines);
    const { kind: _kind, ...line } = LINE;
    expect(written).toEqual([{ pipe, ...line, result: 'applied', answeredAt: T0 }]);
    expect((await store.snapshot(pipe)).owed).toEqual([]);
  });
});
