// Measured actuation in Redis (src/daemon/store/actuation-store.ts): bounded samples per pipe identity
// and per kind, shared by every reader, expiring after their last write; the estimate is the
// pipe's p95 once it has minSamples, else its kind's, else the configured expectation.
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ACTUATION_KEPT_MS,
  ACTUATION_REFRESH_MS,
  ACTUATION_SAMPLES_KEPT,
  ActuationEstimates,
  KIND_SAMPLES_KEPT,
  estimateOf,
  riseFastP95,
  p95,
  readActuation,
  recordActuation,
  type ActuationPipe,
} from '../../../src/daemon/store/actuation-store.js';
import { redisKeys } from '../../../src/daemon/store/redis-keys.js';
import { REDIS_URL, cleanupPrefix, uniquePrefix } from '../helpers.js';

const prefix = uniquePrefix('actuation-store');
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const keys = redisKeys(prefix);

afterAll(async () => {
  await cleanupPrefix(redis, prefix);
  redis.disconnect();
});

const pipe = (n: number, kind: ActuationPipe['kind'] = 'stream'): ActuationPipe => ({
  organizationId: 'Org',
  serviceId: 'svc',
  pipeId: `P-${n}`,
  kind,
});

describe('p95 and estimateOf', () => {
  it('takes the nearest-rank 95th percentile', () => {
    expect(p95([])).toBeUndefined();
    expect(p95([7])).toBe(7);
    expect(p95(Array.from({ length: 20 }, (_, i) => i + 1))).toBe(19);
    expect(p95(Array.from({ length: 100 }, (_, i) => 100 - i))).toBe(95);
  });

  it("is the pipe's p95 from minSamples on, else its kind's, else configured", () => {
    const five = [1, 2, 3, 4, 5];
    expect(estimateOf(five, [], 5)).toEqual({ ms: 5, source: 'pipe', samples: 5 });
    expect(estimateOf(five.slice(0, 4), [10, 20, 30, 40, 50], 5)).toEqual({ ms: 50, source: 'kind', samples: 5 });
    expect(estimateOf([1], [10], 5)).toEqual({ ms: undefined, source: 'configured', samples: 1 });
  });

  // A kind's 500 samples from a cold start whose changes showed in force in their own answer, then
  // a boundary whose changes take 3 s: two of the newest 20 lift the kind's estimate at once.
  it('rises within the newest minSamples samples (newest first), and falls only when most of the kept ones say so', () => {
    const cold = Array.from({ length: 480 }, () => 17);
    const oneSlow = [3_000, ...Array.from({ length: 19 }, () => 17), ...cold];
    const twoSlow = [3_000, 17, 3_000, ...Array.from({ length: 17 }, () => 17), ...cold];
    expect(riseFastP95(oneSlow, 20)).toBe(17);
    expect(riseFastP95(twoSlow, 20)).toBe(3_000);
    expect(estimateOf([], twoSlow, 20)).toEqual({ ms: 3_000, source: 'kind', samples: 500 });
    // faster again: the newest 20 at 100 ms do not bring 30 older ones at 1 s down
    const faster = [...Array.from({ length: 20 }, () => 100), ...Array.from({ length: 30 }, () => 1_000)];
    expect(estimateOf(faster, [], 20)).toEqual({ ms: 1_000, source: 'pipe', samples: 50 });
    expect(riseFastP95(faster.slice(0, 20), 20)).toBe(100);
    expect(riseFastP95([], 20)).toBeUndefined();
    // a minSamples below 20 still looks at the newest 20: one slow change alone lifts nothing
    expect(riseFastP95([3_000, ...cold], 5)).toBe(17);
    expect(riseFastP95([3_000, 3_000, ...cold], 5)).toBe(3_000);
  });
});

describe('recordActuation and readActuation', () => {
  it('keeps the last samples per pipe identity and per kind, each list expiring after its last write', async () => {
    for (let i = 1; i <= ACTUATION_SAMPLES_KEPT + 10; i++) await recordActuation(redis, keys, pipe(1), i * 100);
    const own = await redis.lrange(keys.actuation('org/svc/p-1'), 0, -1);
    expect(own).toHaveLength(ACTUATION_SAMPLES_KEPT);
    expect(own[0]).toBe(String((ACTUATION_SAMPLES_KEPT + 10) * 100)); // newest first
    const ttl = await redis.pttl(keys.actuation('org/svc/p-1'));
    expect(ttl).toBeGreaterThan(ACTUATION_KEPT_MS - 60_000);
    expect(await redis.pttl(keys.actuationKind('stream'))).toBeGreaterThan(ACTUATION_KEPT_MS - 60_000);
    // the pipe's last 50 (1,100 .. 6,000 ms) rising: the p95 of the newest 20 (4,100 .. 6,000)
    const read = await readActuation(redis, keys, [pipe(1)], 20);
    expect(read.get('org/svc/p-1')).toEqual({ ms: 5_900, source: 'pipe', samples: ACTUATION_SAMPLES_KEPT });
  });

  it("gives a pipe with too few samples its kind's p95, and one of another kind the configured value", async () => {
    for (let i = 0; i < 3; i++) await recordActuation(redis, keys, pipe(2), 1_000);
    const read = await readActuation(redis, keys, [pipe(2), pipe(3, 'objectStorage'), pipe(4, null)], 20);
    // the kind's 63 (pipe 1's 60, then three of 1 s): the newest 20's p95, above all 63's (5,700)
    expect(read.get('org/svc/p-2')).toMatchObject({ source: 'kind', ms: 5_900 });
    expect(read.get('org/svc/p-3')).toEqual({ ms: undefined, source: 'configured', samples: 0 });
    expect(read.get('org/svc/p-4')).toEqual({ ms: undefined, source: 'configured', samples: 0 });
  });

  it('bounds the kind list, skips bad latencies and entries', async () => {
    for (let i = 0; i < KIND_SAMPLES_KEPT + 5; i++) await recordActuation(redis, keys, pipe(100 + (i % 7)), 1);
    expect(await redis.llen(keys.actuationKind('stream'))).toBe(KIND_SAMPLES_KEPT);
    await recordActuation(redis, keys, pipe(5), Number.NaN);
    await recordActuation(redis, keys, pipe(5), -1);
    expect(await redis.exists(keys.actuation('org/svc/p-5'))).toBe(0);
    await redis.lpush(keys.actuation('org/svc/p-5'), 'x', '', '2500');
    const read = await readActuation(redis, keys, [pipe(5)], 1);
    expect(read.get('org/svc/p-5')).toEqual({ ms: 2_500, source: 'pipe', samples: 1 });
  });

  it('follows the identity, not the name: a rename keeps the samples', async () => {
    await recordActuation(redis, keys, { ...pipe(6), organizationId: 'ORG' }, 4_000);
    const read = await readActuation(redis, keys, [{ ...pipe(6), kind: 'objectStorage' }], 1);
    expect(read.get('org/svc/p-6')).toEqual({ ms: 4_000, source: 'pipe', samples: 1 });
  });

  it('reads a fleet larger than one script call takes, each pipe its own samples or its kind', async () => {
    const own = redisKeys(`${prefix}:fleet`); // kind lists of its own
    const fleet = Array.from({ length: 4_500 }, (_, i) => pipe(10_000 + i, i % 2 === 0 ? 'stream' : 'objectStorage'));
    for (const i of [0, 2_001, 4_499]) await recordActuation(redis, own, fleet[i]!, 7_000 + i);
    const read = await readActuation(redis, own, fleet, 1);
    expect(read.size).toBe(4_500);
    expect(read.get('org/svc/p-10000')).toEqual({ ms: 7_000, source: 'pipe', samples: 1 });
    expect(read.get('org/svc/p-12001')).toEqual({ ms: 9_001, source: 'pipe', samples: 1 });
    expect(read.get('org/svc/p-14499')).toEqual({ ms: 11_499, source: 'pipe', samples: 1 });
    // the others: their kind's p95 (objectStorage has only the two above)
    expect(read.get('org/svc/p-10001')).toEqual({ ms: 11_499, source: 'kind', samples: 2 });
    expect(read.get('org/svc/p-10002')?.source).toBe('kind');
  });
});

describe('ActuationEstimates', () => {
  it('reads at most every refresh period and bumps its version when an estimate changed', async () => {
    const est = new ActuationEstimates(redis, keys);
    const p = pipe(7, 'objectStorage');
    expect(est.get(p)).toEqual({ ms: undefined, source: 'configured', samples: 0 });
    await est.refresh([p], 1, 0);
    expect(est.version).toBe(0);
    await recordActuation(redis, keys, p, 9_000);
    await est.refresh([p], 1, ACTUATION_REFRESH_MS - 1);
    expect(est.actuationMs(p)).toBeUndefined();
    await est.refresh([p], 1, ACTUATION_REFRESH_MS);
    expect(est.actuationMs(p)).toBe(9_000);
    expect(est.version).toBe(1);
    await est.refresh([p], 1, 0, true);
    expect(est.version).toBe(1);
  });

  it('keeps the last estimates when Redis cannot be read', async () => {
    const broken = new Redis(REDIS_URL, { maxRetriesPerRequest: 0, lazyConnect: true, enableOfflineQueue: false });
    const est = new ActuationEstimates(broken, keys);
    await expect(est.refresh([pipe(1)], 1, 0)).resolves.toBeUndefined();
    expect(est.get(pipe(1)).source).toBe('configured');
    broken.disconnect();
  });
});
