// GET /history on the telemetry server: one pipe's entries as JSON in pages, each mistake a 400
// naming the parameter, a pipe outside the config a 404, and nothing but GET.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { HistoryStore, historyRoute } from '../../src/history/index.js';
import { Registry, startTelemetry } from '../../src/telemetry/index.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../daemon/helpers.js';

const prefix = uniquePrefix('history-route');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('GET /history', () => {
  it('pages one pipe newest first and refuses what it cannot answer', async () => {
    const store = new HistoryStore(redis, prefix);
    const now = Date.now();
    for (let i = 0; i < 25; i++)
      await store.append(
        { pipe: 'orders-events', outcome: i % 2 ? 'applied' : 'skipped', at: now - (25 - i) * 60_000, reason: `r${i}` },
        { retentionMs: 86_400_000, maxEntries: 100 },
      );
    const server = await startTelemetry({
      listen: '127.0.0.1:0',
      registry: new Registry(),
      readiness: () => ({ redis: true, config: true, api: true }),
      routes: { '/history': historyRoute(store, () => ['orders-events']) },
    });
    const get = async (q: string) => {
      const res = await fetch(`${server.url}/history${q}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const page1 = await get('?pipe=orders-events&since=1h&limit=10');
    expect(page1.status).toBe(200);
    const entries = page1.body.entries as { reason: string; first: string; count: number }[];
    expect(entries.map((e) => e.reason)).toEqual([
      'r24',
      'r23',
      'r22',
      'r21',
      'r20',
      'r19',
      'r18',
      'r17',
      'r16',
      'r15',
    ]);
    expect(entries[0]).toMatchObject({ count: 1, first: new Date(now - 60_000).toISOString() });
    expect(page1.body.next).toBe(10);
    const page3 = await get('?pipe=orders-events&since=1h&limit=10&offset=20');
    expect((page3.body.entries as unknown[]).length).toBe(5);
    expect(page3.body.next).toBeNull();
    const applied = await get('?pipe=orders-events&since=10m30s&outcome=applied');
    expect((applied.body.entries as { reason: string }[]).map((e) => e.reason)).toEqual([
      'r23',
      'r21',
      'r19',
      'r17',
      'r15',
    ]);

    expect(await get('')).toEqual({ status: 400, body: { error: expect.stringMatching(/^pipe: required/) } });
    expect((await get('?pipe=orders-events&since=soon')).body.error).toMatch(/^since: "soon" is neither/);
    // a duration past what a date can hold was a 500
    expect(await get('?pipe=orders-events&since=99999999999d')).toEqual({
      status: 400,
      body: { error: 'since: "99999999999d" reaches back before 1970-01-01' },
    });
    expect((await get(`?pipe=orders-events&since=${'9'.repeat(400)}d`)).status).toBe(400);
    expect((await get('?pipe=orders-events&outcome=nope')).body.error).toMatch(/^outcome: "nope" is not an outcome/);
    expect((await get('?pipe=orders-events&limit=5000')).body.error).toBe('limit: must be an integer from 0 to 1000');
    expect((await get('?pipe=other')).status).toBe(404);
    expect((await fetch(`${server.url}/history?pipe=orders-events`, { method: 'POST' })).status).toBe(405);
    await server.close();
  });
});
