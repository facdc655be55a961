// Window verdicts after Redis lost the daemon's state (the prefix's keys deleted while the daemon
// runs, as a Redis restarted empty leaves them), against the embedded cloud over HTTP on one
// injected clock. Each pipe's scale-up goes out a minute before its window; the keys go 10 s
// later. The first-contact reads that rebuild the state count as confirmation: a pipe they showed
// at target before the boundary has met it. A pipe they did not show there (its change still on
// its way, or stuck) gets no verdict (excluded, state_lost), never missed: a Redis restart never
// fires PipescalerWindowStartMissed. A start whose due verdict the loss took is not missed either.
import { describe, expect, it } from 'vitest';
import { DaemonEmitter, type DaemonEvents } from '../../src/daemon/index.js';
import type { Outcome } from '../../src/history/index.js';
import type { Config } from '../../src/config/types.js';
import { Registry, bindDaemonEvents, createMetrics } from '../../src/telemetry/index.js';
import { cleanupPrefix, drained, peakPolicy, streamCloud, testConfig, testDaemon, testRedis } from './helpers.js';

const { redis, prefix: newPrefix } = testRedis();
const T0 = Date.parse('2026-11-23T08:00:00Z');
const MIN = 60_000;
const B = T0 + 10 * MIN; // the window opens
const LIMIT = 5 * MIN; // evaluate.actuation.max

/** A fleet of stream pipes (propagation per pipe) on one daemon, a window at B wanting replicas 4,
 *  a minute's lead; the verdicts, their outcomes and the missed counter as the metrics have it. */
async function fleet(propagation: readonly (number | string)[]) {
  const prefix = newPrefix('verdicts-loss');
  let clock = T0;
  const names = propagation.map((_, i) => `p${i + 1}`);
  const { cloud, pipes, keys, replicas } = await streamCloud(() => clock, names, 'peak', propagation);
  const base = testConfig({ baseUrl: cloud.url, prefix, pipes, keys, policies: { peak: peakPolicy('peak', B, MIN) } });
  const config: Config = {
    ...base,
    evaluate: { ...base.evaluate, actuation: { expectedMs: 3 * MIN, maxMs: LIMIT, minSamples: 20 } },
  };
  const emitter = new DaemonEmitter();
  const verdicts: DaemonEvents['verdict'][] = [];
  const outcomes: Outcome[] = [];
  emitter.on('verdict', (v) => verdicts.push(v));
  emitter.on('outcome', (o) => {
    if (o.outcome === 'verdict') outcomes.push(o);
  });
  const registry = new Registry();
  bindDaemonEvents(emitter, createMetrics(registry, { defaultMetrics: false }));
  const daemon = testDaemon({ config, redis, prefix, emitter, now: () => clock });
  await daemon.start();
  const missed = async (): Promise<number> => {
    let sum = 0;
    for (const line of (await registry.metrics()).split('\n'))
      if (line.startsWith('pipescaler_window_verdicts_total{') && line.includes('verdict="missed"'))
        sum += Number(line.split(' ').at(-1));
    return sum;
  };
  return {
    verdicts,
    outcomes,
    missed,
    daemon,
    replicas,
    setClock: (at: number) => (clock = at),
    tick: async (at: number) => {
      clock = at;
      await daemon.tick(at);
      await drained([daemon]);
    },
    /** Every key of this test's prefix, ours and BullMQ's, as a Redis restarted empty leaves them. */
    wipe: async (at: number) => {
      clock = at;
      await cleanupPrefix(redis, prefix);
    },
    close: async () => {
      await daemon.stop({ timeoutMs: 2_000 });
      await cloud.close();
    },
  };
}

describe('window verdicts after Redis lost the state', () => {
  it('sent before the boundary, keys lost, reads rebuild: met where they showed the target, else excluded as state_lost; none missed', async () => {
    // in force at once; 3 minutes after its send; never
    const f = await fleet([0, '3m', 'never']);
    try {
      for (let at = T0; at <= B - MIN; at += 30_000) await f.tick(at);
      // the lead sent every scale-up at B - 1 min; only the first is in force yet
      expect([0, 1, 2].map((i) => f.replicas(i) === 4)).toEqual([true, false, false]);

      await f.wipe(B - 50_000);
      // the next tick finds the marker gone: scaling held, every pipe read again (first contact)
      for (let at = B - 30_000; at <= B + LIMIT + MIN; at += 30_000) await f.tick(at);

      const by = new Map(f.verdicts.map((v) => [v.pipe, v]));
      expect(f.verdicts.map((v) => v.pipe).sort()).toEqual(['p1', 'p2', 'p3']);
      // read at replicas 4 at B - 30 s by the read that rebuilt its record: met
      expect(by.get('p1')).toMatchObject({ verdict: 'met', lateMs: 0, boundary: B, confirmedAt: B - 30_000 });
      // the reads after the loss did not show them at target by the boundary: what the lost record
      // held (the send, its confirmation schedule) is gone, so no verdict, and not counted as missed
      expect(by.get('p2')).toMatchObject({ verdict: 'excluded', reason: 'state_lost', boundary: B });
      expect(by.get('p3')).toMatchObject({ verdict: 'excluded', reason: 'state_lost', boundary: B });
      expect(f.outcomes.map((o) => [o.pipe, o.reason, o.severity ?? 'info']).sort()).toEqual([
        ['p1', 'met', 'info'],
        ['p2', 'excluded', 'info'],
        ['p3', 'excluded', 'info'],
      ]);
      expect(f.outcomes.find((o) => o.pipe === 'p3')?.message).toContain("Redis lost the daemon's state");
      expect(await f.missed()).toBe(0);
      // status says it too
      const { pipes } = await f.daemon.status();
      expect(pipes.map((s) => [s.pipe, s.lastVerdict?.verdict, s.lastVerdict?.reason])).toEqual([
        ['p1', 'met', undefined],
        ['p2', 'excluded', 'state_lost'],
        ['p3', 'excluded', 'state_lost'],
      ]);
      // the daemon went on scaling: the slow one is at target now
      expect(f.replicas(1)).toBe(4);
    } finally {
      await f.close();
    }
  }, 120_000);

  it('keys lost after the boundary with the verdict still due: never missed', async () => {
    const f = await fleet(['never']);
    try {
      for (let at = T0; at <= B + MIN; at += 30_000) await f.tick(at);
      expect(f.verdicts).toEqual([]);
      await f.wipe(B + MIN + 10_000);
      for (let at = B + MIN + 30_000; at <= B + LIMIT + 2 * MIN; at += 30_000) await f.tick(at);
      expect(f.verdicts.filter((v) => v.verdict === 'missed')).toEqual([]);
      expect(await f.missed()).toBe(0);
    } finally {
      await f.close();
    }
  }, 120_000);
});
