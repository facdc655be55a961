// Counters of what the cloud answered, for tests and the benchmark.
import type { FaultKind } from './faults.js';

/** A 429 of the rate limiter itself (an injected one is a fault): the request it refused. */
export interface LimitedRequest {
  readonly keyId: string;
  /** Epoch ms on the cloud's clock. */
  readonly at: number;
  /** Epoch ms the key's fixed window began (the request that opened it). */
  readonly windowStart: number;
  readonly method: string;
  /** As requested, without its query. */
  readonly path: string;
  /** The cloud's id of the request; the 429 does not carry it, as the platform's does not. */
  readonly requestId: string;
}

/** How many of the latest limiter 429s `limitedRequests` keeps (their count per key is exact). */
export const LIMITED_KEPT = 1_000;

export interface CloudStats {
  /** requests[operation][status] = count; operation `unrouted` for paths the gateway does not route. */
  requests: Record<string, Record<string, number>>;
  /** 429s sent, real and injected. */
  rateLimited: number;
  /** The rate limiter's own 429s (not the injected ones: those are faults.error429), per API key id. */
  limited: Record<string, number>;
  /** The latest of those (at most LIMITED_KEPT), oldest first: which request, when. */
  limitedRequests: LimitedRequest[];
  faults: Partial<Record<FaultKind, number>>;
}

const empty = (): CloudStats => ({ requests: {}, rateLimited: 0, limited: {}, limitedRequests: [], faults: {} });

export class StatsCounter {
  private data: CloudStats = empty();

  request(op: string, status: number): void {
    const byStatus = (this.data.requests[op] ??= {});
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (status === 429) this.data.rateLimited += 1;
  }

  /** A 429 of the rate limiter (counted in rateLimited by request() as well). */
  limited(refused: LimitedRequest): void {
    this.data.limited[refused.keyId] = (this.data.limited[refused.keyId] ?? 0) + 1;
    const kept = this.data.limitedRequests;
    kept.push(refused);
    if (kept.length > LIMITED_KEPT) kept.splice(0, kept.length - LIMITED_KEPT);
  }

  fault(kind: FaultKind): void {
    this.data.faults[kind] = (this.data.faults[kind] ?? 0) + 1;
  }

  snapshot(): CloudStats {
    return structuredClone(this.data);
  }

  reset(): void {
    this.data = empty();
  }
}
