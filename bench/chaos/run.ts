// `npm run chaos [-- --pipes 200 --boundaries 20 --every 8000 --keys 4 --seed 1 --converge 120000 --redis-keeps-data]`:
// the full chaos scenario (bench/chaos/README.md); prints the summary table, exits 1 when a check failed.
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runChaos } from './chaos.js';
import { FULL_PARAMS, type ChaosParams } from './scenario.js';
import { formatSummary } from './summary.js';

const { values } = parseArgs({
  options: {
    pipes: { type: 'string' },
    boundaries: { type: 'string' },
    every: { type: 'string' },
    keys: { type: 'string' },
    seed: { type: 'string' },
    converge: { type: 'string' },
    'redis-keeps-data': { type: 'boolean' },
  },
});

function int(name: Exclude<keyof typeof values, 'redis-keeps-data'>, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`--${name}: "${raw}" is not a positive integer\n`);
    process.exit(2);
  }
  return n;
}

const params: ChaosParams = {
  ...FULL_PARAMS,
  pipes: int('pipes', FULL_PARAMS.pipes),
  boundaries: int('boundaries', FULL_PARAMS.boundaries),
  boundaryEveryMs: int('every', FULL_PARAMS.boundaryEveryMs),
  keys: int('keys', FULL_PARAMS.keys),
  seed: int('seed', FULL_PARAMS.seed),
  convergeTimeoutMs: int('converge', FULL_PARAMS.convergeTimeoutMs),
  redisKeepsData: values['redis-keeps-data'] ?? FULL_PARAMS.redisKeepsData,
};

let harnessRejections = 0;
process.on('unhandledRejection', (err) => {
  harnessRejections += 1;
  process.stderr.write(`harness: unhandled rejection: ${String(err)}\n`);
});

const stamp = () => new Date().toISOString().slice(11, 19);
const result = await runChaos(params, {
  cwd: fileURLToPath(new URL('../..', import.meta.url)),
  log: (line) => process.stderr.write(`[chaos ${stamp()}] ${line}\n`),
});
process.stdout.write(`\n${formatSummary(result.summary)}`);
if (!result.ok || harnessRejections > 0) {
  process.stdout.write(`\nFAILED:\n- ${result.failures.join('\n- ')}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write('\nOK: every pipe at its desired scaling, no value out of range, no unhandled rejection.\n');
}
