// History in the real Redis: newest first, identical repeats collapse (also when two clients
// write at once), bounded by size and by age, and read back by time, outcome and page.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { HistoryStore, historyLimits, type Outcome } from '../../src/history/index.js';
import { parseConfig } from '../../src/config/load.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../daemon/helpers.js';

const prefix = uniquePrefix('history');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const other = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const T0 = Date.parse('2026-11-23T08:00:00Z');
const limits = { retentionMs: 42 * 86_400_000, maxEntries: 2_000 };

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
  other.disconnect();
});

const skip = (pipe: string, at: number, reason: string): Outcome => ({ pipe, outcome: 'skipped', at, reason });

describe('HistoryStore', () => {
  it('keeps outcomes newest first and collapses identical repeats with a count and first/last time', async () => {
    const store = new HistoryStore(redis, prefix);
    expect(await store.append(skip('a', T0, 'cooldown'), limits)).toBe(false);
    expect(await store.append(skip('a', T0 + 1_000, 'cooldown'), limits)).toBe(true);
    expect(await store.append(skip('a', T0 + 2_000, 'cooldown'), limits)).toBe(true);
    await store.append(skip('a', T0 + 3_000, 'paused'), limits);
    await store.append(skip('a', T0 + 4_000, 'cooldown'), limits);
    const { entries } = await store.read('a');
    expect(entries.map((e) => [e.reason, e.count, e.first - T0, e.last - T0])).toEqual([
      ['cooldown', 1, 4_000, 4_000],
      ['paused', 1, 3_000, 3_000],
      ['cooldown', 3, 0, 2_000],
    ]);
  });

  it('replicas writing the same repeat at once leave one entry counting all of them', async () => {
    const a = new HistoryStore(redis, prefix);
    const b = new HistoryStore(other, prefix);
    const failed = (i: number): Outcome => ({
      pipe: 'b',
      outcome: 'failed',
      at: T0 + i,
      reason: 'API_UNAVAILABLE',
      requestId: `r${i}`,
    });
    await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).append(failed(i), limits)));
    const { entries } = await a.read('b');
    expect(entries).toHaveLength(1);
    expect(entries[0]?.count).toBe(200);
  });

  it('is bounded by maxEntries and by age, and expires a pipe that went quiet', async () => {
    const store = new HistoryStore(redis, prefix);
    const small = { retentionMs: 10 * 86_400_000, maxEntries: 10 };
    for (let i = 0; i < 30; i++) await store.append(skip('c', T0 + i * 1_000, `r${i}`), small);
    let { entries } = await store.read('c');
    expect(entries).toHaveLength(10);
    expect(entries[0]?.reason).toBe('r29');
    // eleven days later: everything older than ten days goes with the next write
    await store.append(skip('c', T0 + 11 * 86_400_000, 'late'), small);
    ({ entries } = await store.read('c'));
    expect(entries.map((e) => e.reason)).toEqual(['late']);
    const ttl = await redis.pttl(store.key('c'));
    expect(ttl).toBeGreaterThan(9 * 86_400_000);
    expect(ttl).toBeLessThanOrEqual(small.retentionMs);
  });

  it('reads by time, by outcome and in pages', async () => {
    const store = new HistoryStore(redis, prefix);
    for (let i = 0; i < 25; i++)
      await store.append(
        { pipe: 'd', outcome: i % 5 === 0 ? 'applied' : 'skipped', at: T0 + i * 60_000, reason: `r${i}` },
        limits,
      );
    expect((await store.read('d', { since: T0 + 20 * 60_000 })).entries).toHaveLength(5);
    expect((await store.read('d', { outcomes: ['applied'] })).entries.map((e) => e.reason)).toEqual([
      'r20',
      'r15',
      'r10',
      'r5',
      'r0',
    ]);
    const first = await store.read('d', { limit: 10 });
    expect(first.entries).toHaveLength(10);
    expect(first.next).toBe(10);
    const rest = await store.read('d', { limit: 10, offset: 20 });
    expect(rest.entries.map((e) => e.reason)).toEqual(['r4', 'r3', 'r2', 'r1', 'r0']);
    expect(rest.next).toBeNull();
  });

  it('a total cap: the fleet keeps at most history.maxTotalEntries, each pipe an equal share', async () => {
    const config = parseConfig('api:\n  baseUrl: embedded\nhistory: { maxEntries: 50, maxTotalEntries: 20 }\n', {
      file: 'c.yaml',
      env: {},
    });
    expect(config.history).toEqual({ retentionMs: 42 * 86_400_000, maxEntries: 50, maxTotalEntries: 20 });
    const pipes = ['t1', 't2', 't3', 't4', 't5'];
    const each = historyLimits(config.history, pipes.length);
    expect(each).toEqual({ retentionMs: 42 * 86_400_000, maxEntries: 4 });
    const store = new HistoryStore(redis, prefix);
    for (const pipe of pipes)
      for (let i = 0; i < 12; i++) await store.append(skip(pipe, T0 + i * 1_000, `r${i}`), each);
    const lengths = await Promise.all(pipes.map((p) => redis.llen(store.key(p))));
    expect(lengths).toEqual([4, 4, 4, 4, 4]);
    expect(lengths.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(20);
    // the newest stay
    expect((await store.read('t1')).entries.map((e) => e.reason)).toEqual(['r11', 'r10', 'r9', 'r8']);
  });

  it('historyLimits: per pipe maxEntries alone, the lower of the two, at least one entry', () => {
    const h = { retentionMs: 1_000, maxEntries: 2_000 };
    expect(historyLimits(h, 2_000)).toEqual(h);
    expect(historyLimits({ ...h, maxTotalEntries: 1_000_000 }, 2_000)).toEqual({ retentionMs: 1_000, maxEntries: 500 });
    expect(historyLimits({ ...h, maxTotalEntries: 100_000_000 }, 2_000)).toEqual(h);
    expect(historyLimits({ ...h, maxTotalEntries: 10 }, 2_000)).toEqual({ retentionMs: 1_000, maxEntries: 1 });
    expect(historyLimits(undefined, 3)).toEqual({ retentionMs: 42 * 86_400_000, maxEntries: 2_000 });
  });
});
