// The floor of a steady tick: N no-op jobs through a real BullMQ queue on the same Redis, with the
// job options, the Worker options and the concurrency the daemon's evaluate queue uses, enqueued as
// its tick does (tick.ts: batches of TICK_BATCH; queues.ts tickEvaluationOptions: the job id, the
// deduplication per pipe, what is kept; workers.ts WORKER_OPTIONS: BullMQ's metrics, the lock).
// Runs in a fresh process (child.ts) so its peak RSS is its own.
import { Queue, Worker } from 'bullmq';
import { tickEvaluationOptions } from '../src/daemon/lanes/queues.js';
import { TICK_BATCH } from '../src/daemon/runtime/tick.js';
import { WORKER_OPTIONS } from '../src/daemon/runtime/workers.js';
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
    ...WORKER_OPTIONS,
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
    // As the daemon's tick: one job per pipe, in batches of TICK_BATCH.
    const pipes = Array.from({ length: args.n }, (_, i) => `pipe-${i}`);
    const t0 = performance.now();
    for (let i = 0; i < pipes.length; i += TICK_BATCH)
      await queue.addBulk(
        pipes.slice(i, i + TICK_BATCH).map((pipe) => ({
          name: 'evaluate',
          data: { pipe, tickAt },
          opts: tickEvaluationOptions(pipe, tickAt),
        })),
      );
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
