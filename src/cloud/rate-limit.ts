// The platform's rate limit: a fixed window per API key (10 requests per 10 s by default).
import type { RateLimit } from '../api/index.js';

export type { RateLimit };

export interface RateDecision {
  readonly allowed: boolean;
  /** Epoch ms the key's window began. */
  readonly windowStart: number;
  readonly headers: Record<string, string>;
}

export class FixedWindowLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private limit: RateLimit | false,
    private readonly now: () => number,
  ) {}

  set(limit: RateLimit | false): void {
    this.limit = limit;
    this.windows.clear();
  }

  get current(): RateLimit | false {
    return this.limit;
  }

  /** Count one request of this key; null when no limit is configured. */
  take(keyId: string): RateDecision | null {
    const limit = this.limit;
    if (!limit) return null;
    const now = this.now();
    let w = this.windows.get(keyId);
    if (!w || now >= w.start + limit.perMs) {
      w = { start: now, count: 0 };
      this.windows.set(keyId, w);
    }
    w.count += 1;
    return {
      allowed: w.count <= limit.requests,
      windowStart: w.start,
      headers: this.headers(limit, w.start, w.count, now),
    };
  }

  /** The headers of the key's current window, without counting (for injected 429s). */
  peek(keyId: string): Record<string, string> | null {
    const limit = this.limit;
    if (!limit) return null;
    const now = this.now();
    const w = this.windows.get(keyId);
    if (!w || now >= w.start + limit.perMs) return this.headers(limit, now, 0, now);
    return this.headers(limit, w.start, w.count, now);
  }

  private headers(limit: RateLimit, start: number, count: number, now: number): Record<string, string> {
    const resetS = Math.max(0, start + limit.perMs - now) / 1000;
    return {
      'x-ratelimit-limit': String(limit.requests),
      'x-ratelimit-remaining': String(Math.max(0, limit.requests - count)),
      'x-ratelimit-reset': String(Math.round(resetS * 100) / 100),
      'x-ratelimit-policy': `${limit.requests};w=${Math.round(limit.perMs / 10) / 100};comment="fixed window"`,
    };
  }
}
