import { describe, expect, it } from 'vitest';
import { LIMITED_KEPT, type LimitedRequest } from '../../src/cloud/index.js';
import { StatsCounter } from '../../src/cloud/stats.js';

const refused = (i: number, keyId = 'k1'): LimitedRequest => ({
  keyId,
  at: 1_000 + i,
  windowStart: 1_000,
  method: 'PATCH',
  path: `/v1/p/${i}`,
  requestId: `r${i}`,
});

describe('StatsCounter: the rate limiter 429s', () => {
  it('counts them per key and keeps each with its request, oldest first', () => {
    const stats = new StatsCounter();
    stats.limited(refused(1));
    stats.limited(refused(2, 'k2'));
    stats.limited(refused(3));
    const s = stats.snapshot();
    expect(s.limited).toEqual({ k1: 2, k2: 1 });
    expect(s.limitedRequests).toEqual([refused(1), refused(2, 'k2'), refused(3)]);
    // a snapshot is a copy
    s.limitedRequests.length = 0;
    expect(stats.snapshot().limitedRequests).toHaveLength(3);
  });

  it(`keeps the latest ${LIMITED_KEPT} while the counts stay exact`, () => {
    const stats = new StatsCounter();
    for (let i = 0; i < LIMITED_KEPT + 5; i++) stats.limited(refused(i));
    const s = stats.snapshot();
    expect(s.limited).toEqual({ k1: LIMITED_KEPT + 5 });
    expect(s.limitedRequests).toHaveLength(LIMITED_KEPT);
    expect(s.limitedRequests[0]).toEqual(refused(5));
    expect(s.limitedRequests.at(-1)).toEqual(refused(LIMITED_KEPT + 4));
  });
});
