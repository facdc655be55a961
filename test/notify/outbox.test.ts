// The notification outbox against a real HTTP receiver and the real Redis: a receiver that answers
// 5xx, then never (timeouts), then refuses connections, loses no event; a resend carries the same
// event id; every signature verifies; 1,000 outcomes in one period are one message per sink.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/history/index.js';
import {
  EVENT_ID_HEADER,
  Notifier,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifySignature,
  type NotifyEvent,
} from '../../src/notify/index.js';
import type { NotifySettings, NotifySink } from '../../src/config/types.js';
import { FAST_WORKERS, REDIS_URL, cleanupPrefix, uniquePrefix, until } from '../daemon/helpers.js';
import { startReceiver, type Received } from './receiver.js';

const prefixes: string[] = [];
/** Each test its own prefix: a batch one test left must not reach the next test's receiver. */
const freshPrefix = (): string => {
  prefixes.push(uniquePrefix('notify'));
  return prefixes.at(-1)!;
};
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const SECRET = 'test-hmac-secret-0123456789';

afterAll(async () => {
  for (const p of prefixes) await cleanupPrefix(redis, p);
  redis.disconnect();
});

function sink(name: string, url: string, over: Partial<NotifySink> = {}): NotifySink {
  return {
    name,
    type: 'webhook',
    url,
    secret: SECRET,
    events: null,
    pipes: null,
    severity: 'info',
    timeoutMs: 300,
    attempts: 30,
    backoffMs: 20,
    ...over,
  };
}

const applied = (i: number, at: number): Outcome => ({
  pipe: `pipe-${i}`,
  outcome: 'applied',
  at,
  reason: 'window',
  before: { replicas: 2 },
  after: { replicas: 6 },
  windows: ['business-hours'],
  key: 'default',
  requestId: `req-${i}`,
});

/** The events a request carried: itself, or a summary's list. */
function eventsOf(r: Received): NotifyEvent[] {
  const body = JSON.parse(r.body) as NotifyEvent & { events?: NotifyEvent[] };
  return body.events ?? [body];
}

describe('the notification outbox', () => {
  it('loses nothing while the receiver fails (5xx, timeouts, refused), resends under the same id, signs every request', async () => {
    const receiver = await startReceiver();
    // first the receiver is gone (connections refused) until two attempts have failed so; then it
    // answers 503 three times, then never twice (the attempt's 300 ms timeout ends those), then 200
    await receiver.close();
    receiver.answer = (n) => (n < 3 ? 503 : n < 5 ? 'hang' : 200);
    let clock = Date.parse('2026-11-23T08:00:00Z');
    const retries: string[] = [];
    const settings: NotifySettings = { coalesceMs: 1_000, sinks: [sink('ops', receiver.url)] };
    const notifier = new Notifier({
      redis,
      prefix: freshPrefix(),
      settings: () => settings,
      now: () => clock,
      workerOptions: FAST_WORKERS,
      onDelivery: (d) => {
        if (d.result === 'retry') retries.push(d.error ?? '');
      },
    });
    // 40 outcomes over 8 coalescing periods
    for (let i = 0; i < 40; i++) {
      clock += 200;
      notifier.publish(applied(i, clock));
    }
    await notifier.flush();
    const refused = () => retries.filter((e) => e === 'connection failed (ECONNREFUSED)').length;
    await until(() => refused() >= 2, 20_000);
    await receiver.reopen();
    const delivered = () =>
      new Set(receiver.received.filter((r) => r.answer === 200).flatMap((r) => eventsOf(r).map((e) => e.pipe)));
    await until(() => delivered().size === 40, 30_000);
    await notifier.close();

    expect(delivered().size).toBe(40);
    expect(retries.some((e) => e.includes('HTTP 503'))).toBe(true);
    expect(retries.some((e) => e.includes('no answer within 300 ms'))).toBe(true);
    expect(refused()).toBeGreaterThanOrEqual(2);
    // every resend of a message carries its id; an id always carries the same events
    const byId = new Map<string, string>();
    for (const r of receiver.received) {
      const id = String(r.headers[EVENT_ID_HEADER]);
      const ids = eventsOf(r)
        .map((e) => e.id)
        .join(',');
      expect(byId.get(id) ?? ids).toBe(ids);
      byId.set(id, ids);
      expect((JSON.parse(r.body) as { id: string }).id).toBe(id);
      const ts = String(r.headers[TIMESTAMP_HEADER]);
      expect(verifySignature(SECRET, ts, r.body, String(r.headers[SIGNATURE_HEADER]))).toBe(true);
      expect(verifySignature('another-secret', ts, r.body, String(r.headers[SIGNATURE_HEADER]))).toBe(false);
    }
    expect(receiver.received.length).toBeGreaterThan(byId.size); // there were resends
    const firstEvent = eventsOf(receiver.received.find((r) => r.answer === 200)!)[0]!;
    expect(firstEvent).toMatchObject({ type: 'applied', severity: 'info', reason: 'window', key: 'default' });
    await receiver.stop();
  }, 90_000);

  it('1,000 outcomes in one period are one summary per sink, each sink filtered', async () => {
    const hook = await startReceiver();
    const slack = await startReceiver();
    const bus = await startReceiver();
    const coalesceMs = 60_000;
    // the last 300 ms of a period: the batch goes out when it ends (plus BullMQ's 2 s grace)
    const clock = Math.ceil(Date.now() / coalesceMs) * coalesceMs + 5 * coalesceMs - 300;
    const settings: NotifySettings = {
      coalesceMs,
      sinks: [
        sink('ops', hook.url),
        sink('team', slack.url, { type: 'slack', secret: undefined }),
        sink('bus', bus.url, { type: 'cloudevents', secret: undefined, events: ['failed'] }),
      ],
    };
    const notifier = new Notifier({
      redis,
      prefix: freshPrefix(),
      settings: () => settings,
      now: () => clock,
      workerOptions: FAST_WORKERS,
    });
    for (let i = 0; i < 999; i++) notifier.publish(applied(i, clock));
    notifier.publish({ pipe: 'pipe-7', outcome: 'failed', at: clock, reason: 'API_UNAVAILABLE' });
    await notifier.flush();
    await until(() => hook.received.length >= 1 && slack.received.length >= 1 && bus.received.length >= 1, 20_000);
    await notifier.close();

    expect(hook.received).toHaveLength(1);
    const summary = JSON.parse(hook.received[0]!.body) as {
      type: string;
      count: number;
      outcomes: object;
      events: NotifyEvent[];
    };
    expect(summary).toMatchObject({ type: 'summary', count: 1_000, outcomes: { applied: 999, failed: 1 } });
    expect(new Set(summary.events.map((e) => e.id)).size).toBe(1_000);

    expect(slack.received).toHaveLength(1);
    const text = (JSON.parse(slack.received[0]!.body) as { text: string }).text;
    expect(text).toMatch(/^:x: pipescaler: 1000 outcomes \(applied 999, failed 1\) for pipe-\d+, .* and 989 more$/);
    expect(slack.received[0]!.headers[SIGNATURE_HEADER]).toBeUndefined();

    // the bus wants failures only: one event, as a CloudEvent
    expect(bus.received).toHaveLength(1);
    expect(bus.received[0]!.headers['content-type']).toBe('application/cloudevents+json');
    expect(JSON.parse(bus.received[0]!.body)).toMatchObject({
      specversion: '1.0',
      source: '/pipescaler',
      type: 'io.pipescaler.outcome.failed',
      subject: 'pipe-7',
      datacontenttype: 'application/json',
      data: { pipe: 'pipe-7', reason: 'API_UNAVAILABLE', severity: 'error' },
    });
    for (const r of [hook, slack, bus]) await r.stop();
  }, 60_000);

  it('a batch that fails its last attempt is a dead letter, reported once', async () => {
    const receiver = await startReceiver();
    receiver.answer = () => 500;
    const results: string[] = [];
    const settings: NotifySettings = { coalesceMs: 0, sinks: [sink('ops', receiver.url, { attempts: 3 })] };
    const notifier = new Notifier({
      redis,
      prefix: freshPrefix(),
      settings: () => settings,
      workerOptions: FAST_WORKERS,
      onDelivery: (d) => results.push(d.result),
    });
    notifier.publish(applied(1, Date.now()));
    await until(() => results.includes('dead'), 20_000);
    await notifier.close();
    expect(results).toEqual(['retry', 'retry', 'dead']);
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers[EVENT_ID_HEADER])).size).toBe(1);
    await receiver.stop();
  });
});
