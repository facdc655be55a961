// One lane per API key: its client, its apply queue and Worker, and its request budget (budget.ts),
// which lives in Redis, so it holds for every replica together.
import { Queue, Worker, type Processor, type WorkerOptions } from 'bullmq';
import type { RedisClient } from '../store/redis-connection.js';
import { ApiClient } from '../../api/index.js';
import type { ApiKeyConfig, Config } from '../../config/index.js';
import { KeyBudget } from './budget.js';
import type { KeyLane } from './lane.js';
import { redisKeys } from '../store/redis-keys.js';
import { applyQueueName, chosenBackoff } from './queues.js';

/**
 * The Worker's own limiter no longer paces anything: the key's budget does (spend.ts), paced to
 * the platform's window rather than to a window of BullMQ's whose phase is not the platform's.
 * A limiter must still be set for BullMQ to honor queue.rateLimit() (the budget's wait); its max
 * is never reached.
 */
export function limiterFor(key: ApiKeyConfig): { max: number; duration: number } {
  return { max: 1_000_000, duration: key.rateLimit.perMs };
}

export interface LaneOptions {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly baseUrl: string;
  readonly processor: Processor;
  readonly workerOptions: Partial<WorkerOptions>;
  readonly onWorkerError: (err: Error) => void;
  /** Called with every client made, so telemetry can subscribe to its events. */
  readonly onClient?: ((client: ApiClient, keyName: string) => void) | undefined;
}

/** What every lane takes from the config, at start and again at each reload. */
export interface LaneSettings {
  /** Share of each key's budget reconcile reads may take (default 0.25). */
  readonly readShare?: number;
  /** The API client's timeout per attempt and its answer size limit. */
  readonly timeoutMs: number;
  readonly maxResponseBytes?: number | undefined;
}

interface LaneEntry extends KeyLane {
  readonly worker: Worker;
  readonly secret: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number | undefined;
}

export class Lanes {
  private readonly byQueue = new Map<string, LaneEntry>();
  private readonly byKeyName = new Map<string, LaneEntry>();

  constructor(private readonly opts: LaneOptions) {}

  /**
   * Create lanes for new keys; a key whose name, secret, timeout or answer size limit changed gets a new
   * client (the old one finishes what it has in flight, then closes); a changed rate limit takes
   * effect on the key's budget and its Worker's concurrency at once. Removed keys keep draining.
   */
  sync(keys: Config['api']['keys'], settings: LaneSettings): void {
    const readShare = settings.readShare ?? 0.25;
    this.byKeyName.clear();
    for (const [keyName, key] of Object.entries(keys)) {
      const name = applyQueueName(key.keyId);
      let lane = this.byQueue.get(name);
      // A key renamed in the config keeps its queue (named by keyId) but gets a client of its new
      // name: the client's metrics and the key's checks are labelled with it.
      if (
        lane &&
        (lane.keyName !== keyName ||
          lane.secret !== key.keySecret ||
          lane.timeoutMs !== settings.timeoutMs ||
          lane.maxResponseBytes !== settings.maxResponseBytes)
      ) {
        void lane.client.close();
        lane = {
          ...lane,
          keyName,
          client: this.client(keyName, key, settings),
          secret: key.keySecret,
          timeoutMs: settings.timeoutMs,
          maxResponseBytes: settings.maxResponseBytes,
        };
        this.byQueue.set(name, lane);
      }
      lane ??= this.create(keyName, key, name, settings);
      lane.budget.limit = key.rateLimit;
      lane.budget.readShare = readShare;
      // one request per job: as many at once as the key may send in its window
      if (this.opts.workerOptions.concurrency === undefined && lane.worker.concurrency !== key.rateLimit.requests) {
        lane.worker.concurrency = key.rateLimit.requests;
      }
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

  /** force: end the requests in flight now (each lane has a Pool of its own), for a stop past its grace. */
  async closeClients(opts: { force?: boolean } = {}): Promise<void> {
    await Promise.allSettled([...this.byQueue.values()].map((l) => l.client.close(opts)));
  }

  private client(keyName: string, key: ApiKeyConfig, settings: LaneSettings): ApiClient {
    // retry: false: BullMQ owns retries (attempts, backoff, and the 429 pause of the queue).
    const client = new ApiClient({
      baseUrl: this.opts.baseUrl,
      keyId: key.keyId,
      keySecret: key.keySecret,
      timeoutMs: settings.timeoutMs,
      retry: false,
      ownPool: true,
      maxResponseBytes: settings.maxResponseBytes,
    });
    this.opts.onClient?.(client, keyName);
    return client;
  }

  private create(keyName: string, key: ApiKeyConfig, name: string, settings: LaneSettings): LaneEntry {
    const { redis, prefix } = this.opts;
    const queue = new Queue(name, { connection: redis, prefix });
    queue.on('error', this.opts.onWorkerError);
    const worker = new Worker(name, this.opts.processor, {
      connection: redis,
      prefix,
      concurrency: key.rateLimit.requests,
      limiter: limiterFor(key),
      settings: { backoffStrategy: chosenBackoff },
      ...this.opts.workerOptions,
    });
    worker.on('error', this.opts.onWorkerError);
    const budget = new KeyBudget(redis, redisKeys(prefix).budget(key.keyId), key.rateLimit);
    const lane: LaneEntry = {
      keyName,
      keyId: key.keyId,
      client: this.client(keyName, key, settings),
      queue,
      worker,
      secret: key.keySecret,
      budget,
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
    };
    this.byQueue.set(name, lane);
    return lane;
  }
}
