// Window verdicts end to end: three daemon replicas on one Redis against the embedded cloud over
// HTTP, one clock injected into all of them and the cloud, propagation injected per pipe. A pipe
// whose change takes effect at once is at target by the boundary (met); one whose replicas take 3
// minutes, with a 1-minute lead, is late by about 2 minutes; one whose change never takes effect
// (stuck) has missed its window start once the limit has passed; one paused in the config is
// excluded. One verdict per pipe and window start fleet-wide, and none again from a replica
// started afterwards.
import { describe, expect, it } from 'vitest';
import { DaemonEmitter, type Daemon, type DaemonEvents } from '../../../src/daemon/index.js';
import type { Outcome } from '../../../src/history/index.js';
import type { Config } from '../../../src/config/types.js';
import { drained, peakPolicy, streamCloud, testConfig, testDaemon, testRedis } from '../helpers.js';
import { lossFixture } from './state-loss-fixture.js';

const db = testRedis();
const { redis } = db;
const prefix = db.prefix('verdicts');
const T0 = Date.parse('2026-11-23T08:00:00Z');
const MIN = 60_000;
const B = T0 + 10 * MIN; // the window opens
const LIMIT = 5 * MIN; // evaluate.actuation.max: missed after it

describe('window verdicts', () => {
  it('met, late by the propagation less the lead, missed when stuck; once per pipe with three replicas', async () => {
    let clock = T0;
    const names = ['quick', 'slow', 'stuck', 'held'];
    const { cloud, pipes: streams, keys } = await streamCloud(() => clock, names, 'peak', [0, '3m', 'never']);
    // paused in the config: out of the policy's hands, no verdict counted
    const pipes = streams.map((p) => (p.name === 'held' ? { ...p, paused: 'maintenance' } : p));
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      pipes,
      keys,
      policies: { peak: peakPolicy('peak', B, MIN) },
    });
    const config: Config = {
      ...base,
      evaluate: { ...base.evaluate, actuation: { expectedMs: 3 * MIN, maxMs: LIMIT, minSamples: 20 } },
    };
    const verdicts: DaemonEvents['verdict'][] = [];
    const outcomes: Outcome[] = [];
    const start = async (): Promise<Daemon> => {
      const emitter = new DaemonEmitter();
      emitter.on('verdict', (v) => verdicts.push(v));
      emitter.on('outcome', (o) => {
        if (o.outcome === 'verdict') outcomes.push(o);
      });
      const d = testDaemon({ config, redis, prefix, emitter, now: () => clock });
      await d.start();
      return d;
    };
    const daemons = [await start(), await start(), await start()];
    const tickAt = async (at: number, ds: readonly Daemon[] = daemons): Promise<void> => {
      clock = at;
      await Promise.all(ds.map((d) => d.tick(at)));
      await drained(ds);
    };
    try {
      // every 30 s from first contact to past the limit
      for (let at = T0; at <= B + LIMIT + MIN; at += 30_000) await tickAt(at);

      const by = new Map(verdicts.map((v) => [v.pipe, v]));
      expect(verdicts.map((v) => v.pipe).sort()).toEqual(['held', 'quick', 'slow', 'stuck']);
      expect(by.get('held')).toMatchObject({ verdict: 'excluded', reason: 'paused', boundary: B });
      expect(by.get('quick')).toMatchObject({ verdict: 'met', lateMs: 0, boundary: B, windows: ['peak'] });
      expect(by.get('quick')!.confirmedAt).toBeLessThanOrEqual(B);
      // sent a minute ahead, in force 3 minutes after, and read then (the expected propagation is
      // 3 minutes): 2 minutes late
      expect(by.get('slow')).toMatchObject({ verdict: 'late', lateMs: 2 * MIN, confirmedAt: B + 2 * MIN });
      expect(by.get('stuck')).toMatchObject({ verdict: 'missed', reason: 'not_confirmed', target: { replicas: 4 } });
      expect(by.get('stuck')!.at).toBeGreaterThanOrEqual(B + LIMIT);
      // the capacity each start spent: 2 replicas more, early from the confirming read to the
      // boundary, short from the boundary to it (to the limit when it never came); none excluded
      const none = { replicaMinutes: 0, coreMinutes: 0, gbMinutes: 0, slotMinutes: 0 };
      const quickEarly = (2 * (B - by.get('quick')!.confirmedAt!)) / MIN;
      expect(quickEarly).toBeGreaterThan(0);
      expect(by.get('quick')).toMatchObject({ early: { ...none, replicaMinutes: quickEarly }, short: none });
      expect(by.get('slow')).toMatchObject({ early: none, short: { ...none, replicaMinutes: 4 } });
      expect(by.get('stuck')).toMatchObject({ early: none, short: { ...none, replicaMinutes: 10 } });
      expect(by.get('held')!.early).toBeUndefined();

      // the history's and notifications' outcome: a warning when late or missed
      expect(outcomes.map((o) => [o.pipe, o.reason, o.severity ?? 'info']).sort()).toEqual([
        ['held', 'excluded', 'info'],
        ['quick', 'met', 'info'],
        ['slow', 'late', 'warning'],
        ['stuck', 'missed', 'warning'],
      ]);
      // kept with the verdict in the history: its text names the capacity first
      expect(outcomes.find((o) => o.pipe === 'slow')?.message).toMatch(/^late by 2m, 4 replica-min short: /);
      expect(outcomes.find((o) => o.pipe === 'stuck')?.message).toMatch(/^missed, 10 replica-min short: /);
      // status shows each pipe's last verdict
      const { pipes: statuses } = await daemons[0]!.status();
      expect(statuses.map((s) => [s.pipe, s.lastVerdict?.verdict])).toEqual([
        ['quick', 'met'],
        ['slow', 'late'],
        ['stuck', 'missed'],
        ['held', 'excluded'],
      ]);

      // a replica started afterwards (a restart) gives none again
      await Promise.all(daemons.map((d) => d.stop({ timeoutMs: 2_000 })));
      daemons.splice(0, 3, await start());
      for (let at = clock + 30_000; at <= B + LIMIT + 3 * MIN; at += 30_000) await tickAt(at);
      expect(verdicts).toHaveLength(4);
    } finally {
      await Promise.all(daemons.map((d) => d.stop({ timeoutMs: 2_000 })));
      await cloud.close();
    }
  }, 120_000);
});

describe('window verdicts after Redis is brought back with an older state', () => {
  it('a restored due verdict already given is not given again: one verdict per start', async () => {
    const f = await lossFixture(redis, db.prefix('verdicts-rollback'), { start: T0, boundary: B });
    try {
      const given = f.on('verdict');
      const key = f.recordKey;
      // the record as a snapshot of Redis saved before the start's verdict was given holds it
      let saved: Record<string, string> = {};
      let at = T0;
      for (; given.length === 0 && at <= B + LIMIT; at += 30_000) {
        if (at >= B) saved = await redis.hgetall(key);
        await f.tick(at);
      }
      expect(given.map((v) => [v.boundary, v.verdict])).toEqual([[B, 'met']]);
      expect(JSON.parse(saved.verdictDue ?? 'null')).toMatchObject({ boundary: B });
      // Redis is brought back with that snapshot (its marker the same): the start is due again
      await redis.del(key);
      await redis.hset(key, saved);
      for (const end = at + 3 * MIN; at <= end; at += 30_000) await f.tick(at);
      expect(given.map((v) => [v.boundary, v.verdict])).toEqual([[B, 'met']]);
    } finally {
      await f.close();
    }
  });
});
