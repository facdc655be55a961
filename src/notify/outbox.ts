// The notification outbox in Redis, shared by every replica. An outcome a sink wants is pushed onto
// that sink's batch for the current coalescing period (a Redis list), and a BullMQ job with the
// batch's id is added, delayed to the period's end; every replica adds the same id, so BullMQ keeps
// one. The job closes its batch (late pushes then go to the next period), sends it as one message
// (a summary when it holds several outcomes), and deletes it only once the sink answered 2xx: a
// failed attempt, a timeout or a replica killed mid-send leaves the batch for BullMQ's retry (with
// backoff) or for its stalled-job check on another replica. Delivery is at-least-once, every
// resend under the same id. Publishing never awaits any of it, so no scaling decision waits for a
// sink; jobs that exhaust their attempts stay in the failed set, counted as dead letters.
import { Queue, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { Cluster, Redis, Result } from 'ioredis';
import type { Outcome } from '../history/index.js';
import type { NotifySettings, NotifySink } from '../config/index.js';
import { sinkWants, toEvent, type NotifyEvent } from './event.js';
import { messagesFor } from './payloads.js';
import { send } from './send.js';

export const NOTIFY_QUEUE = 'notify';
/** A batch (and its closed mark) outlives any retry schedule; then Redis drops it. */
const BATCH_TTL_MS = 7 * 86_400_000;
const KEEP_S = 86_400;

// KEYS: the batch, its closed mark. ARGV: the event (JSON), the TTL. -1 when closed, else its length.
const PUSH_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
local n = redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return n
`;
// KEYS: the batch, its closed mark. ARGV: the TTL. Closes the batch and returns what it holds.
const CLOSE_SCRIPT = `
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return redis.call('LRANGE', KEYS[1], 0, -1)
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    pipescalerNotifyPush(batch: string, closed: string, event: string, ttlMs: string): Result<number, Context>;
    pipescalerNotifyClose(batch: string, closed: string, ttlMs: string): Result<string[], Context>;
  }
}

export interface NotifyJob {
  readonly sink: string;
  readonly batch: string;
  /** Messages of the batch the sink already accepted (a large batch goes out in parts). */
  readonly sent?: number;
}

export type DeliveryResult = 'delivered' | 'retry' | 'dead';

export interface NotifierOptions {
  readonly redis: Redis | Cluster;
  readonly prefix: string;
  /** The settings in force (asked at each outcome and each delivery, so a reload applies). */
  readonly settings: () => NotifySettings | undefined;
  /** The clock of the coalescing periods; default Date.now. */
  readonly now?: () => number;
  /** Deliver here too (default true); false only publishes (`notify test` sends directly). */
  readonly consume?: boolean;
  readonly workerOptions?: Partial<WorkerOptions>;
  readonly onDelivery?: (d: { sink: string; result: DeliveryResult; events: number; error?: string }) => void;
  readonly onError?: (err: Error) => void;
}

const definedOn = new WeakSet<Redis | Cluster>();

export class Notifier {
  private readonly queue: Queue<NotifyJob>;
  private readonly worker: Worker<NotifyJob> | null;
  private readonly pending = new Set<Promise<void>>();
  /** Batches this replica already added a job for: one add per batch and replica, not per outcome. */
  private readonly added = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly o: NotifierOptions) {
    this.now = o.now ?? Date.now;
    if (!definedOn.has(o.redis)) {
      o.redis.defineCommand('pipescalerNotifyPush', { numberOfKeys: 2, lua: PUSH_SCRIPT });
      o.redis.defineCommand('pipescalerNotifyClose', { numberOfKeys: 2, lua: CLOSE_SCRIPT });
      definedOn.add(o.redis);
    }
    this.queue = new Queue<NotifyJob>(NOTIFY_QUEUE, { connection: o.redis, prefix: o.prefix });
    this.queue.on('error', (err) => o.onError?.(err));
    this.worker =
      o.consume === false
        ? null
        : new Worker<NotifyJob>(NOTIFY_QUEUE, (job) => this.deliver(job), {
            connection: o.redis,
            prefix: o.prefix,
            concurrency: 8,
            lockDuration: 10_000,
            stalledInterval: 5_000,
            ...o.workerOptions,
          });
    this.worker?.on('error', (err) => o.onError?.(err));
    this.worker?.on('failed', (job, err) => {
      if (!job) return;
      const dead = job.attemptsMade >= (job.opts.attempts ?? 1);
      o.onDelivery?.({ sink: job.data.sink, result: dead ? 'dead' : 'retry', events: 0, error: err.message });
    });
  }

  /** Queue the outcome for every sink that wants it; never throws, never waits. */
  publish(outcome: Outcome): void {
    const settings = this.o.settings();
    if (!settings || settings.sinks.length === 0) return;
    const sinks = settings.sinks.filter((s) => sinkWants(s, outcome));
    if (sinks.length === 0) return;
    const event = toEvent(outcome);
    const p = Promise.all(sinks.map((s) => this.enqueue(s, settings.coalesceMs, event))).then(
      () => undefined,
      (err: unknown) => this.o.onError?.(err instanceof Error ? err : new Error(String(err))),
    );
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private keys(sink: string, batch: string) {
    const base = `${this.o.prefix}:ps:notify:${sink}:${batch}`;
    return { list: base, closed: `${base}:closed` };
  }

  private async enqueue(sink: NotifySink, coalesceMs: number, event: NotifyEvent): Promise<void> {
    const json = JSON.stringify(event);
    const now = this.now();
    // a batch closed meanwhile (a slow push, another replica's clock ahead): the next period's
    for (let period = Math.floor(now / Math.max(1, coalesceMs)); ; period++) {
      const batch = coalesceMs === 0 ? `e${event.id}` : String(period * coalesceMs);
      const jobId = `${sink.name}-${batch}`;
      // the job first: a replica killed between the two leaves a job with nothing to send, never a
      // batch without a job
      if (!this.added.has(jobId)) {
        const end = coalesceMs === 0 ? now : (period + 1) * coalesceMs;
        await this.queue.add('deliver', { sink: sink.name, batch } satisfies NotifyJob, {
          jobId,
          delay: Math.max(0, end - now) + Math.min(2_000, coalesceMs / 4),
          attempts: sink.attempts,
          backoff: { type: 'exponential', delay: sink.backoffMs },
          removeOnComplete: { age: KEEP_S },
          removeOnFail: { age: BATCH_TTL_MS / 1000 },
        });
        this.added.set(jobId, now);
        this.forgetOld(now, coalesceMs);
      }
      const { list, closed } = this.keys(sink.name, batch);
      const n = await this.o.redis.pipescalerNotifyPush(list, closed, json, String(BATCH_TTL_MS));
      if (n >= 0 || coalesceMs === 0) return;
    }
  }

  private forgetOld(now: number, coalesceMs: number): void {
    if (this.added.size < 1_000) return;
    for (const [id, at] of this.added) if (now - at > 2 * coalesceMs + 60_000) this.added.delete(id);
  }

  private async deliver(job: Job<NotifyJob>): Promise<string> {
    const { sink: name, batch } = job.data;
    const { list, closed } = this.keys(name, batch);
    const raw = await this.o.redis.pipescalerNotifyClose(list, closed, String(BATCH_TTL_MS));
    const sink = this.o.settings()?.sinks.find((s) => s.name === name);
    if (!sink) {
      // a reload took the sink out: nothing to send it to
      await this.o.redis.del(list);
      return 'no_sink';
    }
    const events = raw.flatMap((s): NotifyEvent[] => {
      try {
        return [JSON.parse(s) as NotifyEvent];
      } catch {
        return [];
      }
    });
    const messages = messagesFor(sink, { key: `${this.o.prefix}/${name}/${batch}`, events });
    for (let i = job.data.sent ?? 0; i < messages.length; i++) {
      const message = messages[i];
      if (message) await send(sink, message);
      await job.updateData({ ...job.data, sent: i + 1 });
    }
    await this.o.redis.del(list);
    if (events.length > 0) this.o.onDelivery?.({ sink: name, result: 'delivered', events: events.length });
    return events.length === 0 ? 'empty' : 'delivered';
  }

  /** Resolves when every publish started so far is in Redis. */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  queues(): Queue[] {
    return [this.queue];
  }

  workers(): Worker[] {
    return this.worker ? [this.worker] : [];
  }

  async close(force = false): Promise<void> {
    await this.flush();
    await this.worker?.close(force);
    await this.queue.close();
  }
}
