// The floor of a steady tick: N no-op jobs through a real BullMQ queue on the same Redis, with the
// job options and the worker concurrency the daemon's evaluate queue uses. Runs in a fresh
// process (child.ts) so its peak RSS is its own.
import { Queue, Worker } from 'bullmq';
import { benchPrefix, connect, deletePrefix } from './redis.js';

export interface NoopArgs {
  n: number;
  concurrency: number;
  deadlineMs: number;
}

export interface NoopResult {
  ms: number;
  peakRssMb: number;
  deletedKeys: number;
}

export async function runOnce(args: NoopArgs): Promise<NoopResult> {
  const prefix = benchPrefix('noop');
  const redis = connect();
  const queue = new Queue('evaluate', { connection: redis, prefix });
  let done = 0;
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  const worker = new Worker('evaluate', async () => 'none', {
    connection: redis,
    prefix,
    concurrency: args.concurrency,
    autorun: false,
  });
  worker.on('completed', () => {
    if (++done === args.n) resolveAll();
  });
  let ms: number;
  try {
    await worker.waitUntilReady();
    void worker.run();
    const tickAt = Date.now();
    // As the daemon's tick: one addBulk of one job per pipe, jobId <pipe>-<tick s>.
    const jobs = Array.from({ length: args.n }, (_, i) => ({
      name: 'evaluate',
      data: { pipe: `pipe-${i}`, tickAt },
      opts: {
        jobId: `pipe-${i}-${Math.floor(tickAt / 1000)}`,
        removeOnComplete: { age: 3_600 },
        removeOnFail: { age: 3_600 },
        attempts: 3,
      },
    }));
    const t0 = performance.now();
    await queue.addBulk(jobs);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      all,
      new Promise(
        (_, reject) =>
          (timer = setTimeout(
            () => reject(new Error(`${done}/${args.n} no-op jobs done within ${args.deadlineMs} ms`)),
            args.deadlineMs,
          )),
      ),
    ]);
    clearTimeout(timer);
    ms = performance.now() - t0;
  } finally {
    await worker.close(true);
    await queue.close();
  }
  const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const deletedKeys = await deletePrefix(redis, prefix);
  await redis.quit();
  return { ms, peakRssMb, deletedKeys };
}
