// Status never states as fact a value it does not know, against the embedded cloud with its `late`
// fault (a request held until its client gives up, then carried out: a scaling call the platform
// makes after the daemon's timeout, reads held the same way), the real Redis and one injected clock
// for the daemon and the cloud. The window's scale-down times out and the cloud carries it out; its
// settle read times out too. Status then shows the last read's values with that read's instant and
// names the scale-down as "outcome unknown" since its answer was lost, never its target as the
// pipe's values; once a read shows it, the row matches the platform with nothing on its way.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../src/cloud/index.js';
import type { Daemon } from '../../src/daemon/index.js';
import type { Config } from '../../src/config/types.js';
import { formatStatusText } from '../../src/cli/status-output.js';
import {
  DEMO,
  ORDERS_SCALING,
  cleanupPrefix,
  demoCloud,
  demoPipe,
  drained,
  oneOff,
  policy,
  testConfig,
  testDaemon,
  testRedis,
  until,
} from './helpers.js';

const db = testRedis();
const { redis } = db;
const prefix = db.prefix('status-account');
const T0 = Date.parse('2026-11-23T10:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
/** The fixture's values of orders-events (its baseline) and the window's. */
const BASE = ORDERS_SCALING;
const PEAK = { replicas: 6, replicaCpuMillicores: 1000, replicaMemoryGb: 2 };
const ORDERS = DEMO.pipes['orders-events'];
/** The window ends here: its scale-down is decided at this tick. */
const END = T0 + 20 * MIN;

let cloud: EmbeddedCloud;
let daemon: Daemon;
let clock = T0;

/** orders-events at PEAK in a window 10-20 min after T0; a client timeout of 500 ms. */
function config(): Config {
  const base = testConfig({
    baseUrl: cloud.url,
    prefix,
    pipes: [demoPipe('orders-events', 'peak')],
    policies: { peak: policy('peak', BASE, [oneOff('peak', T0 + 10 * MIN, END, PEAK)]) },
    reconcileMs: 20 * MIN,
  });
  return {
    ...base,
    api: { ...base.api, timeoutMs: 500 },
    evaluate: { ...base.evaluate, actuation: { expectedMs: 0, maxMs: 10 * MIN, minSamples: 20 } },
  };
}

/** Ticks every 30 s from `from` to `to`, each drained. */
async function ticks(from: number, to: number): Promise<void> {
  for (let at = from; at <= to; at += 30 * SEC) {
    clock = at;
    await daemon.tick(at);
    await drained([daemon]);
    await cloud.settled();
  }
}

beforeEach(async () => {
  clock = T0;
  cloud = await demoCloud(() => clock);
  daemon = testDaemon({ config: config(), redis, prefix, now: () => clock });
  await daemon.start();
});
afterEach(async () => {
  await daemon.stop({ timeoutMs: 2_000 });
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});

describe('status under late answers', () => {
  it('a scale-down whose answer timed out is "outcome unknown since T", the values the last read\'s; matched once a read shows it', async () => {
    // the window's scale-up, confirmed: status and the platform agree
    await ticks(T0, END - 30 * SEC);
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(PEAK);
    const before = (await daemon.status()).pipes[0];
    expect(before?.platform.values).toMatchObject(PEAK);
    expect(before?.change).toBeNull();
    const readAt = before?.platform.at ?? NaN;
    expect(readAt).toBeLessThanOrEqual(END - 30 * SEC);

    // every call is now held until the client gives up, then carried out: the scale-down and its
    // settle read both time out; the cloud makes the change all the same
    cloud.setFaults({ scalePipe: { late: { probability: 1, maxMs: 1_500 } } });
    clock = END;
    await daemon.tick(END);
    await until(async () => (await daemon.store.read('orders-events')).failures > 0, 20_000, 'the settle read to fail');
    await cloud.settled();
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(BASE);

    clock = END + 15 * SEC;
    const row = (await daemon.status()).pipes[0];
    // the values are the last read's, with its instant: not the target, not what the cloud now runs
    expect(row?.platform).toEqual({ values: PEAK, state: 'Running', at: readAt });
    expect(row?.applied).toEqual(PEAK);
    // the change on its way is named, with the instant its answer was lost
    expect(row?.change).toMatchObject({
      state: 'outcome_unknown',
      target: { replicas: 2, replicaCpuMillicores: 500 },
      since: END,
      code: 'API_TIMEOUT',
    });
    const narrow = formatStatusText([row!], [], [], { wide: false, width: 100, now: clock });
    expect(narrow).toMatch(/^orders-events\s+6x1000m\/2GB\s+\d+[sm]\s+2x500m\/2GB outcome unknown 15s\s/m);
    const wide = formatStatusText([row!], [], [], { wide: true, width: 100, now: clock });
    expect(wide).toContain(
      `change: replicas=2 replicaCpuMillicores=500 outcome unknown since ${new Date(END).toISOString()} (API_TIMEOUT)`,
    );
    expect(wide).toContain(`(stream, Running), read ${new Date(readAt).toISOString()}`);

    // the calls go through again: the next read shows the change landed; status matches the platform
    cloud.setFaults({});
    await ticks(END + 2 * MIN, END + 4 * MIN);
    const after = (await daemon.status()).pipes[0];
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(BASE);
    expect(after?.platform.values).toMatchObject(BASE);
    expect(after?.platform.at).toBeGreaterThan(END);
    expect(after?.change).toBeNull();
  }, 120_000);
});
