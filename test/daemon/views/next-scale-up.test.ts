// A pipe's next scale-up as status and plan show it (src/daemon/views/next-scale-up.ts): its slot in the
// key's lead plan made from the measured actuation in Redis (the pipe's p95, else its kind's, else
// the configured expectation), when it may be sent and when it is expected at target.
import { describe, expect, it } from 'vitest';
import { generatedPipeIds } from '../../../src/cloud/index.js';
import { StateStore, readPipeStatuses } from '../../../src/daemon/index.js';
import { recordActuation } from '../../../src/daemon/store/actuation-store.js';
import { nextScaleUps, readEstimates } from '../../../src/daemon/views/next-scale-up.js';
import type { PipeConfig } from '../../../src/policy/types.js';
import { oneOff, policy, testConfig, testRedis } from '../helpers.js';

const db = testRedis();
const { redis } = db;
const prefix = db.prefix('next-scale-up');
const store = new StateStore(redis, prefix);

const NOW = Date.parse('2026-11-25T07:10:00Z');
const T = Date.parse('2026-11-25T08:00:00Z');

describe('nextScaleUps', () => {
  it("counts the pipe's p95, else its kind's, else the configured expectation", async () => {
    const pipes: PipeConfig[] = [1, 2, 3].map((i) => ({
      name: `p-${i}`,
      ...generatedPipeIds(i),
      policy: i === 3 ? 'objects' : 'streams',
      key: 'default',
      bounds: {},
    }));
    const base = testConfig({
      baseUrl: 'http://127.0.0.1:1',
      prefix,
      pipes,
      policies: {
        streams: policy('streams', { replicas: 2 }, [oneOff('peak', T, T + 3_600_000, { replicas: 4 })]),
        objects: policy('objects', { concurrency: 2 }, [oneOff('peak', T, T + 3_600_000, { concurrency: 4 })]),
      },
    });
    const config = {
      ...base,
      evaluate: { ...base.evaluate, actuation: { expectedMs: 30_000, maxMs: 600_000, minSamples: 5 } },
    };
    // p-1: five of its own at 2-4 min; p-2 none (its kind's: p-1's); p-3 of another kind, none
    for (const ms of [120_000, 150_000, 180_000, 200_000, 240_000])
      await recordActuation(redis, store.keys, { ...pipes[0]!, kind: 'stream' }, ms);
    await recordActuation(redis, store.keys, { ...pipes[1]!, kind: 'stream' }, 60_000);

    const estimates = await readEstimates(redis, store.keys, config);
    const ups = nextScaleUps(config, NOW, estimates);
    expect(ups.get('p-1')).toMatchObject({
      boundary: T,
      actuationMs: 240_000,
      actuation: { ms: 240_000, source: 'pipe', samples: 5 },
    });
    expect(ups.get('p-2')).toMatchObject({ actuationMs: 240_000, actuation: { source: 'kind', samples: 6 } });
    expect(ups.get('p-3')).toMatchObject({
      actuationMs: 30_000,
      actuation: { ms: undefined, source: 'configured', samples: 0 },
    });
    // at target its actuation after it is sent, confirmed by a read after that, by T
    for (const up of ups.values()) {
      expect(up.atTargetAt! - up.actuationMs).toBeGreaterThan(up.sendFrom);
      expect(up.expectedAt).toBeGreaterThan(up.atTargetAt!);
      expect(up.expectedAt).toBeLessThanOrEqual(T);
    }
    // not read: the configured expectation for every pipe
    const configured = nextScaleUps(config, NOW, null);
    expect(configured.get('p-1')).toMatchObject({ actuationMs: 30_000, actuation: null });
    expect(configured.get('p-1')!.sendFrom).toBeGreaterThan(ups.get('p-1')!.sendFrom);

    // measured: false counts on the configured expectation, whatever was measured
    const off = {
      ...config,
      evaluate: { ...config.evaluate, actuation: { ...config.evaluate.actuation, measured: false } },
    };
    expect(nextScaleUps(off, NOW, await readEstimates(redis, store.keys, off)).get('p-1')).toMatchObject({
      actuationMs: 30_000,
      actuation: { source: 'configured' },
    });

    // status shows the same
    const statuses = await readPipeStatuses(store, config, NOW);
    expect(statuses.find((s) => s.pipe === 'p-1')!.nextScaleUp).toEqual(ups.get('p-1'));
  });
});
