// One lane per API key: its client, its apply queue, and the Worker whose limiter is the key's
// platform limit. The limiter lives in Redis, so it holds for every replica together.
import { Queue, Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { ApiClient } from '../api/client.js';
import type { ApiKeyConfig, Config } from '../policy/types.js';
import type { KeyLane } from './context.js';
import { applyQueueName } from './queues.js';

/** Our fixed window and the platform's may not start together; a slightly longer one of ours
 *  keeps two bursts from landing in one window of the platform's. */
export function limiterFor(key: ApiKeyConfig): { max: number; duration: number } {
  const { requests, perMs } = key.rateLimit;
  return { max: requests, duration: perMs + Math.max(250, Math.round(perMs * 0.05)) };
}

export interface LaneOptions {
  readonly redis: Redis;
  readonly prefix: string;
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly processor: Processor;
  readonly workerOptions: Partial<WorkerOptions>;
  readonly onWorkerError: (err: Error) => void;
  /** Called with every client made, so telemetry can subscribe to its events. */
  readonly onClient?: ((client: ApiClient, keyName: string) => void) | undefined;
}

interface LaneEntry extends KeyLane {
  readonly worker: Worker;
  readonly secret: string;
}

export class Lanes {
  private readonly byQueue = new Map<string, LaneEntry>();
  private readonly byKeyName = new Map<string, LaneEntry>();

  constructor(private readonly opts: LaneOptions) {}

  /** Create lanes for new keys, swap clients whose secret changed; removed keys keep draining. */
  sync(keys: Config['api']['keys']): void {
    this.byKeyName.clear();
    for (const [keyName, key] of Object.entries(keys)) {
      const name = applyQueueName(key.keyId);
      let lane = this.byQueue.get(name);
      if (lane && lane.secret !== key.keySecret) {
        void lane.client.close();
        lane = { ...lane, client: this.client(keyName, key), secret: key.keySecret };
        this.byQueue.set(name, lane);
      }
      if (!lane) lane = this.create(keyName, key, name);
      this.byKeyName.set(keyName, lane);
    }
  }

  get(keyName: string): KeyLane | undefined {
    return this.byKeyName.get(keyName);
  }

  queues(): Queue[] {
    return [...this.byQueue.values()].map((l) => l.queue);
  }

  workers(): Worker[] {
    return [...this.byQueue.values()].map((l) => l.worker);
  }

  async closeClients(): Promise<void> {
    await Promise.allSettled([...this.byQueue.values()].map((l) => l.client.close()));
  }

  private client(keyName: string, key: ApiKeyConfig): ApiClient {
    // retry: false: BullMQ owns retries (attempts, backoff, and the 429 pause of the queue).
    const client = new ApiClient({
      baseUrl: this.opts.baseUrl, keyId: key.keyId, keySecret: key.keySecret, timeoutMs: this.opts.timeoutMs, retry: false,
    });
    this.opts.onClient?.(client, keyName);
    return client;
  }

  private create(keyName: string, key: ApiKeyConfig, name: string): LaneEntry {
    const { redis, prefix } = this.opts;
    const queue = new Queue(name, { connection: redis, prefix });
    queue.on('error', this.opts.onWorkerError);
    const worker = new Worker(name, this.opts.processor, {
      connection: redis,
      prefix,
      concurrency: key.rateLimit.requests,
      limiter: limiterFor(key),
      ...this.opts.workerOptions,
    });
    worker.on('error', this.opts.onWorkerError);
    const lane: LaneEntry = { keyName, keyId: key.keyId, client: this.client(keyName, key), queue, worker, secret: key.keySecret };
    this.byQueue.set(name, lane);
    return lane;
  }
}
