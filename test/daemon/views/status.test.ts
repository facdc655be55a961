// What status names as the platform's, and when, for an answer that comes late: the daemon's clock
// moved while the answer was on its way (in the model test, another pipe's change stalled past
// api.timeout meanwhile: seed 11, 300 runs, path 231). The row's `platform.at` is the instant the
// read or answer came (docs/cli.md: READ is how long ago it came), never the instant it was sent,
// and its values are what that answer showed, which the platform holds at that instant. Against
// the embedded cloud behind a proxy that holds the answer, the real Redis and one injected clock.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EmbeddedCloud } from '../../../src/cloud/index.js';
import type { Daemon } from '../../../src/daemon/index.js';
import type { Config } from '../../../src/config/types.js';
import { formatStatusText } from '../../../src/cli/status-output.js';
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
} from '../helpers.js';
import { tamperProxy, type TamperProxy } from '../tamper-proxy.js';

const db = testRedis();
const { redis } = db;
const prefix = db.prefix('status-late-answer');
const T0 = Date.parse('2026-11-23T10:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
/** The fixture's values of orders-events (the policy's baseline) and the window's. */
const BASE = ORDERS_SCALING;
const PEAK = { ...BASE, replicas: 6 };
const ORDERS = DEMO.pipes['orders-events'];
/** How far the daemon's clock moves while the proxy holds the answer. */
const HELD = 6 * SEC;
/** A window at PEAK from here. */
const WINDOW = T0 + 10 * MIN;

let cloud: EmbeddedCloud;
let proxy: TamperProxy;
let daemon: Daemon;
let clock = T0;

function config(): Config {
  return testConfig({
    baseUrl: proxy.url,
    prefix,
    pipes: [demoPipe('orders-events', 'peak')],
    policies: { peak: policy('peak', BASE, [oneOff('peak', WINDOW, WINDOW + 20 * MIN, PEAK)]) },
    reconcileMs: 5 * MIN,
  });
}

/** The proxy holds the answer to the next request that `which` picks while the clock moves HELD;
 *  `answeredAt` is the instant the cloud answered it at. */
function holdNext(which: (body: string) => boolean): { answeredAt: number | null } {
  const seen: { answeredAt: number | null } = { answeredAt: null };
  proxy.tamper = async (req, upstream) => {
    const answer = await upstream();
    if (seen.answeredAt === null && req.method === 'PATCH' && which(req.body)) {
      seen.answeredAt = clock;
      clock += HELD;
    }
    return answer;
  };
  return seen;
}

async function tick(at: number): Promise<void> {
  clock = at;
  await daemon.tick(at);
  await drained([daemon]);
}

beforeEach(async () => {
  clock = T0;
  cloud = await demoCloud(() => clock);
  proxy = await tamperProxy(cloud.url);
  daemon = testDaemon({ config: config(), redis, prefix, now: () => clock });
  await daemon.start();
});
afterEach(async () => {
  await daemon.stop({ timeoutMs: 2_000 });
  await proxy.close();
  await cloud.close();
  await cleanupPrefix(redis, prefix);
});

describe('status of an answer that comes late', () => {
  it('a read answered, then held while the clock moved: the values it showed, at the instant it came', async () => {
    await tick(T0 + 30 * SEC);
    expect((await daemon.status()).pipes[0]?.platform).toEqual({ values: BASE, state: 'Running', at: T0 + 30 * SEC });

    // the reconcile read of a later tick: the cloud answers at its instant, the answer comes HELD later
    const read = holdNext((body) => body === '{}');
    await tick(T0 + 6 * MIN);
    expect(read.answeredAt).toBe(T0 + 6 * MIN);
    const came = T0 + 6 * MIN + HELD;
    expect(clock).toBe(came);

    const row = (await daemon.status()).pipes[0];
    // named at the instant it came, with what it showed: what the platform holds at that instant
    expect(row?.platform).toEqual({ values: BASE, state: 'Running', at: came });
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(BASE);
    expect(row?.change).toBeNull();
    const wide = formatStatusText([row!], [], [], { wide: true, width: 100, now: clock });
    expect(wide).toContain(`(stream, Running), read ${new Date(came).toISOString()}`);
  }, 60_000);

  it("a change answered 200, then held while the clock moved: its answer's values, at the instant it came", async () => {
    await tick(T0 + 30 * SEC);
    const change = holdNext((body) => body !== '{}');
    await tick(WINDOW);
    expect(change.answeredAt).toBe(WINDOW);
    const came = WINDOW + HELD;

    const row = (await daemon.status()).pipes[0];
    // the cloud carried it out at once: its answer showed it, and the platform holds it when it came
    expect(row?.platform).toEqual({ values: PEAK, state: 'Running', at: came });
    expect(cloud.store.pipe(ORDERS)?.scaling).toMatchObject(PEAK);
    expect(row?.change).toBeNull();
  }, 60_000);
});
