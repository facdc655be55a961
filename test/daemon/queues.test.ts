import { describe, expect, it } from 'vitest';
import { limiterFor } from '../../src/daemon/lanes.js';
import { applyJobOptions, applyQueueName, evaluateJobId } from '../../src/daemon/queues.js';

describe('queue names, ids and options', () => {
  it('evaluation ids are per pipe and tick second, with no ":" and never all digits', () => {
    const id = evaluateJobId('orders-events', Date.parse('2026-11-23T10:00:00.750Z'));
    expect(id).toBe('orders-events-1795428000');
    expect(evaluateJobId('a:b', 1_000, '-contact')).toBe('a_b-1-contact');
    expect(applyQueueName('key:with/odd chars')).toBe('apply-key_with_odd_chars');
  });

  it('scale-ups go before reads and scale-downs; one pending turn per pipe', () => {
    const up = applyJobOptions('apply', 'p', 'up');
    const read = applyJobOptions('read', 'p', 'none');
    const down = applyJobOptions('apply', 'p', 'down');
    expect(up.priority!).toBeLessThan(read.priority!);
    expect(read.priority!).toBeLessThan(down.priority!);
    expect(up.deduplication).toEqual({ id: 'p', keepLastIfActive: true });
    expect(down.deduplication).toEqual(up.deduplication);
    expect(up.backoff).toMatchObject({ type: 'exponential' });
  });

  it("the limiter is the key's limit with a window a little longer than the platform's", () => {
    expect(limiterFor({ keyId: 'k', keySecret: 's', rateLimit: { requests: 10, perMs: 10_000 } })).toEqual({ max: 10, duration: 10_500 });
  });
});
