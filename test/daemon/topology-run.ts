// The scenario the Sentinel and Cluster tests run on their own servers (test/redis-topologies.ts):
// the embedded cloud and one daemon on the topology's URL, scaling orders-events and clickstream
// from 3 replicas to 7 in a peak 10 to 30 minutes after t0, ticked by hand on a clock of its own.
import { startCloud } from '../../src/cloud/index.js';
import { createDaemon, DaemonEmitter } from '../../src/daemon/index.js';
import { DEMO, FAST_WORKERS, demoPipe, drained, oneOff, policy, testConfig } from './helpers.js';

const MIN = 60_000;

export type TopologyRun = Awaited<ReturnType<typeof startTopologyRun>>;

/** The cloud started and the daemon created (not started: collect its events first). */
export async function startTopologyRun(url: string, prefix: string, t0: number) {
  const cloud = await startCloud({ fixtures: 'config/cloud.yaml', port: 0, rateLimit: false });
  try {
    const base = testConfig({
      baseUrl: cloud.url,
      prefix,
      reconcileMs: 24 * 60 * MIN,
      pipes: [demoPipe('orders-events', 'streams'), demoPipe('clickstream', 'streams')],
      policies: {
        streams: policy('streams', { replicas: 3, replicaCpuMillicores: 500, replicaMemoryGb: 2 }, [
          oneOff('peak', t0 + 10 * MIN, t0 + 30 * MIN, { replicas: 7 }),
        ]),
      },
    });
    // no redisUrl: the config's redis.url, the topology's URL, is what the daemon connects to
    const config = { ...base, redis: { ...base.redis, url } };
    let clock = t0;
    const now = () => clock;
    const emitter = new DaemonEmitter();
    const daemon = createDaemon({
      config,
      prefix,
      now,
      emitter,
      schedule: false,
      watch: false,
      workerOptions: FAST_WORKERS,
    });
    return {
      cloud,
      config,
      daemon,
      emitter,
      now,
      /** The replicas the cloud holds for a demo pipe. */
      replicas: (pipe: keyof typeof DEMO.pipes) => cloud.store.pipe(DEMO.pipes[pipe])?.scaling.replicas,
      /** One tick at `at` (the clock moves there), waiting until every job it started is done. */
      tick: async (at: number) => {
        clock = at;
        await daemon.tick(at);
        await drained([daemon], 30_000);
      },
      stop: async () => {
        await daemon.stop({ timeoutMs: 2_000 });
        await cloud.close();
      },
    };
  } catch (err) {
    await cloud.close();
    throw err;
  }
}
