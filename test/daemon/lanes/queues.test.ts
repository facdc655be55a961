import { Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { limiterFor } from '../../../src/daemon/lanes/lanes.js';
import {
  applyJobId,
  applyJobOptions,
  applyPriority,
  confirmOrderOf,
  applyQueueName,
  chosenBackoff,
  evaluateJobId,
  type TurnName,
} from '../../../src/daemon/lanes/queues.js';
import type { Direction } from '../../../src/policy/index.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('queues');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

describe('queue names, ids and options', () => {
  it('evaluation ids are per pipe and tick second, with no ":" and never all digits', () => {
    const id = evaluateJobId('orders-events', Date.parse('2026-11-23T10:00:00.750Z'));
    expect(id).toBe('orders-events-1795428000');
    expect(evaluateJobId('a:b', 1_000, '-contact')).toBe('a_b-1-contact');
    expect(applyQueueName('key:with/odd chars')).toBe('apply-key_with_odd_chars');
  });

  it('apply job ids sort as text in the order they were made (BullMQ orders the jobs a rate limit sent back by id)', () => {
    const t = Date.parse('2026-11-23T10:00:00Z');
    const ids = [applyJobId(t), applyJobId(t), applyJobId(t + 1), applyJobId(t + 999), applyJobId(t + 10_000)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.every((id) => !/^\d+$/.test(id) && !id.includes(':'))).toBe(true);
    expect(
      applyJobOptions('reconcile', 'p', 'none', t).jobId! < applyJobOptions('reconcile', 'p', 'none', t + 1).jobId!,
    ).toBe(true);
  });

  it('changes go before reads, scale-ups first; one pending turn per pipe', () => {
    const up = applyJobOptions('change', 'p', 'up');
    const read = applyJobOptions('reconcile', 'p', 'none');
    const down = applyJobOptions('change', 'p', 'down');
    // Changes before reads (a change's answer is a read too), scale-ups first.
    expect(up.priority!).toBeLessThan(down.priority!);
    expect(down.priority!).toBeLessThan(read.priority!);
    // A read that a change waits for (a first contact, a change of unknown outcome to settle) goes
    // before the reconcile reads: a cold start's reads of pipes already changed came between them.
    const contact = applyJobOptions('first_contact', 'p', 'none');
    expect(applyJobOptions('settle', 'p', 'none').priority).toBe(contact.priority);
    const confirm = applyJobOptions('confirm', 'p', 'none');
    expect(down.priority!).toBeLessThan(contact.priority!);
    expect(contact.priority!).toBeLessThan(confirm.priority!);
    expect(confirm.priority!).toBeLessThan(read.priority!);
    expect(up.deduplication).toEqual({ id: 'p', keepLastIfActive: true });
    expect(down.deduplication).toEqual(up.deduplication);
    expect(up.backoff).toMatchObject({ type: 'chosen' });
  });

  // Under a full read share, a boundary's first changes are read on time (and measured), the
  // later ones wait their turn, rather than every change's back-off reads coming late.
  it("orders confirmation reads by their change's send, oldest first, all between contacts and reconcile reads", () => {
    const T = Date.parse('2026-11-27T08:00:00Z');
    const at = (sentAt: number, now = T + 600_000) => applyJobOptions('confirm', 'p', 'none', now, sentAt).priority!;
    const contact = applyJobOptions('first_contact', 'p', 'none').priority!;
    const read = applyJobOptions('reconcile', 'p', 'none').priority!;
    // a read of an older change goes first, whenever each fell due
    expect(at(T)).toBeLessThan(at(T + 1_000, T));
    expect(at(T)).toBe(at(T + 999));
    for (const sentAt of [0, T, T + 12 * 86_400_000, 2 ** 45]) {
      expect(at(sentAt)).toBeGreaterThan(contact);
      expect(at(sentAt)).toBeLessThan(read);
    }
    // BullMQ's limit
    expect(read).toBeLessThan(2 ** 21);
    // without its change's send (a turn moved to another key): ordered as made
    expect(applyJobOptions('confirm', 'p', 'none', T).priority).toBe(at(T));
    expect(applyPriority('confirm', 'none')).toBe(contact + 1);
    // a turn moved to another key's queue keeps its place
    for (const sentAt of [T, T + 12 * 86_400_000 + 1_500]) {
      const opts = applyJobOptions('confirm', 'p', 'none', T + 600_000, sentAt);
      const moved = confirmOrderOf({ name: 'confirm', opts });
      expect(applyJobOptions('confirm', 'p', 'none', T + 900_000, moved).priority).toBe(opts.priority);
    }
    expect(confirmOrderOf({ name: 'read', opts: { priority: read } })).toBeUndefined();
  });

  it('BullMQ takes waiting turns in that order: changes, contacts, confirmations oldest change first, reconcile reads', async () => {
    const name = 'apply-order';
    const queue = new Queue(name, { connection: redis, prefix });
    const T = Date.parse('2026-11-27T08:00:00Z');
    const turns: [string, TurnName, Direction, number?][] = [
      ['reconcile', 'reconcile', 'none'],
      ['confirm of T+2s', 'confirm', 'none', T + 2_000],
      ['confirm of T', 'confirm', 'none', T],
      ['contact', 'first_contact', 'none'],
      ['down', 'change', 'down'],
      ['confirm of T+1s', 'confirm', 'none', T + 1_000],
      ['up', 'change', 'up'],
    ];
    for (const [pipe, turn, direction, sentAt] of turns)
      await queue.add(turn, { pipe }, applyJobOptions(turn, pipe, direction, T + 60_000, sentAt));
    const order: string[] = [];
    const worker = new Worker(name, async (job: Job<{ pipe: string }>) => void order.push(job.data.pipe), {
      connection: redis,
      prefix,
      concurrency: 1,
    });
    try {
      await new Promise<void>((resolve) => worker.on('completed', () => order.length === turns.length && resolve()));
      expect(order).toEqual([
        'up',
        'down',
        'contact',
        'confirm of T',
        'confirm of T+1s',
        'confirm of T+2s',
        'reconcile',
      ]);
    } finally {
      await worker.close(true);
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  it("BullMQ's limiter paces nothing (the key's budget does); it is set only so queue.rateLimit() is honored", () => {
    expect(limiterFor({ keyId: 'k', keySecret: 's', rateLimit: { requests: 10, perMs: 10_000 } }).max).toBeGreaterThan(
      10_000,
    );
  });

  it("a retry waits the delay its processor chose; one without waits as a pipe's backoff does, from 1 s", () => {
    expect(chosenBackoff(2, 'chosen', Object.assign(new Error('x'), { retryDelayMs: 1_234 }))).toBe(1_234);
    for (let a = 1; a <= 8; a++) {
      const d = chosenBackoff(a, 'chosen', new Error('x'));
      expect(d).toBeGreaterThanOrEqual(Math.min(1_000 * 2 ** (a - 1), 60_000));
      expect(d).toBeLessThanOrEqual(Math.min(1_500 * 2 ** (a - 1), 60_000));
    }
  });

  it('BullMQ waits exactly the delay the processor chose and reported', async () => {
    const name = 'apply-backoff';
    const queue = new Queue(name, { connection: redis, prefix });
    const worker = new Worker(
      name,
      async () => {
        throw Object.assign(new Error('server error'), { retryDelayMs: 3_210 });
      },
      { connection: redis, prefix, settings: { backoffStrategy: chosenBackoff } },
    );
    try {
      const failed = new Promise<void>((resolve) => worker.once('failed', () => resolve()));
      const job = await queue.add('change', {}, applyJobOptions('change', 'p', 'up'));
      await failed;
      expect(await job.getState()).toBe('delayed');
      expect((await Job.fromId(queue, job.id!))!.delay).toBe(3_210);
    } finally {
      await worker.close(true);
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});
