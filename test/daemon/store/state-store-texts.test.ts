// Texts from elsewhere are bounded where the state store writes them: a platform error page of
// 3 MB, a pause reason written by hand into a script. A record stays small, whoever wrote the text.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_TEXT } from '../../../src/api/internal.js';
import { StateStore } from '../../../src/daemon/store/state-store.js';
import { cleanupPrefix, REDIS_URL, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('state-texts');
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

const HUGE = `SERVER_ERROR: ${'<html>'.repeat(500_000)}`; // 3 MB

describe('stored texts', () => {
  it('an API error text of 3 MB is stored as its first MAX_TEXT characters', async () => {
    await store.write('orders', { lastError: { at: 1, code: 'API_SERVER_ERROR', message: HUGE } });
    const field = await redis.hget(store.keys.pipe('orders'), 'lastError');
    expect(field!.length).toBeLessThan(MAX_TEXT + 200);
    const rec = await store.read('orders');
    expect(rec.lastError?.message.startsWith('SERVER_ERROR: <html><html>')).toBe(true);
    expect(rec.lastError?.message).toMatch(/\.\.\. \(\d+ more characters\)$/);
  });

  it('a decision whose reasons quote a long text is bounded too, and a short record is stored as it is', async () => {
    const decision = {
      at: 5,
      action: 'skip' as const,
      direction: 'none' as const,
      windows: [],
      desired: {},
      changes: {},
      reasons: [{ code: 'pipe_state' as const, message: HUGE }],
    };
    expect(await store.writeDecision('orders', 5, { lastDecision: decision, applied: { replicas: 2 } })).toBe(true);
    expect((await redis.hget(store.keys.pipe('orders'), 'lastDecision'))!.length).toBeLessThan(MAX_TEXT + 300);
    expect(await redis.hget(store.keys.pipe('orders'), 'applied')).toBe('{"replicas":2}');
  });

  it('a pause reason is bounded', async () => {
    const orders = {
      name: 'orders',
      organizationId: '00000000-0000-4000-8000-000000000001',
      serviceId: '00000000-0000-4000-8000-000000000002',
      pipeId: '00000000-0000-4000-8000-000000000003',
    };
    await store.operator.setPause(orders, { reason: 'r'.repeat(100_000) });
    expect((await store.operator.pause(orders))!.reason.length).toBeLessThan(MAX_TEXT + 40);
  });
});
