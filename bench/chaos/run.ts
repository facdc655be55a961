// `npm run chaos [-- --pipes 200 --boundaries 20 --every 8000 --keys 4 --seed 1 --converge 120000
//   --replicas 2 --redis-restarts empty --propagation-ms 0 --dump FILE]`: the full chaos scenario
// (bench/chaos/README.md); prints the summary table, exits 1 when a check failed.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { runChaos } from './chaos.js';
import { FULL_PARAMS, REDIS_RESTARTS, type ChaosParams, type RedisRestart } from './scenario.js';
import { formatSummary } from './summary.js';

const { values } = parseArgs({
  options: {
    pipes: { type: 'string' },
    boundaries: { type: 'string' },
    every: { type: 'string' },
    keys: { type: 'string' },
    seed: { type: 'string' },
    converge: { type: 'string' },
    replicas: { type: 'string' },
    'redis-restarts': { type: 'string' },
    // kept from before --redis-restarts: the same as --redis-restarts keep
    'redis-keeps-data': { type: 'boolean' },
    'propagation-ms': { type: 'string' },
    dump: { type: 'string' },
  },
});

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function int(
  name: 'pipes' | 'boundaries' | 'every' | 'keys' | 'seed' | 'converge' | 'replicas' | 'propagation-ms',
  fallback: number,
  min = 1,
): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    fail(`--${name}: "${raw}" is not ${min === 0 ? 'an integer of 0 or more' : 'a positive integer'}`);
  return n;
}

function restarts(): readonly RedisRestart[] {
  const raw = values['redis-restarts'];
  if (raw !== undefined && values['redis-keeps-data']) fail('--redis-keeps-data and --redis-restarts: give one');
  if (values['redis-keeps-data']) return ['keep'];
  if (raw === undefined) return FULL_PARAMS.redisRestarts;
  if (raw.trim() === '' || raw.trim() === 'none') return [];
  return raw.split(',').map((s) => {
    const kind = s.trim();
    if (!(REDIS_RESTARTS as readonly string[]).includes(kind))
      fail(`--redis-restarts: "${kind}" is not one of ${REDIS_RESTARTS.join(', ')} (a list: keep,empty)`);
    return kind as RedisRestart;
  });
}

const params: ChaosParams = {
  ...FULL_PARAMS,
  pipes: int('pipes', FULL_PARAMS.pipes),
  boundaries: int('boundaries', FULL_PARAMS.boundaries),
  boundaryEveryMs: int('every', FULL_PARAMS.boundaryEveryMs),
  keys: int('keys', FULL_PARAMS.keys),
  seed: int('seed', FULL_PARAMS.seed),
  convergeTimeoutMs: int('converge', FULL_PARAMS.convergeTimeoutMs),
  replicas: int('replicas', FULL_PARAMS.replicas),
  redisRestarts: restarts(),
  propagationMs: int('propagation-ms', FULL_PARAMS.propagationMs, 0),
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
if (values.dump !== undefined) {
  await writeFile(values.dump, JSON.stringify({ params, summary: result.summary, ...result.records }));
  process.stderr.write(`[chaos ${stamp()}] records written to ${values.dump}\n`);
}
process.stdout.write(`\n${formatSummary(result.summary)}`);
if (!result.ok || harnessRejections > 0) {
  process.stdout.write(`\nFAILED:\n- ${result.failures.join('\n- ')}\n`);
  process.exitCode = 1;
} else {
  process.stdout.write(
    '\nOK: every pipe at its desired scaling, no value out of range, no unhandled rejection, every check held.\n',
  );
}
