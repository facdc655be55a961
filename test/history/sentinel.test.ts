// History behind Redis Sentinel: entries written through the daemon's own connection
// (redis+sentinel://) and replicated before the master is SIGKILLed (no persistence) are all on the
// promoted replica; writes after the failover go on collapsing into the same entries. About 10 s.
import { afterEach, describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/daemon/index.js';
import { HistoryStore, type Outcome } from '../../src/history/index.js';
import { startSentinelGroup, type SentinelGroup } from '../redis-topologies.js';
import { uniquePrefix, until } from '../daemon/helpers.js';
import { requireTool } from '../require-tool.js';

const hasSentinel = requireTool('redis-sentinel', 'redis-sentinel');

let group: SentinelGroup | undefined;

afterEach(async () => {
  await group?.stop();
  group = undefined;
});

const limits = { retentionMs: 42 * 86_400_000, maxEntries: 2_000 };
const T0 = Date.parse('2026-11-23T08:00:00Z');

describe.skipIf(!hasSentinel)('history behind Sentinel', () => {
  it('keeps what was acknowledged and replicated before the master died, and collapses on after it', async () => {
    group = await startSentinelGroup('pshistory');
    const prefix = uniquePrefix('history-sentinel');
    const redis = connectRedis({ url: group.url });
    const store = new HistoryStore(redis, prefix);
    const failed = (pipe: string, i: number): Outcome => ({
      pipe,
      outcome: 'failed',
      at: T0 + i * 30_000,
      reason: 'API_UNAVAILABLE',
    });
    try {
      for (let p = 0; p < 20; p++) {
        await store.append(
          { pipe: `pipe-${p}`, outcome: 'applied', at: T0, reason: 'window', after: { replicas: 6 } },
          limits,
        );
        for (let i = 1; i <= 3; i++) await store.append(failed(`pipe-${p}`, i), limits);
      }
      await group.synced();
      const { promoted } = await group.killMaster();
      await promoted;
      // the connection follows the sentinels to the new master; the same outcome collapses on
      await until(async () => {
        try {
          await store.append(failed('pipe-0', 4), limits);
          return true;
        } catch {
          return false;
        }
      }, 20_000);
      for (let p = 0; p < 20; p++) {
        const { entries } = await store.read(`pipe-${p}`);
        expect(entries.map((e) => [e.outcome, e.count])).toEqual([
          ['failed', p === 0 ? 4 : 3],
          ['applied', 1],
        ]);
      }
    } finally {
      redis.disconnect();
    }
  }, 60_000);
});
