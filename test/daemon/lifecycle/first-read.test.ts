// The record keeps its first read of the pipe (seenAt, written by the first contact's answers.ts
// afterRead and never again): a window start before it was judged on nothing the daemon read by its
// boundary (policy/verdict.ts judgeVerdict), as when a first-contact read's answer went to a
// replica SIGKILLed before it recorded it and the pipe was read again only after three starts.
import { describe, expect, it } from 'vitest';
import type { PipeScaling } from '../../../src/api/index.js';
import { afterRead } from '../../../src/daemon/lifecycle/answers.js';
import { parseRecord, refOf, type PipeRecord } from '../../../src/daemon/model/record.js';
import { demoPipe } from '../helpers.js';

const T0 = Date.parse('2026-11-28T08:56:00Z');
const pipe = demoPipe('orders-events', 'streams');
const ctx = {
  ref: refOf(pipe),
  continuousReads: false,
  dryRun: false,
  timing: { expectedMs: 0, limitMs: 30_000, firstReadMs: 1_000 },
};
const running = (values: Partial<PipeScaling>) => ({
  kind: 'stream' as const,
  state: 'Running' as const,
  scaling: { concurrency: null, ...values } as PipeScaling,
  endpointIds: [],
});
const AT = { replicas: 1, replicaCpuMillicores: 250, replicaMemoryGb: 1 };

describe("the record's first read", () => {
  it('the first contact writes it; later reads keep it', () => {
    const never = parseRecord({}).rec;
    expect(never.seenAt).toBeNull();
    const first = afterRead(never, running(AT), T0 + 25_818, ctx);
    expect(first.write.seenAt).toBe(T0 + 25_818);
    const rec: PipeRecord = { ...never, ...first.write };
    const again = afterRead(rec, running(AT), T0 + 48_420, ctx);
    expect(again.write.seenAt).toBeUndefined();
    expect({ ...rec, ...again.write }.seenAt).toBe(T0 + 25_818);
  });

  it('a record read before it was kept is not given one by a later read', () => {
    const old: PipeRecord = { ...parseRecord({}).rec, kind: 'stream', ref: refOf(pipe), lastReadAt: T0, applied: AT };
    expect(afterRead(old, running(AT), T0 + 30_000, ctx).write.seenAt).toBeUndefined();
  });

  it('is stored and read back like the other fields', () => {
    expect(parseRecord({ seenAt: String(T0 + 25_818) }).rec.seenAt).toBe(T0 + 25_818);
    expect(parseRecord({ seenAt: 'null' }).rec.seenAt).toBeNull();
  });
});
