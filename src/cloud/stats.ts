// Counters of what the cloud answered, for tests and the benchmark.
import type { FaultKind } from './faults.js';

export interface CloudStats {
  /** requests[operation][status] = count; operation `unrouted` for paths the gateway does not route. */
  requests: Record<string, Record<string, number>>;
  /** 429s sent, real and injected. */
  rateLimited: number;
  /** The rate limiter's own 429s (not the injected ones: those are faults.error429), per API key id. */
  limited: Record<string, number>;
  faults: Partial<Record<FaultKind, number>>;
}

export class StatsCounter {
  private data: CloudStats = { requests: {}, rateLimited: 0, limited: {}, faults: {} };

  request(op: string, status: number): void {
    const byStatus = (this.data.requests[op] ??= {});
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (status === 429) this.data.rateLimited += 1;
  }

  /** A 429 of the rate limiter for this key (counted in rateLimited by request() as well). */
  limitedKey(keyId: string): void {
    this.data.limited[keyId] = (this.data.limited[keyId] ?? 0) + 1;
  }

  fault(kind: FaultKind): void {
    this.data.faults[kind] = (this.data.faults[kind] ?? 0) + 1;
  }

  snapshot(): CloudStats {
    return structuredClone(this.data);
  }

  reset(): void {
    this.data = { requests: {}, rateLimited: 0, limited: {}, faults: {} };
  }
}
