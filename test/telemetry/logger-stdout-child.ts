// The child of logger-stdout.test.ts: the daemon's logger on its own stdout. Once told to go (a line
// on stdin), it logs LINES audit-sized lines and says on stderr, as JSON, how long the longest single
// call to the logger took: the time the process was held by that one write.
import { performance } from 'node:perf_hooks';
import { createLogger } from '../../src/telemetry/index.js';

const LINES = Number(process.argv[2] ?? 3_000);
const logger = createLogger({ level: 'info', pretty: false });
const line = {
  pipe: 'orders-events',
  windows: ['business-hours'],
  before: { replicas: 2 },
  after: { replicas: 6 },
  reasons: [{ code: 'window', window: 'business-hours' }],
  requestId: '7d3f2c1a-0000-4000-8000-000000000000',
};

process.stderr.write('ready\n');
process.stdin.once('data', () => {
  let longestMs = 0;
  const start = performance.now();
  for (let i = 0; i < LINES; i++) {
    const t = performance.now();
    logger.info({ ...line, i }, 'scaling applied');
    longestMs = Math.max(longestMs, performance.now() - t);
  }
  process.stderr.write(`${JSON.stringify({ longestMs, totalMs: performance.now() - start })}\n`);
  process.stdin.destroy();
});
